import { decide, orgRoleOf, type Action, type Resource } from "../../auth/authorize.js";
import type { Principal } from "../../auth/credential.js";
import { ssoStanding } from "../../auth/sso-standing.js";
import type { DbOrTx } from "../../db/database.js";
import { orgsRepository } from "../organizations/orgs/orgs.repository.js";
import { ssoRepository } from "../organizations/sso/sso.repository.js";

/** What one viewer may see, decided row by row without a query per row. */
export interface ViewerAccess {
  /** The account and the organizations it belongs to: the owners whose private things it may possibly see. */
  ownerIds: string[];
  /** Whether `decide()` allows the viewer the action on the resource. */
  may(action: Action, resource: Resource): boolean;
}

function ownerOrganization(resource: Resource): string | null {
  if (resource.type === "organization") return resource.id;
  if (
    (resource.type === "repository" || resource.type === "collection" || resource.type === "namespace") &&
    resource.owner.type === "org"
  )
    return resource.owner.id;
  return null;
}

/**
 * Loads the viewer's organization roles and single sign-on standings once, so a
 * listing (a collection's items, an account's likes) can ask the one
 * authorization decision of every row it shows.
 */
export async function viewerAccess(
  db: DbOrTx,
  principal: Principal | null,
  now: Date,
  publicUrl: string,
): Promise<ViewerAccess> {
  const [memberships, ssoRequired] = principal
    ? await Promise.all([
        orgsRepository.membershipsOfUser(db, principal.userId),
        ssoRepository.requiredOfUser(db, principal.userId),
      ])
    : [[], []];
  const roles = new Map(memberships.map((m) => [m.id, m.role]));
  const sso = new Map(ssoRequired.map((org) => [org.id, ssoStanding(org, org.handle, now, publicUrl)]));
  return {
    ownerIds: principal ? [principal.userId, ...roles.keys()] : [],
    may(action, resource) {
      const org = ownerOrganization(resource);
      return decide({
        principal,
        action,
        resource,
        membershipRole: org ? orgRoleOf(roles.get(org)) : null,
        sso: org ? (sso.get(org) ?? null) : null,
        now,
        reauthWindowSeconds: 0,
      }).allowed;
    },
  };
}
