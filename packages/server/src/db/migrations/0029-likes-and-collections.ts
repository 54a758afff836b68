import { sql, type Kysely, type Migration } from "kysely";

/**
 * Likes and collections (docs/discovery.md). A like is one account's mark on
 * one repository, gone with either; `repo_stats.likes` (migration 0028) counts
 * them, kept by the writes that add and remove them. A collection belongs to
 * an account or an organization (exactly one of the two columns) and goes with
 * it; its items name a repository, a paper or another collection, and go with
 * what they name. None of these tables is read through the read cache.
 */
export const likesAndCollections: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("repo_likes")
      .addColumn("repository_id", "text", (c) =>
        c.notNull().references("repositories.id").onDelete("cascade"),
      )
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("repo_likes_pk", ["repository_id", "user_id"])
      .execute();
    await db.schema
      .createIndex("repo_likes_user_idx")
      .on("repo_likes")
      .columns(["user_id", "created_at"])
      .execute();

    await db.schema
      .createTable("collections")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("owner_user_id", "text", (c) => c.references("users.id").onDelete("cascade"))
      .addColumn("owner_organization_id", "text", (c) => c.references("organizations.id").onDelete("cascade"))
      .addColumn("title", "text", (c) => c.notNull())
      .addColumn("description", "text")
      .addColumn("private", "integer", (c) => c.notNull())
      .addColumn("theme", "text", (c) => c.notNull())
      .addColumn("position", "integer", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addCheckConstraint(
        "collections_one_owner_ck",
        sql`(owner_user_id is null) <> (owner_organization_id is null)`,
      )
      .execute();
    await db.schema.createIndex("collections_user_idx").on("collections").column("owner_user_id").execute();
    await db.schema
      .createIndex("collections_organization_idx")
      .on("collections")
      .column("owner_organization_id")
      .execute();
    await db.schema.createIndex("collections_updated_idx").on("collections").column("updated_at").execute();
    // One title per owner, whatever its case: two people creating "Picks" at once make one collection.
    await sql`create unique index collections_user_title_uq on collections (owner_user_id, lower(title))`.execute(
      db,
    );
    await sql`create unique index collections_organization_title_uq on collections (owner_organization_id, lower(title))`.execute(
      db,
    );

    await db.schema
      .createTable("collection_items")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("collection_id", "text", (c) => c.notNull().references("collections.id").onDelete("cascade"))
      .addColumn("item_type", "text", (c) => c.notNull())
      .addColumn("repository_id", "text", (c) => c.references("repositories.id").onDelete("cascade"))
      .addColumn("paper_id", "text", (c) => c.references("papers.arxiv_id").onDelete("cascade"))
      .addColumn("item_collection_id", "text", (c) => c.references("collections.id").onDelete("cascade"))
      .addColumn("note", "text")
      .addColumn("position", "integer", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addUniqueConstraint("collection_items_repository_uq", ["collection_id", "repository_id"])
      .addUniqueConstraint("collection_items_paper_uq", ["collection_id", "paper_id"])
      .addUniqueConstraint("collection_items_collection_uq", ["collection_id", "item_collection_id"])
      .addCheckConstraint(
        "collection_items_one_target_ck",
        sql`(case when repository_id is null then 0 else 1 end) + (case when paper_id is null then 0 else 1 end) + (case when item_collection_id is null then 0 else 1 end) = 1`,
      )
      .execute();
    for (const column of ["repository_id", "paper_id", "item_collection_id"]) {
      await db.schema
        .createIndex(`collection_items_${column}_idx`)
        .on("collection_items")
        .column(column)
        .execute();
    }
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("collection_items").execute();
    await db.schema.dropTable("collections").execute();
    await db.schema.dropTable("repo_likes").execute();
  },
};
