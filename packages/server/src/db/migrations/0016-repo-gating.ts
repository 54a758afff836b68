import type { Kysely, Migration } from "kysely";

/**
 * Gated repositories: a repository's gating mode (null when not gated) and
 * the access requests accounts made to gated repositories, one per account
 * and repository, with the writers' decision.
 */
export const repoGating: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("repositories").addColumn("gated", "text").execute();
    await db.schema
      .createTable("repo_access_requests")
      .addColumn("repository_id", "text", (c) =>
        c.notNull().references("repositories.id").onDelete("cascade"),
      )
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("fields", "text")
      .addColumn("requested_at", "text", (c) => c.notNull())
      .addColumn("decided_at", "text")
      .addColumn("rejection_reason", "text")
      .addPrimaryKeyConstraint("repo_access_requests_pk", ["repository_id", "user_id"])
      .execute();
    await db.schema
      .createIndex("repo_access_requests_user_idx")
      .on("repo_access_requests")
      .columns(["user_id", "requested_at"])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("repo_access_requests").execute();
    await db.schema.alterTable("repositories").dropColumn("gated").execute();
  },
};
