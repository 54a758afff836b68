import type { Kysely, Migration } from "kysely";

/**
 * Who follows whom: accounts follow accounts and organizations, one row per
 * pair, gone with either side. And the SDK a Space was created with
 * (`gradio`, `streamlit`, `docker`, `static`), null for models and datasets.
 */
export const followsAndSpaceSdk: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("repositories").addColumn("space_sdk", "text").execute();
    await db.schema
      .createTable("user_follows")
      .addColumn("follower_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("user_follows_pk", ["follower_id", "user_id"])
      .execute();
    await db.schema.createIndex("user_follows_user_idx").on("user_follows").column("user_id").execute();
    await db.schema
      .createTable("organization_follows")
      .addColumn("follower_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("organization_id", "text", (c) =>
        c.notNull().references("organizations.id").onDelete("cascade"),
      )
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("organization_follows_pk", ["follower_id", "organization_id"])
      .execute();
    await db.schema
      .createIndex("organization_follows_organization_idx")
      .on("organization_follows")
      .column("organization_id")
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("organization_follows").execute();
    await db.schema.dropTable("user_follows").execute();
    await db.schema.alterTable("repositories").dropColumn("space_sdk").execute();
  },
};
