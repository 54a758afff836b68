import { randomUUID } from "node:crypto";
import { ORG_ROLES, type OrgRole } from "../../auth/authorize.js";
import type { Db } from "../../db/database.js";
import type { OrganizationRow } from "../../db/schema.js";
import { badRequest, notFound } from "../../errors.js";
import { claimableHandle } from "../account/handles.js";
import { usersRepository } from "../account/users.repository.js";
import { orgsRepository } from "./orgs.repository.js";

export const ORG_PLANS = ["free", "team", "enterprise"] as const;
export type OrgPlan = (typeof ORG_PLANS)[number];

export interface CreateOrganizationInput {
  handle: string;
  ownerHandle: string;
  plan?: string;
  fullname?: string;
}

function parseRole(role: string): OrgRole {
  const known = ORG_ROLES.find((r) => r === role);
  if (!known)
    throw badRequest("invalid_role", `Role must be one of ${ORG_ROLES.join(", ")}; got "${role}".`, "role");
  return known;
}

/** Organizations and memberships; the admin CLI uses it now, the organizations API later. */
export function createOrgsService({ db, clock }: { db: Db; clock: () => Date }) {
  async function requireUser(handle: string) {
    const user = await usersRepository.findByHandle(db, handle);
    if (!user) throw notFound(`No user is called "${handle}".`);
    return user;
  }

  return {
    /** Creates an organization whose first member, the owner, is its admin. */
    async createOrganization(input: CreateOrganizationInput): Promise<OrganizationRow> {
      const plan = input.plan ?? "free";
      if (!ORG_PLANS.some((p) => p === plan)) {
        throw badRequest(
          "invalid_plan",
          `Plan must be one of ${ORG_PLANS.join(", ")}; got "${plan}".`,
          "plan",
        );
      }
      const owner = await requireUser(input.ownerHandle);
      return db.transaction().execute(async (tx) => {
        await claimableHandle(tx, input.handle);
        const now = clock().toISOString();
        const org: OrganizationRow = {
          id: randomUUID(),
          handle: input.handle,
          fullname: input.fullname ?? input.handle,
          plan,
          created_at: now,
        };
        await orgsRepository.insert(tx, org);
        await orgsRepository.upsertMembership(tx, {
          organization_id: org.id,
          user_id: owner.id,
          role: "admin",
          created_at: now,
        });
        return org;
      });
    },

    /** Adds a member, or changes the role of one who already is. */
    async addMember(orgHandle: string, userHandle: string, role: string): Promise<void> {
      const parsedRole = parseRole(role);
      const org = await orgsRepository.findByHandle(db, orgHandle);
      if (!org) throw notFound(`No organization is called "${orgHandle}".`);
      const user = await requireUser(userHandle);
      await orgsRepository.upsertMembership(db, {
        organization_id: org.id,
        user_id: user.id,
        role: parsedRole,
        created_at: clock().toISOString(),
      });
    },
  };
}

export type OrgsService = ReturnType<typeof createOrgsService>;
