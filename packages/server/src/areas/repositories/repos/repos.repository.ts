import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder, type Transaction } from "kysely";
import { cachedRead } from "../../../db/cached-read.js";
import type { DbOrTx } from "../../../db/database.js";
import { isPostgres } from "../../../db/dialect.js";
import type { Database, RepositoryRow } from "../../../db/schema.js";
import type { SortKey } from "./listing-query.js";
import {
  cardHolds,
  countCards,
  idCandidates,
  idHolds,
  MAX_RANKED_CARDS,
  rankedCards,
  searchWords,
} from "./search-sql.js";

/** What a listing asks of the repositories of a kind (see `reposRepository.listVisible`). */
export interface ListingQuery {
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
}

/** A search's common table expressions: the cards that hold its words, and the repositories it may list. */
type SearchTables = {
  card_match: { repository_id: string; rank: number };
  candidates: { repository_id: string };
};
type ListingDb = Database & SearchTables;
/** A listing's query: repositories with their counts, read in an order one of the callers chooses. */
type Listed = SelectQueryBuilder<ListingDb, "repositories" | "repo_stats", object>;

/**
 * The repositories of a listing, read in the order of an index: by the counts' index for a sort by a count
 * (CROSS JOIN keeps SQLite's loop there, so the page's end stops the walk; left to itself the planner at
 * times reads every repository and sorts them), otherwise by the repositories' own.
 */
function listed(listing: Kysely<ListingDb> | Transaction<ListingDb>, byCount: boolean): Listed {
  return byCount
    ? listing
        .selectFrom("repo_stats")
        .crossJoin("repositories")
        .whereRef("repositories.id", "=", "repo_stats.repository_id")
    : listing
        .selectFrom("repositories")
        .innerJoin("repo_stats", "repo_stats.repository_id", "repositories.id");
}

/** A column of the listed repository's metadata, read per repository (most listings need none). */
const metadataOf = (column: "license" | "card_data" | "num_parameters" | "total_size") =>
  sql`(select ${sql.ref(`repo_metadata.${column}`)} from repo_metadata where repo_metadata.repository_id = repositories.id)`;

/** The listed repository's owner's handle, read per repository (only a sort by full name needs it). */
const ownerHandleOf = sql<string>`coalesce(
  (select handle from users where users.id = repositories.owner_id),
  (select handle from organizations where organizations.id = repositories.owner_id))`;

/**
 * The ids of the listed repositories of the kind that the caller can possibly see (public, its own, or its
 * organizations') and that pass the listing's filters. Only what a filter or the order needs is read per
 * repository, and the rows of the page are read afterwards (`rowsOf`): on PostgreSQL, joining the owners
 * and metadata here took 5 ms to plan and doubled the time to run (1.2 and 4.5 ms without).
 */
function visible(from: Listed, query: ListingQuery) {
  let select = from
    .select("repositories.id")
    .where("repositories.type", "=", query.type)
    .where((eb) =>
      query.viewerIds.length > 0
        ? eb.or([eb("repositories.private", "=", 0), eb("repositories.owner_id", "in", query.viewerIds)])
        : eb("repositories.private", "=", 0),
    );
  if (query.author) {
    select = select.where(
      sql<boolean>`repositories.owner_id in (select id from users where handle = ${query.author}
        union all select id from organizations where handle = ${query.author})`,
    );
  }
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
    if (personal.requireLicense) select = select.where(sql<boolean>`${metadataOf("license")} is not null`);
    if (personal.requireCard) select = select.where(sql<boolean>`${metadataOf("card_data")} is not null`);
    select = select.where(
      sql<boolean>`not exists (select 1 from recommendation_suppressions s where s.user_id = ${personal.userId} and (
        (s.kind = 'repository' and s.value = repositories.id)
        or (s.kind = 'author' and s.value = repositories.owner_id)
        or (s.kind = 'tag' and exists (select 1 from repo_tags where repo_tags.repository_id = repositories.id and repo_tags.tag = s.value))))`,
    );
  }
  if (query.parameters?.min !== undefined) {
    select = select.where(sql<boolean>`${metadataOf("num_parameters")} >= ${query.parameters.min}`);
  }
  if (query.parameters?.max !== undefined) {
    select = select.where(sql<boolean>`${metadataOf("num_parameters")} <= ${query.parameters.max}`);
  }
  return select;
}

