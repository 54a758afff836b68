import type { DbOrTx } from "../../db/database.js";
import { preparedQuery } from "../../db/prepared-query.js";
import type { MembershipRow, OrganizationRow } from "../../db/schema.js";

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

  findByHandle: (db: DbOrTx, handle: string) =>
    db.selectFrom("organizations").selectAll().where("handle", "=", handle).executeTakeFirst(),

  findById: (db: DbOrTx, id: string) =>
    db.selectFrom("organizations").selectAll().where("id", "=", id).executeTakeFirst(),

  upsertMembership: (db: DbOrTx, row: MembershipRow) =>
    db
      .insertInto("memberships")
      .values(row)
      .onConflict((oc) => oc.columns(["organization_id", "user_id"]).doUpdateSet({ role: row.role }))
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
  membershipsOfUser: (db: DbOrTx, userId: string) => membershipsOfUser(db, userId),
};
