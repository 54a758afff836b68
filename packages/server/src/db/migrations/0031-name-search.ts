import { sql, type Kysely, type Migration } from "kysely";
import { isPostgres } from "../dialect.js";

/**
 * Search reads indexes instead of every repository.
 *
 * - Names: a search's substring test reads an index of the names' trigrams (it scanned every repository:
 *   75 ms for 100,000 on SQLite). PostgreSQL: a `pg_trgm` GIN index (a trusted extension, which the
 *   database's owner may create). SQLite: an FTS5 table with the `trigram` tokenizer, kept by triggers.
 *   Both answer `LIKE '%text%'` from the index for a text of three characters or more.
 * - SQLite's full-text tables are keyed by `repo_keys`, a stable integer per repository: a card's row is
 *   found by its key (it was found by reading the whole table), a search can test "does this repository's
 *   card match" against the set of matching keys without reading each match's id, and a deleted
 *   repository's rows go with it (they stayed before, and took places among the matches).
 */
export const nameSearch: Migration = {
  async up(db: Kysely<unknown>) {
    if (isPostgres(db)) {
      await sql`create extension if not exists pg_trgm`.execute(db);
      await sql`create index repositories_name_trgm_idx on repositories using gin (name gin_trgm_ops)`.execute(
        db,
      );
      return;
    }
    const run = (text: string) => sql.raw(text).execute(db);
    await run(`create table repo_keys (
      key integer primary key,
      repository_id text not null unique references repositories (id) on delete cascade)`);
    await run(`insert into repo_keys (repository_id) select id from repositories`);

    await run(
      `create virtual table repo_cards using fts5(card, tokenize = 'porter unicode61 remove_diacritics 2')`,
    );
    await run(`insert into repo_cards (rowid, card)
      select repo_keys.key, repo_search.card from repo_search join repo_keys on repo_keys.repository_id = repo_search.repository_id`);
    await run(`drop table repo_search`);
    await run(`alter table repo_cards rename to repo_search`);

    await run(`create virtual table repo_names using fts5(name, tokenize = 'trigram')`);
    await run(`insert into repo_names (rowid, name)
      select repo_keys.key, repositories.name from repositories join repo_keys on repo_keys.repository_id = repositories.id`);

    const key = (row: "new" | "old") => `(select key from repo_keys where repository_id = ${row}.id)`;
    await run(`create trigger repositories_search_insert after insert on repositories begin
      insert into repo_keys (repository_id) values (new.id);
      insert into repo_names (rowid, name) values (${key("new")}, new.name);
    end`);
    await run(`create trigger repositories_search_rename after update of name on repositories begin
      update repo_names set name = new.name where rowid = ${key("new")};
    end`);
    await run(`create trigger repositories_search_delete before delete on repositories begin
      delete from repo_names where rowid = ${key("old")};
      delete from repo_search where rowid = ${key("old")};
    end`);
  },
  async down(db: Kysely<unknown>) {
    if (isPostgres(db)) {
      await sql`drop index repositories_name_trgm_idx`.execute(db);
      return;
    }
    const run = (text: string) => sql.raw(text).execute(db);
    await run(`drop trigger repositories_search_delete`);
    await run(`drop trigger repositories_search_rename`);
    await run(`drop trigger repositories_search_insert`);
    await run(`drop table repo_names`);
    await run(`create virtual table repo_cards using fts5(
      repository_id unindexed, card, tokenize = 'porter unicode61 remove_diacritics 2')`);
    await run(`insert into repo_cards (repository_id, card)
      select repo_keys.repository_id, repo_search.card from repo_search join repo_keys on repo_keys.key = repo_search.rowid`);
    await run(`drop table repo_search`);
    await run(`alter table repo_cards rename to repo_search`);
    await run(`drop table repo_keys`);
  },
};
