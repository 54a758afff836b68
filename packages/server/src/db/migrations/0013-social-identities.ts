import type { Kysely, Migration } from "kysely";

/**
 * Identities at other providers linked to an account (by the operator's admin
 * CLI until external sign-in exists). An external identity belongs to one
 * account only; `visible` says whether the public profile shows it.
 */
export const socialIdentities: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("social_identities")
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("provider", "text", (c) => c.notNull())
      .addColumn("external_name", "text", (c) => c.notNull())
      .addColumn("visible", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("linked_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("social_identities_pk", ["user_id", "provider"])
      .addUniqueConstraint("social_identities_external_uq", ["provider", "external_name"])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("social_identities").execute();
  },
};
