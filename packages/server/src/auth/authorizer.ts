import type { AccessRequestStatus } from "@hub/api";
import type { Db, DbOrTx } from "../db/database.js";
import { decisionFactsRepository } from "./decision-facts.repository.js";
import { ssoStanding } from "./sso-standing.js";
import type { Principal } from "./credential.js";
import {
  decide,
  orgRoleOf,
  type Action,
  type OrgRole,
  type Resource,
  type SsoStanding,
} from "./authorize.js";

function organizationOf(resource: Resource): { id: string; handle: string } | null {
  if (resource.type === "organization") return resource;
  if (
    (resource.type === "namespace" || resource.type === "repository" || resource.type === "collection") &&
    resource.owner.type === "org"
  ) {
    return resource.owner;
  }
  return null;
}

/** What a decision knows of the caller in the resource's organization. */
export interface OrganizationFacts {
  membershipRole: OrgRole | null;
  sso: SsoStanding | null;
}

/**
 * The account's current membership role in the organization that owns (or
 * is) the resource and its SSO standing there, read fresh in one query so
 * membership and sign-in changes apply at once.
 */
export async function organizationFacts(
  db: DbOrTx,
  userId: string | null,
  resource: Resource,
  now: Date,
  publicUrl: string,
): Promise<OrganizationFacts> {
  const org = organizationOf(resource);
  const stored = userId && org ? await decisionFactsRepository.memberStanding(db, org.id, userId) : undefined;
  if (!stored || !org) return { membershipRole: null, sso: null };
  return {
    membershipRole: orgRoleOf(stored.role),
    sso: ssoStanding(stored, org.handle, now, publicUrl),
  };
}

/** The caller's access request, when a download of a gated repository depends on it. */
async function accessRequestFor(
  db: Db,
  principal: Principal | null,
  action: Action,
  resource: Resource,
): Promise<AccessRequestStatus | null> {
  if (!principal || action !== "repo:download" || resource.type !== "repository" || !resource.gated)
    return null;
  return (await decisionFactsRepository.accessRequestStatus(db, resource.id, principal.userId)) ?? null;
}

/**
 * Loads the facts a decision needs (`organizationFacts` and, for downloads of
 * a gated repository, the caller's access request, read fresh so review
 * decisions apply at once) and asks `decide`. Throws the HubError of a denial.
 */
export function createAuthorizer({
  db,
  clock,
  reauthWindowSeconds,
  publicUrl,
}: {
  db: Db;
  clock: () => Date;
  reauthWindowSeconds: number;
  publicUrl: string;
}) {
  return async function authorize(
    principal: Principal | null,
    action: Action,
    resource: Resource,
  ): Promise<void> {
    const now = clock();
    const facts = await organizationFacts(db, principal?.userId ?? null, resource, now, publicUrl);
    const accessRequest = await accessRequestFor(db, principal, action, resource);
    const decision = decide({
      principal,
      action,
      resource,
      ...facts,
      accessRequest,
      now,
      reauthWindowSeconds,
    });
    if (!decision.allowed) throw decision.error;
  };
}

export type Authorize = ReturnType<typeof createAuthorizer>;
