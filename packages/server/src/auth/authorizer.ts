import { ACCESS_REQUEST_STATUSES, type AccessRequestStatus } from "@hub/api";
import type { Db } from "../db/database.js";
import { gatingRepository } from "../areas/gating/gating.repository.js";
import { orgsRepository } from "../areas/orgs/orgs.repository.js";
import type { Principal } from "./credential.js";
import { ORG_ROLES, decide, type Action, type OrgRole, type Resource } from "./authorize.js";

function organizationOf(resource: Resource): string | null {
  if (resource.type === "organization") return resource.id;
  if ((resource.type === "namespace" || resource.type === "repository") && resource.owner.type === "org") {
    return resource.owner.id;
  }
  return null;
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
  const row = await gatingRepository.find(db, resource.id, principal.userId);
  return ACCESS_REQUEST_STATUSES.find((status) => status === row?.status) ?? null;
}

/**
 * Loads the facts a decision needs (the caller's current membership role and,
 * for downloads of a gated repository, its access request, read fresh on every
 * call so membership changes and review decisions apply at once) and asks
 * `decide`. Throws the HubError of a denial.
 */
export function createAuthorizer({
  db,
  clock,
  reauthWindowSeconds,
}: {
  db: Db;
  clock: () => Date;
  reauthWindowSeconds: number;
}) {
  return async function authorize(
    principal: Principal | null,
    action: Action,
    resource: Resource,
  ): Promise<void> {
    const orgId = organizationOf(resource);
    const role = principal && orgId ? await orgsRepository.membershipRole(db, orgId, principal.userId) : null;
    const membershipRole = ORG_ROLES.find((known) => known === role) ?? null;
    const decision = decide({
      principal,
      action,
      resource,
      membershipRole: membershipRole as OrgRole | null,
      accessRequest: await accessRequestFor(db, principal, action, resource),
      now: clock(),
      reauthWindowSeconds,
    });
    if (!decision.allowed) throw decision.error;
  };
}

export type Authorize = ReturnType<typeof createAuthorizer>;
