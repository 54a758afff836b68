import type { Kysely, Migration } from "kysely";

/** Accounts, organizations, memberships, repositories (the part accounts count), tokens and sessions. */
export const foundation: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("users")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("handle", "text", (c) => c.notNull().unique())
      .addColumn("email", "text", (c) => c.notNull().unique())
      .addColumn("email_verified", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("fullname", "text", (c) => c.notNull())
      .addColumn("password_hash", "text")
      .addColumn("is_admin", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("organizations")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("handle", "text", (c) => c.notNull().unique())
      .addColumn("fullname", "text", (c) => c.notNull())
      .addColumn("plan", "text", (c) => c.notNull().defaultTo("free"))
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("memberships")
      .addColumn("organization_id", "text", (c) =>
        c.notNull().references("organizations.id").onDelete("cascade"),
      )
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("role", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("memberships_pk", ["organization_id", "user_id"])
      .execute();
    await db.schema.createIndex("memberships_user_idx").on("memberships").column("user_id").execute();

    await db.schema
      .createTable("repositories")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("owner_id", "text", (c) => c.notNull())
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("private", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("created_at", "text", (c) => c.notNull())
      .addUniqueConstraint("repositories_owner_type_name_uq", ["owner_id", "type", "name"])
      .execute();

    await db.schema
      .createTable("access_tokens")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("secret_hash", "text", (c) => c.notNull().unique())
      .addColumn("token_prefix", "text", (c) => c.notNull())
      .addColumn("role", "text")
      .addColumn("scopes", "text")
      .addColumn("organization_id", "text", (c) => c.references("organizations.id").onDelete("cascade"))
      .addColumn("repositories", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text")
      .addColumn("last_used_at", "text")
      .addColumn("reauthenticated_at", "text")
      .execute();
    await db.schema.createIndex("access_tokens_user_idx").on("access_tokens").column("user_id").execute();

    await db.schema
      .createTable("sessions")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("secret_hash", "text", (c) => c.notNull().unique())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .addColumn("reauthenticated_at", "text")
      .execute();
  },
  async down(db: Kysely<unknown>) {
    for (const table of [
      "sessions",
      "access_tokens",
      "repositories",
      "memberships",
      "organizations",
      "users",
    ]) {
      await db.schema.dropTable(table).execute();
    }
  },
};
