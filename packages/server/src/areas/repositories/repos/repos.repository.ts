import { sql } from "kysely";
import { cachedRead } from "../../../db/cached-read.js";
import type { DbOrTx } from "../../../db/database.js";
import type { RepositoryRow } from "../../../db/schema.js";
import { isPostgres } from "../../../db/dialect.js";
import type { SortKey } from "./listing-query.js";

/** The words of a search, for full-text search (at most 10; punctuation and operators are not passed on). */
export function searchWords(search: string): string[] {
  return [...new Set(search.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].slice(0, 10);
}

/** The most relevant cards a search looks at; a word in more cards than this lists the most relevant ones. */
const MAX_CARD_MATCHES = 1000;

/**
 * Repositories whose card holds every word, with a rank (lower is more relevant) on either dialect; in
 * parentheses, as the body of a common table expression.
 */
function cardMatches(db: DbOrTx, words: string[]) {
  if (isPostgres(db)) {
    const query = words.join(" & ");
    return sql<{
      repository_id: string;
      rank: number;
    }>`(select repository_id, -ts_rank(document, to_tsquery('english', ${query})) as rank
      from repo_search where document @@ to_tsquery('english', ${query})
      order by rank limit ${MAX_CARD_MATCHES})`;
  }
  const query = words.map((word) => `"${word}"`).join(" ");
  return sql<{ repository_id: string; rank: number }>`(select repository_id, bm25(repo_search) as rank
    from repo_search where repo_search match ${query} order by rank limit ${MAX_CARD_MATCHES})`;
}

/** No repositories: the card match of a listing without a search. */
const noMatches = () =>
  sql<{
    repository_id: string;
    rank: number;
  }>`(select repository_id, 0.0 as rank from repo_stats where 1 = 0)`;

/** `text` as a LIKE pattern's literal part. */
const literal = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Whether a repository's id (`owner/name`, both lower-case by their rules) contains `search` (lower-cased):
 * a text with a `/` spans the owner's end and the name's start; one without is in the name or the owner's
 * handle, whose accounts and organizations are looked up once, not joined per repository.
 */
function idMatch(search: string) {
  const slash = search.indexOf("/");
  if (slash >= 0) {
    const owner = `%${literal(search.slice(0, slash))}`;
    const name = `${literal(search.slice(slash + 1))}%`;
    return sql<boolean>`(repositories.name like ${name} escape '\\' and repositories.owner_id in (
      select id from users where handle like ${owner} escape '\\'
      union all select id from organizations where handle like ${owner} escape '\\'))`;
  }
  const pattern = `%${literal(search)}%`;
  return sql<boolean>`(repositories.name like ${pattern} escape '\\' or repositories.owner_id in (
    select id from users where handle like ${pattern} escape '\\'
    union all select id from organizations where handle like ${pattern} escape '\\'))`;
}

/** SQL for repositories and the namespaces (users and organizations) that own them. */
export const reposRepository = {
  insert: (db: DbOrTx, row: RepositoryRow) => db.insertInto("repositories").values(row).execute(),

  /** Cached until repositories change: every request to a repository asks. */
  find: cachedRead("repository", (db: DbOrTx, ownerId: string, type: string, name: string) =>
    db
      .selectFrom("repositories")
      .selectAll()
      .where("owner_id", "=", ownerId)
      .where("type", "=", type)
      .where("name", "=", name)
      .executeTakeFirst(),
  ),

  touch: (db: DbOrTx, id: string, at: string) =>
    db.updateTable("repositories").set({ updated_at: at }).where("id", "=", id).execute(),

  findById: cachedRead("repository by id", (db: DbOrTx, id: string) =>
    db.selectFrom("repositories").selectAll().where("id", "=", id).executeTakeFirst(),
  ),

  /** The handle of a repository's owner, whichever kind of namespace it is. */
  async ownerHandle(db: DbOrTx, ownerType: string, ownerId: string) {
    const table = ownerType === "org" ? "organizations" : "users";
    return (
      (await db.selectFrom(table).select("handle").where("id", "=", ownerId).executeTakeFirst())?.handle ??
      null
    );
  },

  /**
   * A page of repositories of a kind that the caller can possibly see (public,
   * its own, or its organizations'), with their owners' handles, filtered and
   * sorted in the query. A search matches the name, and the card's text by
   * full-text search where the caller may read the card (a gated repository's
   * card only past its gate), ranked by relevance unless a sort is asked for.
   * The caller's credential may narrow this further; the service asks the
   * authorization rules per row.
   */
  listVisible(
    db: DbOrTx,
    query: {
      type: string;
      viewerIds: string[];
      author?: string;
      search?: string;
      tags: string[];
      parameters?: { min?: number; max?: number };
      gated?: boolean;
      /** What the caller's content preferences and suppressions leave out of its listing. */
      personal?: {
        userId: string;
        hiddenTags: string[];
        hideGated: boolean;
        requireLicense: boolean;
        requireCard: boolean;
      };
      sort: SortKey;
      sorted: boolean;
      descending: boolean;
      offset: number;
      limit: number;
    },
  ) {
    const ownerHandle = sql<string>`coalesce(users.handle, organizations.handle)`;
    const fullName = sql<string>`coalesce(users.handle, organizations.handle) || '/' || repositories.name`;
    const words = query.search ? searchWords(query.search) : [];
    // The card's matches are computed once (materialized), then joined by id: as a derived table SQLite
    // would run the full-text query again for every repository.
    let select = db
      .with(
        (cte) => cte("card_match").materialized(),
        () => (words.length > 0 ? cardMatches(db, words) : noMatches()),
      )
      .selectFrom("repositories")
      .leftJoin("users", "users.id", "repositories.owner_id")
      .leftJoin("organizations", "organizations.id", "repositories.owner_id")
      .innerJoin("repo_stats", "repo_stats.repository_id", "repositories.id")
      .leftJoin("repo_metadata", "repo_metadata.repository_id", "repositories.id")
      .leftJoin("card_match", "card_match.repository_id", "repositories.id")
      .selectAll("repositories")
      .select(ownerHandle.as("owner_handle"))
      .where("repositories.type", "=", query.type)
      .where((eb) =>
        query.viewerIds.length > 0
          ? eb.or([eb("repositories.private", "=", 0), eb("repositories.owner_id", "in", query.viewerIds)])
          : eb("repositories.private", "=", 0),
      );
    if (query.author) select = select.where(ownerHandle, "=", query.author);
    if (query.gated !== undefined) {
      select = select.where("repositories.gated", query.gated ? "is not" : "is", null);
    }
    for (const tag of query.tags) {
      select = select.where(
        sql<boolean>`exists (select 1 from repo_tags where repo_tags.repository_id = repositories.id and repo_tags.tag = ${tag})`,
      );
    }
    const personal = query.personal;
    if (personal) {
      for (const tag of personal.hiddenTags) {
        select = select.where(
          sql<boolean>`not exists (select 1 from repo_tags where repo_tags.repository_id = repositories.id and repo_tags.tag = ${tag})`,
        );
      }
      if (personal.hideGated) select = select.where("repositories.gated", "is", null);
      if (personal.requireLicense) select = select.where("repo_metadata.license", "is not", null);
      if (personal.requireCard) select = select.where("repo_metadata.card_data", "is not", null);
      select = select.where(
        sql<boolean>`not exists (select 1 from recommendation_suppressions s where s.user_id = ${personal.userId} and (
          (s.kind = 'repository' and s.value = repositories.id)
          or (s.kind = 'author' and s.value = repositories.owner_id)
          or (s.kind = 'tag' and exists (select 1 from repo_tags where repo_tags.repository_id = repositories.id and repo_tags.tag = s.value))))`,
      );
    }
    if (query.parameters?.min !== undefined) {
      select = select.where("repo_metadata.num_parameters", ">=", query.parameters.min);
    }
    if (query.parameters?.max !== undefined) {
      select = select.where("repo_metadata.num_parameters", "<=", query.parameters.max);
    }
    const search = query.search?.toLowerCase();
    if (search) {
      const nameMatch = idMatch(search);
      // A card's text counts only where the caller may read the card: a gated repository's past its gate.
      const viewer = query.viewerIds[0] ?? null;
      const cardReadable = sql<boolean>`(repositories.gated is null${
        query.viewerIds.length > 0 ? sql` or repositories.owner_id in (${sql.join(query.viewerIds)})` : sql``
      }${
        viewer
          ? sql` or exists (select 1 from repo_access_requests where repo_access_requests.repository_id = repositories.id and repo_access_requests.user_id = ${viewer} and repo_access_requests.status = 'accepted')`
          : sql``
      })`;
      // The card's matches as a set the scan probes (one hashed lookup per repository), not a join it filters.
      select = select.where(
        sql<boolean>`(${nameMatch} or (repositories.id in (select repository_id from card_match) and ${cardReadable}))`,
      );
      if (!query.sorted) {
        // Relevance: names that match first (exact, then containing), then the card's rank.
        select = select
          .orderBy(sql`case when repositories.name = ${search} then 0 when ${nameMatch} then 1 else 2 end`)
          .orderBy(sql`coalesce(card_match.rank, 0)`);
      }
    }
    const direction = query.descending ? sql`desc` : sql`asc`;
    const order =
      query.sort === "full_name"
        ? sql`${fullName} ${direction}`
        : query.sort === "num_parameters" || query.sort === "total_size"
          ? // Repositories without the figure come last either way.
            sql`${sql.ref(`repo_metadata.${query.sort}`)} is null, ${sql.ref(`repo_metadata.${query.sort}`)} ${direction}`
          : query.sort === "likes" || query.sort === "downloads" || query.sort === "trending_score"
            ? sql`${sql.ref(`repo_stats.${query.sort}`)} ${direction}`
            : sql`${sql.ref(`repositories.${query.sort}`)} ${direction}`;
    return select.orderBy(order).orderBy("repositories.id").offset(query.offset).limit(query.limit).execute();
  },

  setPrivate: (db: DbOrTx, id: string, isPrivate: boolean, at: string) =>
    db
      .updateTable("repositories")
      .set({ private: isPrivate ? 1 : 0, updated_at: at })
      .where("id", "=", id)
      .execute(),

  setXetEnabled: (db: DbOrTx, id: string, enabled: boolean, at: string) =>
    db
      .updateTable("repositories")
      .set({ xet_enabled: enabled ? 1 : 0, updated_at: at })
      .where("id", "=", id)
      .execute(),

  setGated: (db: DbOrTx, id: string, mode: string | null, at: string) =>
    db.updateTable("repositories").set({ gated: mode, updated_at: at }).where("id", "=", id).execute(),

  move: (db: DbOrTx, id: string, owner: { type: string; id: string }, name: string, at: string) =>
    db
      .updateTable("repositories")
      .set({ owner_type: owner.type, owner_id: owner.id, name, updated_at: at })
      .where("id", "=", id)
      .execute(),

  /** The repository an old name now points to, if it was moved away from that name. */
  redirectTarget: async (db: DbOrTx, type: string, ownerHandle: string, name: string) =>
    (
      await db
        .selectFrom("repo_redirects")
        .select("repository_id")
        .where("type", "=", type)
        .where("owner_handle", "=", ownerHandle)
        .where("name", "=", name)
        .executeTakeFirst()
    )?.repository_id ?? null,

  /** Records the old name of a moved repository. */
  async addRedirect(
    db: DbOrTx,
    row: { type: string; owner_handle: string; name: string; repository_id: string; created_at: string },
  ) {
    await db
      .insertInto("repo_redirects")
      .values(row)
      .onConflict((oc) =>
        oc
          .columns(["type", "owner_handle", "name"])
          .doUpdateSet({ repository_id: row.repository_id, created_at: row.created_at }),
      )
      .execute();
  },

  /** A name taken by a repository stops redirecting elsewhere. */
  dropRedirect: (db: DbOrTx, type: string, ownerHandle: string, name: string) =>
    db
      .deleteFrom("repo_redirects")
      .where("type", "=", type)
      .where("owner_handle", "=", ownerHandle)
      .where("name", "=", name)
      .execute(),

  delete: (db: DbOrTx, id: string) => db.deleteFrom("repositories").where("id", "=", id).execute(),

  /** The user or organization a handle names; cached until accounts or organizations change. */
  findOwner: cachedRead("owner by handle", async (db: DbOrTx, handle: string) => {
    const user = await db
      .selectFrom("users")
      .select(["id", "handle"])
      .where("handle", "=", handle)
      .executeTakeFirst();
    if (user) return { type: "user" as const, id: user.id, handle: user.handle };
    const org = await db
      .selectFrom("organizations")
      .select(["id", "handle"])
      .where("handle", "=", handle)
      .executeTakeFirst();
    return org ? { type: "org" as const, id: org.id, handle: org.handle } : null;
  }),
};
