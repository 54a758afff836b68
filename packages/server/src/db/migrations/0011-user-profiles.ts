import type { Kysely, Migration } from "kysely";

/**
 * The editable public profile of an account (one row per account, made on
 * first edit) and the avatar it chose: the SHA-256 of the image file stored by
 * content under `HUB_DATA_DIR/avatars`, and its media type. The display name
 * stays in `users.fullname`, which identity records already read.
 */
export const userProfiles: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("user_profiles")
      .addColumn("user_id", "text", (c) => c.primaryKey().references("users.id").onDelete("cascade"))
      .addColumn("bio", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("website", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("location", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("social", "text", (c) => c.notNull().defaultTo("{}"))
      .addColumn("avatar_sha256", "text")
      .addColumn("avatar_type", "text")
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("user_profiles_avatar_idx")
      .on("user_profiles")
      .column("avatar_sha256")
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("user_profiles").execute();
  },
};
