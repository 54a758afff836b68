import type { DbOrTx } from "../../../db/database.js";
import { cachedRead } from "../../../db/cached-read.js";
import { preparedQuery } from "../../../db/prepared-query.js";
import type { MembershipRow, OrganizationRow } from "../../../db/schema.js";

const membershipsOfUser = preparedQuery(
  (db: DbOrTx, userId: string) =>
    db
      .selectFrom("memberships")
      .innerJoin("organizations", "organizations.id", "memberships.organization_id")
      .select([
        "organizations.id",
        "organizations.handle",
        "organizations.fullname",
        "organizations.plan",
        "memberships.role",
        "memberships.created_at as joined_at",
      ])
      .where("memberships.user_id", "=", userId)
      .orderBy("organizations.handle"),
  1,
);

/** SQL for organizations and their memberships. */
export const orgsRepository = {
  insert: (db: DbOrTx, row: OrganizationRow) => db.insertInto("organizations").values(row).execute(),

  /** Cached until organizations change: every request to an organization's repositories asks. */
  findByHandle: cachedRead("organization by handle", (db: DbOrTx, handle: string) =>
    db.selectFrom("organizations").selectAll().where("handle", "=", handle).executeTakeFirst(),
  ),

  findById: cachedRead("organization by id", (db: DbOrTx, id: string) =>
    db.selectFrom("organizations").selectAll().where("id", "=", id).executeTakeFirst(),
  ),

  upsertMembership: (db: DbOrTx, row: MembershipRow) =>
    db
      .insertInto("memberships")
      .values(row)
      .onConflict((oc) => oc.columns(["organization_id", "user_id"]).doUpdateSet({ role: row.role }))
      .execute(),

  /** Takes the organization's row lock, so membership changes of one organization happen one at a time. */
  lock: (db: DbOrTx, id: string) =>
    db
      .updateTable("organizations")
      .set((eb) => ({ fullname: eb.ref("fullname") }))
      .where("id", "=", id)
      .execute(),

  members: (db: DbOrTx, organizationId: string) =>
    db
      .selectFrom("memberships")
      .innerJoin("users", "users.id", "memberships.user_id")
      .select([
        "users.handle",
        "users.fullname",
        "memberships.role",
        "memberships.created_at",
        "memberships.user_id",
      ])
      .where("memberships.organization_id", "=", organizationId)
      .orderBy("users.handle")
      .execute(),

  setRole: (db: DbOrTx, organizationId: string, userId: string, role: string) =>
    db
      .updateTable("memberships")
      .set({ role })
      .where("organization_id", "=", organizationId)
      .where("user_id", "=", userId)
      .execute(),

  removeMembership: (db: DbOrTx, organizationId: string, userId: string) =>
    db
      .deleteFrom("memberships")
      .where("organization_id", "=", organizationId)
      .where("user_id", "=", userId)
      .execute(),

  membershipRole: async (db: DbOrTx, organizationId: string, userId: string) =>
    (
      await db
        .selectFrom("memberships")
        .select("role")
        .where("organization_id", "=", organizationId)
        .where("user_id", "=", userId)
        .executeTakeFirst()
    )?.role ?? null,

  /** The organizations a user belongs to, with the user's role, ordered by handle. */
  membershipsOfUser: cachedRead("memberships of user", (db: DbOrTx, userId: string) =>
    membershipsOfUser(db, userId),
  ),

  /** How many public repositories of each kind the organization owns. */
  publicRepoCounts: (db: DbOrTx, organizationId: string) =>
    db
      .selectFrom("repositories")
      .select(["type", (eb) => eb.fn.countAll<string | number>().as("count")])
      .where("owner_id", "=", organizationId)
      .where("private", "=", 0)
      .groupBy("type")
      .execute(),
};
