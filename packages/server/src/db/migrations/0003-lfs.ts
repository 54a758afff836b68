import type { Kysely, Migration } from "kysely";

/**
 * Which Git LFS objects each repository holds. Objects are stored once by
 * content, but a repository may serve only those linked to it, and a link is
 * made only after the bytes were uploaded and verified through that repository.
 */
export const lfs: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("lfs_objects")
      .addColumn("repository_id", "text", (c) =>
        c.notNull().references("repositories.id").onDelete("cascade"),
      )
      .addColumn("oid", "text", (c) => c.notNull())
      .addColumn("size", "bigint", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("lfs_objects_pk", ["repository_id", "oid"])
      .execute();
    await db.schema.createIndex("lfs_objects_oid_idx").on("lfs_objects").column("oid").execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("lfs_objects").execute();
  },
};
