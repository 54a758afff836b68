import type { Kysely, Migration } from "kysely";

/**
 * Two-factor authentication: an account's TOTP secret (sealed; a pending one
 * until its first code confirms it) with the last time step a code was
 * accepted for, and its one-time recovery codes (SHA-256 digests).
 */
export const mfa: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("user_mfa")
      .addColumn("user_id", "text", (c) => c.primaryKey().references("users.id").onDelete("cascade"))
      .addColumn("totp_secret", "text")
      .addColumn("enrolled_at", "text")
      .addColumn("last_used_step", "integer")
      .addColumn("pending_secret", "text")
      .addColumn("pending_since", "text")
      .execute();
    await db.schema
      .createTable("user_mfa_recovery_codes")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("code_hash", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("used_at", "text")
      .execute();
    await db.schema
      .createIndex("user_mfa_recovery_codes_user")
      .on("user_mfa_recovery_codes")
      .column("user_id")
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("user_mfa_recovery_codes").execute();
    await db.schema.dropTable("user_mfa").execute();
  },
};
