import { sql } from "kysely";
import type { DbOrTx } from "../../../db/database.js";
import { isPostgres } from "../../../db/dialect.js";
import type { RepoMetadataRow } from "../../../db/schema.js";

/** SQL for what discovery indexes of each repository: its metadata, tags, base models, card text and counts. */
export const metadataRepository = {
  /** Replaces everything indexed of a repository, in the caller's transaction. */
  async replace(
    db: DbOrTx,
    row: RepoMetadataRow,
    tags: string[],
    baseModels: Array<{ base_model: string; relation: string }>,
    cardText: string,
  ): Promise<void> {
    const id = row.repository_id;
    await db.deleteFrom("repo_metadata").where("repository_id", "=", id).execute();
    await db.insertInto("repo_metadata").values(row).execute();
    await db.deleteFrom("repo_tags").where("repository_id", "=", id).execute();
    if (tags.length > 0) {
      await db
        .insertInto("repo_tags")
        .values(tags.map((tag) => ({ repository_id: id, tag })))
        .execute();
    }
    await db.deleteFrom("repo_base_models").where("repository_id", "=", id).execute();
    if (baseModels.length > 0) {
      await db
        .insertInto("repo_base_models")
        .values(baseModels.map((base) => ({ repository_id: id, ...base })))
        .execute();
    }
    if (isPostgres(db)) {
      await sql`delete from repo_search where repository_id = ${id}`.execute(db);
      if (cardText.trim() !== "") {
        await sql`insert into repo_search (repository_id, document)
          values (${id}, to_tsvector('english', ${cardText}))`.execute(db);
      }
      return;
    }
    // SQLite's card table is keyed by the repository's key in repo_keys (migration 0031).
    const key = sql`(select key from repo_keys where repository_id = ${id})`;
    await sql`delete from repo_search where rowid = ${key}`.execute(db);
    if (cardText.trim() !== "") {
      await sql`insert into repo_search (rowid, card) values (${key}, ${cardText})`.execute(db);
    }
  },

  /** Makes sure a repository has its counts row (new repositories, and any made before counting). */
  ensureStats: (db: DbOrTx, repositoryId: string) =>
    db
      .insertInto("repo_stats")
      .values({
        repository_id: repositoryId,
        likes: 0,
        downloads: 0,
        downloads_all_time: 0,
        trending_score: 0,
      })
      .onConflict((oc) => oc.column("repository_id").doNothing())
      .execute(),

  /** The metadata, tags, counts and base models of several repositories; only the tables `needs` names are read. */
  async ofRepositories(
    db: DbOrTx,
    ids: string[],
    needs: { metadata: boolean; tags: boolean; stats: boolean; baseModels: boolean },
  ) {
    const read = <T>(needed: boolean, query: () => Promise<T[]>) =>
      needed && ids.length > 0 ? query() : Promise.resolve([] as T[]);
    const [metadata, tags, stats, baseModels] = await Promise.all([
      read(needs.metadata, () =>
        db.selectFrom("repo_metadata").selectAll().where("repository_id", "in", ids).execute(),
      ),
      read(needs.tags, () =>
        db.selectFrom("repo_tags").selectAll().where("repository_id", "in", ids).execute(),
      ),
      read(needs.stats, () =>
        db.selectFrom("repo_stats").selectAll().where("repository_id", "in", ids).execute(),
      ),
      read(needs.baseModels, () =>
        db.selectFrom("repo_base_models").selectAll().where("repository_id", "in", ids).execute(),
      ),
    ]);
    return { metadata, tags, stats, baseModels };
  },

  /** How many repositories name this one (`owner/name`) as their base model. */
  /** How many repositories name each of `fullNames` as a base model, by lower-cased name, in one query. */
  async childrenCounts(db: DbOrTx, fullNames: string[]): Promise<Map<string, number>> {
    if (fullNames.length === 0) return new Map();
    const rows = await db
      .selectFrom("repo_base_models")
      .select(["base_model", (eb) => eb.fn.countAll<number | string>().as("count")])
      .where(
        "base_model",
        "in",
        fullNames.map((name) => name.toLowerCase()),
      )
      .groupBy("base_model")
      .execute();
    return new Map(rows.map((row) => [row.base_model, Number(row.count)]));
  },

  /** Repositories whose metadata is missing or older than their last change, oldest first. */
  unindexed: (db: DbOrTx, limit: number) =>
    db
      .selectFrom("repositories")
      .leftJoin("repo_metadata", "repo_metadata.repository_id", "repositories.id")
      .select("repositories.id")
      .where("repo_metadata.repository_id", "is", null)
      .orderBy("repositories.created_at")
      .limit(limit)
      .execute(),
};
