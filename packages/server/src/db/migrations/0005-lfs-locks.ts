import type { Kysely, Migration } from "kysely";

/** Git LFS file locks: one per path and repository, held by the account that took it. */
export const lfsLocks: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("lfs_locks")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("repository_id", "text", (c) =>
        c.notNull().references("repositories.id").onDelete("cascade"),
      )
      .addColumn("path", "text", (c) => c.notNull())
      .addColumn("owner_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("created_at", "text", (c) => c.notNull())
      .addUniqueConstraint("lfs_locks_repository_path_uq", ["repository_id", "path"])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("lfs_locks").execute();
  },
};
