import type { Kysely, Migration } from "kysely";

/** What a repository needs beyond its identity: who owns it (user or organization), its default branch and last change. */
export const repositories: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable("repositories")
      .addColumn("owner_type", "text", (c) => c.notNull().defaultTo("user"))
      .execute();
    await db.schema
      .alterTable("repositories")
      .addColumn("default_branch", "text", (c) => c.notNull().defaultTo("main"))
      .execute();
    await db.schema
      .alterTable("repositories")
      .addColumn("updated_at", "text", (c) => c.notNull().defaultTo(""))
      .execute();
    await db.schema
      .createIndex("repositories_type_name_idx")
      .on("repositories")
      .columns(["type", "name"])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex("repositories_type_name_idx").execute();
    for (const column of ["updated_at", "default_branch", "owner_type"]) {
      await db.schema.alterTable("repositories").dropColumn(column).execute();
    }
  },
};
