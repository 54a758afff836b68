import type { Db } from "../db/database.js";
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

/**
 * Loads the facts a decision needs (the caller's current membership role, read
 * fresh on every call so membership changes apply at once) and asks `decide`.
 * Throws the HubError of a denial.
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
      now: clock(),
      reauthWindowSeconds,
    });
    if (!decision.allowed) throw decision.error;
  };
}

export type Authorize = ReturnType<typeof createAuthorizer>;
