import type { Kysely, Migration } from "kysely";

/**
 * Xet storage (docs/xet.md): whether a repository takes Xet uploads; the
 * xorbs the CAS received (their chunk tables, so shards are checked and
 * files planned without reading them again), the repositories each was
 * uploaded for, the files shards registered (file hash → SHA-256, size,
 * terms), and the chunks the global deduplication API answers for.
 */
export const xet: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable("repositories")
      .addColumn("xet_enabled", "integer", (c) => c.notNull().defaultTo(1))
      .execute();
    await db.schema
      .createTable("xet_xorbs")
      .addColumn("hash", "text", (c) => c.primaryKey())
      .addColumn("size", "bigint", (c) => c.notNull())
      .addColumn("chunk_count", "integer", (c) => c.notNull())
      .addColumn("unpacked_size", "bigint", (c) => c.notNull())
      .addColumn("chunks", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("xet_xorb_links")
      .addColumn("xorb_hash", "text", (c) => c.notNull().references("xet_xorbs.hash").onDelete("cascade"))
      .addColumn("repository_id", "text", (c) =>
        c.notNull().references("repositories.id").onDelete("cascade"),
      )
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("xet_xorb_links_pk", ["xorb_hash", "repository_id"])
      .execute();
    await db.schema
      .createIndex("xet_xorb_links_repository_idx")
      .on("xet_xorb_links")
      .column("repository_id")
      .execute();
    await db.schema
      .createTable("xet_files")
      .addColumn("file_hash", "text", (c) => c.primaryKey())
      .addColumn("sha256", "text", (c) => c.notNull())
      .addColumn("size", "bigint", (c) => c.notNull())
      .addColumn("terms", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("xet_files_sha256_idx").on("xet_files").column("sha256").execute();
    await db.schema
      .createTable("xet_dedup_chunks")
      .addColumn("chunk_hash", "text", (c) => c.notNull())
      .addColumn("xorb_hash", "text", (c) => c.notNull().references("xet_xorbs.hash").onDelete("cascade"))
      .addPrimaryKeyConstraint("xet_dedup_chunks_pk", ["chunk_hash", "xorb_hash"])
      .execute();
    await db.schema
      .createIndex("xet_dedup_chunks_xorb_idx")
      .on("xet_dedup_chunks")
      .column("xorb_hash")
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("xet_dedup_chunks").execute();
    await db.schema.dropTable("xet_files").execute();
    await db.schema.dropTable("xet_xorb_links").execute();
    await db.schema.dropTable("xet_xorbs").execute();
    await db.schema.alterTable("repositories").dropColumn("xet_enabled").execute();
  },
};
