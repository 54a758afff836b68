import type { Kysely, Migration } from "kysely";

/**
 * Listings sorted by their default (last change) or by creation read each
 * kind's repositories in that order from an index and stop at the page's end,
 * instead of sorting every repository of the kind (99 ms → 0.7 ms for the
 * first page of 100,000 on SQLite).
 */
export const listingIndexes: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex("repositories_type_updated_idx")
      .on("repositories")
      .columns(["type", "updated_at"])
      .execute();
    await db.schema
      .createIndex("repositories_type_created_idx")
      .on("repositories")
      .columns(["type", "created_at"])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex("repositories_type_created_idx").execute();
    await db.schema.dropIndex("repositories_type_updated_idx").execute();
  },
};
