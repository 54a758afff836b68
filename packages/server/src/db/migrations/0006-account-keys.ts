import type { Kysely, Migration } from "kysely";

/** Public SSH and GPG keys of accounts; a fingerprint belongs to one account only. */
export const accountKeys: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("account_keys")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("title", "text", (c) => c.notNull())
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("algorithm", "text", (c) => c.notNull())
      .addColumn("fingerprint", "text", (c) => c.notNull().unique())
      .addColumn("public_key", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("last_used_at", "text")
      .execute();
    await db.schema.createIndex("account_keys_user_idx").on("account_keys").column("user_id").execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("account_keys").execute();
  },
};
