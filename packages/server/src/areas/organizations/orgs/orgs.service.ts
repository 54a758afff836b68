import { randomUUID } from "node:crypto";
import { followsRepository } from "../../accounts/follows/follows.repository.js";
import { ORG_ROLES, orgRoleOf, type OrgRole } from "../../../auth/authorize.js";
import type { OrgMember, OrgOverview, OrgSummary } from "@hub/api";
import type { Db, DbOrTx } from "../../../db/database.js";
import type { OrganizationRow } from "../../../db/schema.js";
import { badRequest, conflict, notFound } from "../../../errors.js";
import { claimHandle, claimableHandle, isHandle } from "../../accounts/account/handles.js";
import { usersRepository } from "../../accounts/account/users.repository.js";
import { ssoRepository } from "../sso/sso.repository.js";
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
  const known = orgRoleOf(role);
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

  /**
   * Applies a membership change under the organization's lock, refusing one
   * that would leave the organization without an admin.
   */
  async function changeMembership(
    org: OrganizationRow,
    userId: string,
    userHandle: string,
    change: (tx: DbOrTx) => Promise<unknown>,
    losesAdmin: boolean,
  ): Promise<void> {
    await db.transaction().execute(async (tx) => {
      await orgsRepository.lock(tx, org.id);
      const current = await orgsRepository.membershipRole(tx, org.id, userId);
      if (!current) throw notFound(`${userHandle} is not a member of ${org.handle}.`);
      if (losesAdmin && current === "admin") {
        const admins = (await orgsRepository.members(tx, org.id)).filter((m) => m.role === "admin");
        if (admins.length <= 1) {
          throw conflict(
            "last_admin",
            `${userHandle} is the last admin of ${org.handle}; make another member admin first.`,
          );
        }
      }
      await change(tx);
    });
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
      const created = db.transaction().execute(async (tx) => {
        await claimableHandle(tx, input.handle, { now: clock() });
        const now = clock().toISOString();
        const org: OrganizationRow = {
          id: randomUUID(),
          handle: input.handle,
          fullname: input.fullname ?? input.handle,
          plan,
          created_at: now,
        };
        await orgsRepository.insert(tx, org);
        await claimHandle(tx, org.handle, org.id);
        await orgsRepository.upsertMembership(tx, {
          organization_id: org.id,
          user_id: owner.id,
          role: "admin",
          created_at: now,
        });
        return org;
      });
      try {
        return await created;
      } catch (err) {
        // Two creations of one handle at once: the loser learns the handle is taken.
        if (await orgsRepository.findByHandle(db, input.handle)) {
          throw conflict("handle_taken", `The handle "${input.handle}" is taken; choose another.`, "name");
        }
        throw err;
      }
    },

    /** The organization with this handle, or a 404 that names it. */
    async find(handle: string): Promise<OrganizationRow> {
      const org = isHandle(handle) ? await orgsRepository.findByHandle(db, handle) : undefined;
      if (!org) throw notFound(`No organization is called "${handle}".`);
      return org;
    },

    async summary(org: OrganizationRow): Promise<OrgSummary> {
      const members = await orgsRepository.members(db, org.id);
      return {
        type: "org",
        id: org.id,
        name: org.handle,
        fullname: org.fullname,
        plan: org.plan,
        numMembers: members.length,
        createdAt: org.created_at,
      };
    },

    /** The public overview `huggingface_hub`'s get_organization_overview reads: counts of members and public repositories. */
    async overview(org: OrganizationRow): Promise<OrgOverview> {
      const [members, counts, followers] = await Promise.all([
        orgsRepository.members(db, org.id),
        orgsRepository.publicRepoCounts(db, org.id),
        followsRepository.organizationFollowers(db, org.id),
      ]);
      const count = (type: string) => Number(counts.find((c) => c.type === type)?.count ?? 0);
      return {
        type: "org",
        name: org.handle,
        fullname: org.fullname,
        plan: org.plan,
        numUsers: members.length,
        numModels: count("model"),
        numDatasets: count("dataset"),
        numSpaces: count("space"),
        numFollowers: followers,
        createdAt: org.created_at,
      };
    },

    async members(org: OrganizationRow): Promise<OrgMember[]> {
      return (await orgsRepository.members(db, org.id)).map((m) => ({
        user: m.handle,
        fullname: m.fullname,
        role: parseRole(m.role),
        joinedAt: m.created_at,
      }));
    },

    /** Adds someone who is not a member yet. */
    async invite(org: OrganizationRow, userHandle: string, role: string): Promise<OrgMember> {
      const parsedRole = parseRole(role);
      const user = await requireUser(userHandle);
      if (await orgsRepository.membershipRole(db, org.id, user.id)) {
        throw conflict(
          "already_member",
          `${userHandle} is already a member of ${org.handle}; change their role instead.`,
          "user",
        );
      }
      const joinedAt = clock().toISOString();
      await orgsRepository.upsertMembership(db, {
        organization_id: org.id,
        user_id: user.id,
        role: parsedRole,
        created_at: joinedAt,
      });
      return { user: user.handle, fullname: user.fullname, role: parsedRole, joinedAt };
    },

    /** Changes a member's role; the last admin cannot step down. */
    async changeRole(org: OrganizationRow, userHandle: string, role: string): Promise<void> {
      const parsedRole = parseRole(role);
      const user = await requireUser(userHandle);
      await changeMembership(
        org,
        user.id,
        userHandle,
        (tx) => orgsRepository.setRole(tx, org.id, user.id, parsedRole),
        parsedRole !== "admin",
      );
    },

    /** Removes a member (or lets one leave); the last admin cannot go. */
    async removeMember(org: OrganizationRow, userHandle: string): Promise<void> {
      const user = await requireUser(userHandle);
      await changeMembership(
        org,
        user.id,
        userHandle,
        async (tx) => {
          await orgsRepository.removeMembership(tx, org.id, user.id);
          await ssoRepository.forgetMember(tx, org.id, user.id);
        },
        true,
      );
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
