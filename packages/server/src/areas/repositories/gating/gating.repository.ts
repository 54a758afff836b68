import type { AccessRequestStatus } from "@hub/api";
import type { DbOrTx } from "../../../db/database.js";
import type { RepoAccessRequestRow } from "../../../db/schema.js";

/** What a writer's decision sets on a request. */
export type AccessDecision = Pick<RepoAccessRequestRow, "status" | "decided_at" | "rejection_reason">;

/** SQL for access requests to gated repositories. */
export const gatingRepository = {
  find: (db: DbOrTx, repositoryId: string, userId: string) =>
    db
      .selectFrom("repo_access_requests")
      .selectAll()
      .where("repository_id", "=", repositoryId)
      .where("user_id", "=", userId)
      .executeTakeFirst(),

  /** Records a new request; false when the account already has one (a concurrent ask won). */
  async insert(db: DbOrTx, row: RepoAccessRequestRow): Promise<boolean> {
    const result = await db
      .insertInto("repo_access_requests")
      .values(row)
      .onConflict((oc) => oc.columns(["repository_id", "user_id"]).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  },

  decide: (db: DbOrTx, repositoryId: string, userId: string, decision: AccessDecision) =>
    db
      .updateTable("repo_access_requests")
      .set(decision)
      .where("repository_id", "=", repositoryId)
      .where("user_id", "=", userId)
      .execute(),

  /** Deletes the account's request if it is still pending; true when it did. */
  async withdrawPending(db: DbOrTx, repositoryId: string, userId: string): Promise<boolean> {
    const result = await db
      .deleteFrom("repo_access_requests")
      .where("repository_id", "=", repositoryId)
      .where("user_id", "=", userId)
      .where("status", "=", "pending")
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  },

  /** Accepts every pending request of a repository (it switched to `auto`). */
  acceptPending: (db: DbOrTx, repositoryId: string, at: string) =>
    db
      .updateTable("repo_access_requests")
      .set({ status: "accepted", decided_at: at, rejection_reason: null })
      .where("repository_id", "=", repositoryId)
      .where("status", "=", "pending")
      .execute(),

  /** A page of a repository's requests in one status, oldest first, with the requesters' names. */
  listForRepository: (
    db: DbOrTx,
    repositoryId: string,
    status: AccessRequestStatus,
    offset: number,
    limit: number,
  ) =>
    db
      .selectFrom("repo_access_requests")
      .innerJoin("users", "users.id", "repo_access_requests.user_id")
      .selectAll("repo_access_requests")
      .select(["users.handle", "users.fullname", "users.email"])
      .where("repo_access_requests.repository_id", "=", repositoryId)
      .where("repo_access_requests.status", "=", status)
      .orderBy("repo_access_requests.requested_at")
      .orderBy("users.handle")
      .offset(offset)
      .limit(limit)
      .execute(),

  /** Every request the account made, newest first. */
  listForUser: (db: DbOrTx, userId: string) =>
    db
      .selectFrom("repo_access_requests")
      .selectAll()
      .where("user_id", "=", userId)
      .orderBy("requested_at", "desc")
      .orderBy("repository_id")
      .execute(),
};