/** The rows of the listed repositories, with their owners' handles, in the order of `ids`. */
async function rowsOf(db: DbOrTx, ids: Array<{ id: string }>) {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom("repositories")
    .leftJoin("users", "users.id", "repositories.owner_id")
    .leftJoin("organizations", "organizations.id", "repositories.owner_id")
    .selectAll("repositories")
    .select(sql<string>`coalesce(users.handle, organizations.handle)`.as("owner_handle"))
    .where(
      "repositories.id",
      "in",
      ids.map((row) => row.id),
    )
    .execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.flatMap((row) => byId.get(row.id) ?? []);
}

/**
 * The repositories among a search's candidates (the cards that hold its words, when `cards` is given, and
 * the ids that may hold its text, when `search` is), with each card's rank, read from indexes. The cards
 * are materialized, so the full-text query runs once. SQLite loops over the candidates (CROSS JOIN keeps
 * that order). PostgreSQL reads their rows by address through `ctid = any(array(…))`, whose length its
 * planner takes for a few rows: a join to the candidates it took for many, and read every repository; an
 * OR of the tests it ran on every repository; a materialized, deduplicated union of the candidates took a
 * third of the query's time.
 */
function candidatesListed(
  db: DbOrTx,
  listing: Kysely<ListingDb> | Transaction<ListingDb>,
  cards: RawBuilder<{ repository_id: string; rank: number }> | null,
  query: { type: string; search?: string },
): Listed {
  const ids = query.search === undefined ? null : idCandidates(db, query.type, query.search);
  const withCards = cards
    ? listing.with(
        (cte) => cte("card_match").materialized(),
        () => cards,
      )
    : listing;
  const matched = (from: Listed) =>
    cards
      ? (from.leftJoin("card_match", "card_match.repository_id", "repositories.id") as unknown as Listed)
      : from;
  // The candidates: on PostgreSQL the cards' rows' addresses (the ids' come as such), on SQLite ids.
  const pool = [
    ...(cards
      ? [
          isPostgres(db)
            ? sql`select repositories.ctid from card_match join repositories on repositories.id = card_match.repository_id`
            : sql`select repository_id from card_match`,
        ]
      : []),
    ...(ids ? [sql`select candidate as repository_id from ${ids} ids`] : []),
  ];
  if (isPostgres(db)) {
    return matched(
      withCards
        .selectFrom("repositories")
        .innerJoin("repo_stats", "repo_stats.repository_id", "repositories.id")
        .where(
          sql<boolean>`repositories.ctid = any(array(${sql.join(pool, sql` union all `)}))`,
        ) as unknown as Listed,
    );
  }
  return matched(
    withCards
      .with(
        (cte) => cte("candidates").materialized(),
        () => sql<{ repository_id: string }>`(${sql.join(pool, sql` union `)})`,
      )
      .selectFrom("candidates")
      .crossJoin("repositories")
      .innerJoin("repo_stats", "repo_stats.repository_id", "repositories.id")
      .whereRef("repositories.id", "=", "candidates.repository_id") as unknown as Listed,
  );
}

