import { sql, type ColumnDefinitionBuilder, type Kysely, type Migration } from "kysely";
import { isPostgres } from "../dialect.js";

/**
 * Discovery (docs/discovery.md): what each repository's default branch says
 * about itself, indexed at every push or commit to it (the card's front
 * matter, its tags and base models, facts read from its files, its text for
 * full-text search), and the counts people's signals make (likes, downloads,
 * trending). None of these tables is read through the read cache.
 */
/** A column naming a repository, whose rows go with it. */
const repositoryId = (c: ColumnDefinitionBuilder) =>
  c.notNull().references("repositories.id").onDelete("cascade");

export const discovery: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("repo_metadata")
      .addColumn("repository_id", "text", (c) => repositoryId(c).primaryKey())
      .addColumn("revision", "text", (c) => c.notNull())
      .addColumn("card_data", "text")
      .addColumn("card_error", "text")
      .addColumn("pipeline_tag", "text")
      .addColumn("library_name", "text")
      .addColumn("license", "text")
      .addColumn("config", "text")
      .addColumn("safetensors", "text")
      .addColumn("num_parameters", "bigint")
      .addColumn("total_size", "bigint", (c) => c.notNull())
      .addColumn("gguf", "integer", (c) => c.notNull())
      .addColumn("onnx", "integer", (c) => c.notNull())
      .addColumn("indexed_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("repo_tags")
      .addColumn("repository_id", "text", (c) => repositoryId(c))
      .addColumn("tag", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("repo_tags_pk", ["tag", "repository_id"])
      .execute();
    await db.schema.createIndex("repo_tags_repository_idx").on("repo_tags").column("repository_id").execute();
    await db.schema
      .createTable("repo_base_models")
      .addColumn("repository_id", "text", (c) => repositoryId(c))
      .addColumn("base_model", "text", (c) => c.notNull())
      .addColumn("relation", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("repo_base_models_pk", ["base_model", "repository_id"])
      .execute();
    await db.schema
      .createIndex("repo_base_models_repository_idx")
      .on("repo_base_models")
      .column("repository_id")
      .execute();
    await db.schema
      .createTable("repo_stats")
      .addColumn("repository_id", "text", (c) => repositoryId(c).primaryKey())
      .addColumn("likes", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("downloads", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("downloads_all_time", "bigint", (c) => c.notNull().defaultTo(0))
      .addColumn("trending_score", "real", (c) => c.notNull().defaultTo(0))
      .execute();
    for (const column of ["likes", "downloads", "trending_score"]) {
      await db.schema.createIndex(`repo_stats_${column}_idx`).on("repo_stats").column(column).execute();
    }
    await db.schema
      .createTable("repo_downloads")
      .addColumn("repository_id", "text", (c) => repositoryId(c))
      .addColumn("day", "text", (c) => c.notNull())
      .addColumn("count", "integer", (c) => c.notNull())
      .addPrimaryKeyConstraint("repo_downloads_pk", ["repository_id", "day"])
      .execute();
    await db.schema.createIndex("repo_downloads_day_idx").on("repo_downloads").column("day").execute();
    // Every repository has its counts row, so listings sorted by a count join it instead of looking for it.
    await sql`insert into repo_stats (repository_id) select id from repositories`.execute(db);
    if (isPostgres(db)) {
      await db.schema
        .createTable("repo_search")
        .addColumn("repository_id", "text", (c) => repositoryId(c).primaryKey())
        .addColumn("document", sql`tsvector`, (c) => c.notNull())
        .execute();
      await sql`create index repo_search_document_idx on repo_search using gin (document)`.execute(db);
    } else {
      await sql`create virtual table repo_search using fts5(
        repository_id unindexed, card, tokenize = 'porter unicode61 remove_diacritics 2'
      )`.execute(db);
    }
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("repo_search").execute();
    await db.schema.dropTable("repo_downloads").execute();
    await db.schema.dropTable("repo_stats").execute();
    await db.schema.dropTable("repo_base_models").execute();
    await db.schema.dropTable("repo_tags").execute();
    await db.schema.dropTable("repo_metadata").execute();
  },
};
