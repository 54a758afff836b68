import type { Kysely, Migration } from "kysely";

/**
 * Content preferences: the explicit part an account sets (JSON lists), the
 * activity interests are learned from (downloads per repository), and what
 * it asked not to be recommended.
 */
export const contentPreferences: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("content_preferences")
      .addColumn("user_id", "text", (c) => c.primaryKey().references("users.id").onDelete("cascade"))
      .addColumn("hidden_tags", "text", (c) => c.notNull())
      .addColumn("languages", "text", (c) => c.notNull())
      .addColumn("content_filters", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("account_activity")
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("repository_id", "text", (c) =>
        c.notNull().references("repositories.id").onDelete("cascade"),
      )
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("count", "integer", (c) => c.notNull())
      .addColumn("first_at", "text", (c) => c.notNull())
      .addColumn("last_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("account_activity_pk", ["user_id", "repository_id", "kind"])
      .execute();
    await db.schema
      .createTable("recommendation_suppressions")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("value", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addUniqueConstraint("recommendation_suppressions_uq", ["user_id", "kind", "value"])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("recommendation_suppressions").execute();
    await db.schema.dropTable("account_activity").execute();
    await db.schema.dropTable("content_preferences").execute();
  },
};