/** The ids of a listing's page, in its order (see `reposRepository.listVisible`). */
async function pageIds(db: DbOrTx, query: ListingQuery): Promise<Array<{ id: string }>> {
  const search = query.search?.toLowerCase();
  const direction = query.descending ? sql`desc` : sql`asc`;
  const sortKey =
    query.sort === "full_name"
      ? sql`${ownerHandleOf} || '/' || repositories.name ${direction}`
      : query.sort === "num_parameters" || query.sort === "total_size"
        ? // Repositories without the figure come last either way.
          sql`${metadataOf(query.sort)} is null, ${metadataOf(query.sort)} ${direction}`
        : query.sort === "likes" || query.sort === "downloads" || query.sort === "trending_score"
          ? sql`${sql.ref(`repo_stats.${query.sort}`)} ${direction}`
          : sql`${sql.ref(`repositories.${query.sort}`)} ${direction}`;
  const listing = db.withTables<SearchTables>();
  // Walked by a count's index when sorted by one; an author's few repositories are read by theirs.
  const byCount =
    !query.author &&
    (query.sort === "likes" || query.sort === "downloads" || query.sort === "trending_score");
  if (!search) {
    return visible(listed(listing, byCount), query)
      .orderBy(sortKey)
      .orderBy("repositories.id")
      .offset(query.offset)
      .limit(query.limit)
      .execute();
  }

  const words = searchWords(search);
  const idMatches = idHolds(db, search);
  const exactFirst = sql`case when repositories.name = ${search} then 0 else 1 end`;
  // A card's text counts only where the caller may read the card: a gated repository's past its gate.
  const viewer = query.viewerIds[0] ?? null;
  const cardReadable = sql<boolean>`(repositories.gated is null${
    query.viewerIds.length > 0 ? sql` or repositories.owner_id in (${sql.join(query.viewerIds)})` : sql``
  }${
    viewer
      ? sql` or exists (select 1 from repo_access_requests where repo_access_requests.repository_id = repositories.id and repo_access_requests.user_id = ${viewer} and repo_access_requests.status = 'accepted')`
      : sql``
  })`;
  /** Whether more cards hold the words than search ranks: those are walked in order, not ranked. */
  const manyCards = async () =>
    words.length > 0 && (await countCards(db, words, MAX_RANKED_CARDS + 1)) > MAX_RANKED_CARDS;
  const cardMatches = sql<boolean>`(${cardHolds(db, words)} and ${cardReadable})`;

  if (query.sorted) {
    if (await manyCards()) {
      // The listing walked in its order, each repository's id and card tested, up to the page's end.
      return visible(listed(listing, byCount), query)
        .where(sql<boolean>`(${idMatches} or ${cardMatches})`)
        .orderBy(sortKey)
        .orderBy("repositories.id")
        .offset(query.offset)
        .limit(query.limit)
        .execute();
    }
    // The candidates (the few cards, and the ids that may hold the text) joined, filtered and sorted.
    return visible(
      candidatesListed(db, listing, words.length > 0 ? rankedCards(db, words, { ranked: false }) : null, {
        type: query.type,
        search,
      }),
      query,
    )
      .where(
        words.length > 0
          ? sql<boolean>`(${idMatches} or (card_match.repository_id is not null and ${cardReadable}))`
          : idMatches,
      )
      .orderBy(sortKey)
      .orderBy("repositories.id")
      .offset(query.offset)
      .limit(query.limit)
      .execute();
  }

  // By relevance: the ids that hold the text (the exact name first, then by trending), then the cards
  // that hold the words, which are read only past the ids' end: ranked when few, else by trending.
  const end = query.offset + query.limit;
  const byId = await visible(candidatesListed(db, listing, null, { type: query.type, search }), query)
    .where(idMatches)
    .orderBy(exactFirst)
    .orderBy("repo_stats.trending_score", "desc")
    .orderBy("repositories.id")
    .limit(end)
    .execute();
  const fromIds = byId.slice(query.offset);
  if (byId.length === end || words.length === 0) return fromIds;
  const cards = (await manyCards())
    ? visible(listed(listing, !query.author), query)
        .where(cardMatches)
        .orderBy("repo_stats.trending_score", "desc")
    : visible(candidatesListed(db, listing, rankedCards(db, words), { type: query.type }), query)
        .where(cardReadable)
        .orderBy(sql`card_match.rank`);
  const byCard = await cards
    .where(sql<boolean>`not ${idMatches}`)
    .orderBy("repositories.id")
    .offset(Math.max(0, query.offset - byId.length))
    .limit(query.limit - fromIds.length)
    .execute();
  return [...fromIds, ...byCard];
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
  async listVisible(db: DbOrTx, query: ListingQuery) {
    return rowsOf(db, await pageIds(db, query));
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
