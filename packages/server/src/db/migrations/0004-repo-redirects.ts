import type { Kysely, Migration } from "kysely";

/** Old names of moved repositories, so old URLs and git remotes keep working. */
export const repoRedirects: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("repo_redirects")
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("owner_handle", "text", (c) => c.notNull())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("repository_id", "text", (c) =>
        c.notNull().references("repositories.id").onDelete("cascade"),
      )
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("repo_redirects_pk", ["type", "owner_handle", "name"])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("repo_redirects").execute();
  },
};
