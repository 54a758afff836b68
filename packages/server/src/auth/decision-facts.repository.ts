import type { AccessRequestStatus } from "@hub/api";
import type { DbOrTx } from "../db/database.js";
import { cachedRead } from "../db/cached-read.js";
import { preparedQuery } from "../db/prepared-query.js";

/**
 * The SQL behind the facts an authorization decision loads for every request,
 * cached until memberships, SSO or access requests change (in any process).
 */

const memberStanding = preparedQuery(
  (db: DbOrTx, organizationId: string, userId: string) =>
    db
      .selectFrom("memberships")
      .leftJoin("organization_sso", "organization_sso.organization_id", "memberships.organization_id")
      .leftJoin("sso_authorizations", (join) =>
        join
          .onRef("sso_authorizations.organization_id", "=", "memberships.organization_id")
          .onRef("sso_authorizations.user_id", "=", "memberships.user_id"),
      )
      .select(["memberships.role", "organization_sso.required", "sso_authorizations.expires_at"])
      .where("memberships.organization_id", "=", organizationId)
      .where("memberships.user_id", "=", userId),
  2,
);

export const decisionFactsRepository = {
  /**
   * A member's role with the organization's SSO requirement and the member's
   * sign-in expiry, in one query; undefined for a non-member. Run on every
   * authorization of an organization's resource.
   */
  memberStanding: cachedRead(
    "member standing",
    async (db: DbOrTx, organizationId: string, userId: string) =>
      (await memberStanding(db, organizationId, userId))[0],
  ),

  /** The status of the account's access request to a gated repository, or undefined when it has none. */
  accessRequestStatus: cachedRead(
    "access request status",
    async (db: DbOrTx, repositoryId: string, userId: string): Promise<AccessRequestStatus | undefined> =>
      (
        await db
          .selectFrom("repo_access_requests")
          .select("status")
          .where("repository_id", "=", repositoryId)
          .where("user_id", "=", userId)
          .executeTakeFirst()
      )?.status,
  ),
};
