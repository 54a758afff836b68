import { sql } from "kysely";
import type { DbOrTx } from "../../../db/database.js";
import { isPostgres } from "../../../db/dialect.js";

/**
 * The SQL of a listing's search, on either dialect: which cards hold the
 * words (SQLite's FTS5 table `repo_search` keyed by `repo_keys`, PostgreSQL's
 * `tsvector` column with its GIN index), and which names hold the text (a
 * trigram index on either). Each piece reads an index, never every repository.
 */

/** The words of a search, for full-text search (at most 10; punctuation and operators are not passed on). */
export function searchWords(search: string): string[] {
  return [...new Set(search.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].slice(0, 10);
}

/**
 * Cards beyond this many holding the words are not ranked by relevance: ranking reads every match (45 ms
 * for a word in half of 100,000 cards), so such a search orders its card matches by trending instead.
 */
export const MAX_RANKED_CARDS = 1000;

const ftsQuery = (words: string[]) => words.map((word) => `"${word}"`).join(" ");
const tsQuery = (words: string[]) => sql`to_tsquery('english', ${words.join(" & ")})`;

/** How many cards hold every word, counted no further than `cap`. */
export async function countCards(db: DbOrTx, words: string[], cap: number): Promise<number> {
  const query = isPostgres(db)
    ? sql<{ count: number | string }>`select count(*) as count from (select 1 from repo_search
        where document @@ ${tsQuery(words)} limit ${cap}) matches`
    : sql<{ count: number | string }>`select count(*) as count from (select 1 from repo_search
        where repo_search match ${ftsQuery(words)} limit ${cap})`;
  return Number((await query.execute(db)).rows[0]?.count ?? 0);
}

/**
 * The repositories whose card holds every word, with a rank (lower is more relevant; 0 for all when
 * `ranked` is false, for a listing sorted otherwise, which need not score each card): a CTE's body.
 */
export function rankedCards(db: DbOrTx, words: string[], { ranked = true }: { ranked?: boolean } = {}) {
  if (isPostgres(db)) {
    const rank = ranked ? sql`-ts_rank(document, ${tsQuery(words)})` : sql`0.0`;
    return sql<{ repository_id: string; rank: number }>`(select repository_id,
      ${rank} as rank from repo_search where document @@ ${tsQuery(words)})`;
  }
  const rank = ranked ? sql`bm25(repo_search)` : sql`0.0`;
  return sql<{ repository_id: string; rank: number }>`(select repo_keys.repository_id, matches.rank from (
      select rowid as key, ${rank} as rank from repo_search where repo_search match ${ftsQuery(words)}
    ) matches join repo_keys on repo_keys.key = matches.key)`;
}

/**
 * Whether the listed repository's card holds every word, tested per repository: for a search whose words
 * many cards hold, walked in the listing's order. SQLite tests the repository's key against the set of
 * matching keys, read once from the index.
 */
export function cardHolds(db: DbOrTx, words: string[]) {
  if (isPostgres(db)) {
    return sql<boolean>`exists (select 1 from repo_search where repo_search.repository_id = repositories.id
      and repo_search.document @@ ${tsQuery(words)})`;
  }
  return sql<boolean>`exists (select 1 from repo_keys where repo_keys.repository_id = repositories.id
    and repo_keys.key in (select rowid from repo_search where repo_search match ${ftsQuery(words)}))`;
}

/** `text` as a LIKE pattern's literal part. */
const literal = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The ids of the accounts and organizations whose handle is LIKE `pattern`: a subquery's body. */
const ownersLike = (pattern: string) => sql`select id from users where handle like ${pattern} escape '\\'
  union all select id from organizations where handle like ${pattern} escape '\\'`;

/**
 * Whether the listed repository's owner's handle is LIKE `pattern`, the owners read once for the query: as
 * a list (`in`) on SQLite and an array (`= any`) on PostgreSQL, whose planner then reads the repositories
 * of those owners from the owners' index.
 */
function ownerIn(db: DbOrTx, pattern: string) {
  const owners = ownersLike(pattern);
  return isPostgres(db)
    ? sql<boolean>`repositories.owner_id = any(array(${owners}))`
    : sql<boolean>`repositories.owner_id in (${owners})`;
}

/**
 * Whether the listed repository's id (`owner/name`, both lower-case by their rules) contains `search`
 * (lower-cased): a text with a `/` spans the owner's end and the name's start; one without is in the name
 * or the owner's handle, whose accounts and organizations are looked up once, not joined per repository.
 */
export function idHolds(db: DbOrTx, search: string) {
  const slash = search.indexOf("/");
  if (slash >= 0) {
    const name = `${literal(search.slice(slash + 1))}%`;
    return sql<boolean>`(repositories.name like ${name} escape '\\'
      and ${ownerIn(db, `%${literal(search.slice(0, slash))}`)})`;
  }
  return sql<boolean>`(repositories.name like ${`%${literal(search)}%`} escape '\\'
    or ${ownerIn(db, `%${literal(search)}%`)})`;
}

/**
 * The repositories of a kind whose id may contain `search`, read from indexes: the names' trigrams for a
 * text of three characters or more (PostgreSQL's `pg_trgm` index, SQLite's trigram table), and the
 * owners' repositories. A superset (SQLite's trigram LIKE has no escape, so `_` and `%` match more),
 * which `idHolds` then decides: a CTE's body. Each is named by its id on SQLite and by its row's address
 * (`ctid`) on PostgreSQL, which the listing then reads without looking each id up in the primary key
 * again (6.1 to 3.7 ms for 977 names).
 */
export function idCandidates(db: DbOrTx, type: string, search: string) {
  const key = isPostgres(db) ? sql`repositories.ctid` : sql`repositories.id`;
  const slash = search.indexOf("/");
  const ownerPart = slash >= 0 ? search.slice(0, slash) : search;
  const namePart = slash >= 0 ? search.slice(slash + 1) : search;
  const ownerPattern = slash >= 0 ? `%${literal(ownerPart)}` : `%${literal(ownerPart)}%`;
  // From the owners to their repositories (CROSS JOIN: SQLite would otherwise scan every repository).
  const ofOwners = sql`select ${key} as candidate
    from (${ownersLike(ownerPattern)}) owners
    cross join repositories where repositories.owner_id = owners.id and repositories.type = ${type}`;
  if (slash >= 0) return sql<{ candidate: string }>`(${ofOwners})`;
  const byName =
    isPostgres(db) || namePart.length < 3
      ? sql`select ${key} as candidate from repositories where type = ${type} and name like ${`%${literal(namePart)}%`} escape '\\'`
      : sql`select repo_keys.repository_id as candidate from repo_names join repo_keys on repo_keys.key = repo_names.rowid
          where repo_names.name like ${`%${namePart}%`}`;
  // A repository whose name and owner both hold the text comes twice on PostgreSQL, whose array need not be
  // distinct; SQLite's candidates are looped over, so they are made distinct.
  return isPostgres(db)
    ? sql<{ candidate: string }>`(${byName} union all ${ofOwners})`
    : sql<{ candidate: string }>`(${byName} union ${ofOwners})`;
}
