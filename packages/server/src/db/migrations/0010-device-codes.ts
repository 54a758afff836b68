import type { Kysely, Migration } from "kysely";

/**
 * Device sign-ins (RFC 8628): the device code is kept only as its SHA-256
 * digest, the user code as typed on the page (upper case, no dash). The
 * number 0009 belongs to a migration written on another branch.
 */
export const deviceCodes: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("device_codes")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("device_code_hash", "text", (c) => c.notNull().unique())
      .addColumn("user_code", "text", (c) => c.notNull().unique())
      .addColumn("client_id", "text", (c) => c.notNull())
      .addColumn("role", "text")
      .addColumn("scopes", "text")
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("user_id", "text", (c) => c.references("users.id").onDelete("cascade"))
      .addColumn("granted_scopes", "text")
      .addColumn("interval_seconds", "integer", (c) => c.notNull())
      .addColumn("last_polled_at", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("device_codes_expires_idx").on("device_codes").column("expires_at").execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("device_codes").execute();
  },
};
