import { sql, type Expression, type SqlBool } from "kysely";
import type { DbOrTx } from "../../../db/database.js";
import type { CollectionItemRow, CollectionRow } from "../../../db/schema.js";

/** A collection with what its owner shows: handle, display name, avatar. */
export type CollectionRecord = CollectionRow & {
  owner_handle: string;
  owner_fullname: string;
  owner_avatar: string | null;
};

/** What an item names (the owner of a collection: exactly one of the two ids). */
export type ItemTarget =
  { kind: "repository"; id: string } | { kind: "paper"; id: string } | { kind: "collection"; id: string };

/** An item with what it names, read in one query: the repository, paper or collection, with their owners. */
export interface ItemRecord {
  id: string;
  collection_id: string;
  item_type: string;
  note: string | null;
  position: number;
  repository_id: string | null;
  repo_type: string | null;
  repo_name: string | null;
  repo_owner_id: string | null;
  repo_owner_type: string | null;
  repo_owner_handle: string | null;
  repo_private: number | null;
  repo_gated: string | null;
  repo_updated_at: string | null;
  repo_space_sdk: string | null;
  repo_likes: number | null;
  repo_downloads: number | null;
  paper_id: string | null;
  paper_title: string | null;
  paper_published_at: string | null;
  item_collection_id: string | null;
  ic_title: string | null;
  ic_description: string | null;
  ic_private: number | null;
  ic_theme: string | null;
  ic_updated_at: string | null;
  ic_owner_user_id: string | null;
  ic_owner_organization_id: string | null;
  ic_owner_handle: string | null;
  ic_owner_fullname: string | null;
  ic_owner_avatar: string | null;
}

/** The filters of a listing; `viewerIds` are the owners whose private collections the viewer can possibly see. */
export interface CollectionFilter {
  viewerIds: string[];
  ownerHandles?: string[];
  items?: ItemTarget[];
  q?: string;
  offset: number;
  limit: number;
}

const TARGET_COLUMN = {
  repository: "repository_id",
  paper: "paper_id",
  collection: "item_collection_id",
} as const;

/** SQL for collections and their items; every function takes the database or a transaction first. */
export const collectionsRepository = {
  insert: (db: DbOrTx, row: CollectionRow) => db.insertInto("collections").values(row).execute(),

  /** Collections with their owners: one by id, or a filtered page of the listing. */
  selectWithOwner(db: DbOrTx) {
    return db
      .selectFrom("collections as c")
      .leftJoin("users as ou", "ou.id", "c.owner_user_id")
      .leftJoin("user_profiles as op", "op.user_id", "c.owner_user_id")
      .leftJoin("organizations as oo", "oo.id", "c.owner_organization_id")
      .selectAll("c")
      .select([
        sql<string>`coalesce(ou.handle, oo.handle)`.as("owner_handle"),
        sql<string>`coalesce(ou.fullname, oo.fullname)`.as("owner_fullname"),
        "op.avatar_sha256 as owner_avatar",
      ]);
  },

  find: (db: DbOrTx, id: string): Promise<CollectionRecord | undefined> =>
    collectionsRepository.selectWithOwner(db).where("c.id", "=", id).executeTakeFirst(),

  /** Another collection of the owner with this title, whatever its case. */
  findByTitle: (
    db: DbOrTx,
    owner: { user: string | null; org: string | null },
    title: string,
    except?: string,
  ) => {
    let query = db
      .selectFrom("collections")
      .select("id")
      .where(sql<SqlBool>`lower(title) = ${title.toLowerCase()}`)
      .where(owner.user ? "owner_user_id" : "owner_organization_id", "=", owner.user ?? owner.org ?? "");
    if (except) query = query.where("id", "<>", except);
    return query.executeTakeFirst();
  },

  /** The owner's collections, in their order. */
  async ownerOrder(db: DbOrTx, owner: { user: string | null; org: string | null }): Promise<string[]> {
    const rows = await db
      .selectFrom("collections")
      .select("id")
      .where(owner.user ? "owner_user_id" : "owner_organization_id", "=", owner.user ?? owner.org ?? "")
      .orderBy("position")
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return rows.map((row) => row.id);
  },

  /** Writes positions 0, 1, 2… in the given order, touching only rows whose position changes. */
  async renumber(
    db: DbOrTx,
    table: "collections" | "collection_items",
    ids: string[],
    current: Map<string, number>,
  ) {
    for (const [position, id] of ids.entries()) {
      if (current.get(id) !== position)
        await db.updateTable(table).set({ position }).where("id", "=", id).execute();
    }
  },

  async positions(db: DbOrTx, table: "collections" | "collection_items", ids: string[]) {
    if (ids.length === 0) return new Map<string, number>();
    const rows = await db.selectFrom(table).select(["id", "position"]).where("id", "in", ids).execute();
    return new Map(rows.map((row) => [row.id, row.position]));
  },

  update: (
    db: DbOrTx,
    id: string,
    patch: Partial<Pick<CollectionRow, "title" | "description" | "private" | "theme" | "updated_at">>,
  ) => db.updateTable("collections").set(patch).where("id", "=", id).execute(),

  delete: (db: DbOrTx, id: string) => db.deleteFrom("collections").where("id", "=", id).execute(),

  /**
   * A page of collections the viewer can possibly see, newest change first;
   * the service asks the authorization rules of each.
   */
  list(db: DbOrTx, filter: CollectionFilter): Promise<CollectionRecord[]> {
    let query = collectionsRepository.selectWithOwner(db).where((eb) => {
      const visible: Expression<SqlBool>[] = [eb("c.private", "=", 0)];
      if (filter.viewerIds.length > 0) {
        visible.push(eb("c.owner_user_id", "in", filter.viewerIds));
        visible.push(eb("c.owner_organization_id", "in", filter.viewerIds));
      }
      return eb.or(visible);
    });
    if (filter.ownerHandles) {
      const handles = filter.ownerHandles;
      query = query.where((eb) => eb.or([eb("ou.handle", "in", handles), eb("oo.handle", "in", handles)]));
    }
    if (filter.items) {
      const items = filter.items;
      query = query.where((eb) =>
        eb.or(
          items.map((target) =>
            eb.exists(
              eb
                .selectFrom("collection_items as fi")
                .select("fi.id")
                .whereRef("fi.collection_id", "=", "c.id")
                .where(`fi.${TARGET_COLUMN[target.kind]}`, "=", target.id),
            ),
          ),
        ),
      );
    }
    if (filter.q) {
      const pattern = `%${filter.q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      query = query.where(
        sql<SqlBool>`(lower(c.title) like ${pattern} escape '\\' or lower(coalesce(c.description, '')) like ${pattern} escape '\\')`,
      );
    }
    return query
      .orderBy("c.updated_at", "desc")
      .orderBy("c.id")
      .offset(filter.offset)
      .limit(filter.limit)
      .execute();
  },

  /**
   * The items of these collections with what they name, in each collection's
   * order; with `perCollection`, only that many first items of each (a
   * listing shows a few, whatever a collection holds).
   */
  items(db: DbOrTx, collectionIds: string[], perCollection?: number): Promise<ItemRecord[]> {
    if (collectionIds.length === 0) return Promise.resolve([]);
    let query = db
      .selectFrom((eb) =>
        eb
          .selectFrom("collection_items")
          .selectAll()
          .select(
            sql<number>`row_number() over (partition by collection_id order by position, created_at, id)`.as(
              "item_rank",
            ),
          )
          .where("collection_id", "in", collectionIds)
          .as("i"),
      )
      .leftJoin("repositories as r", "r.id", "i.repository_id")
      .leftJoin("users as ru", "ru.id", "r.owner_id")
      .leftJoin("organizations as ro", "ro.id", "r.owner_id")
      .leftJoin("repo_stats as rs", "rs.repository_id", "i.repository_id")
      .leftJoin("papers as p", "p.arxiv_id", "i.paper_id")
      .leftJoin("collections as ic", "ic.id", "i.item_collection_id")
      .leftJoin("users as icu", "icu.id", "ic.owner_user_id")
      .leftJoin("user_profiles as icp", "icp.user_id", "ic.owner_user_id")
      .leftJoin("organizations as ico", "ico.id", "ic.owner_organization_id")
      .select([
        "i.id",
        "i.collection_id",
        "i.item_type",
        "i.note",
        "i.position",
        "i.repository_id",
        "r.type as repo_type",
        "r.name as repo_name",
        "r.owner_id as repo_owner_id",
        "r.owner_type as repo_owner_type",
        sql<string | null>`coalesce(ru.handle, ro.handle)`.as("repo_owner_handle"),
        "r.private as repo_private",
        "r.gated as repo_gated",
        "r.updated_at as repo_updated_at",
        "r.space_sdk as repo_space_sdk",
        "rs.likes as repo_likes",
        "rs.downloads as repo_downloads",
        "i.paper_id",
        "p.title as paper_title",
        "p.published_at as paper_published_at",
        "i.item_collection_id",
        "ic.title as ic_title",
        "ic.description as ic_description",
        "ic.private as ic_private",
        "ic.theme as ic_theme",
        "ic.updated_at as ic_updated_at",
        "ic.owner_user_id as ic_owner_user_id",
        "ic.owner_organization_id as ic_owner_organization_id",
        sql<string | null>`coalesce(icu.handle, ico.handle)`.as("ic_owner_handle"),
        sql<string | null>`coalesce(icu.fullname, ico.fullname)`.as("ic_owner_fullname"),
        "icp.avatar_sha256 as ic_owner_avatar",
      ])
      .orderBy("i.collection_id")
      .orderBy("i.position")
      .orderBy("i.created_at")
      .orderBy("i.id");
    if (perCollection !== undefined) query = query.where("i.item_rank", "<=", perCollection);
    return query.execute();
  },

  /** How many items each of these collections holds. */
  async itemCounts(db: DbOrTx, collectionIds: string[]): Promise<Map<string, number>> {
    if (collectionIds.length === 0) return new Map();
    const rows = await db
      .selectFrom("collection_items")
      .select(["collection_id", (eb) => eb.fn.countAll<number | string>().as("n")])
      .where("collection_id", "in", collectionIds)
      .groupBy("collection_id")
      .execute();
    return new Map(rows.map((row) => [row.collection_id, Number(row.n)]));
  },

  /** The collection's items in their order. */
  async itemOrder(db: DbOrTx, collectionId: string): Promise<string[]> {
    const rows = await db
      .selectFrom("collection_items")
      .select("id")
      .where("collection_id", "=", collectionId)
      .orderBy("position")
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return rows.map((row) => row.id);
  },

  findItem: (db: DbOrTx, collectionId: string, itemId: string) =>
    db
      .selectFrom("collection_items")
      .selectAll()
      .where("collection_id", "=", collectionId)
      .where("id", "=", itemId)
      .executeTakeFirst(),

  /** The item of the collection naming this target, if any. */
  findTarget: (db: DbOrTx, collectionId: string, target: ItemTarget) =>
    db
      .selectFrom("collection_items")
      .select("id")
      .where("collection_id", "=", collectionId)
      .where(TARGET_COLUMN[target.kind], "=", target.id)
      .executeTakeFirst(),

  insertItem: (db: DbOrTx, row: CollectionItemRow) => db.insertInto("collection_items").values(row).execute(),

  setNote: (db: DbOrTx, itemId: string, note: string | null) =>
    db.updateTable("collection_items").set({ note }).where("id", "=", itemId).execute(),

  deleteItem: (db: DbOrTx, itemId: string) =>
    db.deleteFrom("collection_items").where("id", "=", itemId).execute(),
};

/** Whether the papers index holds this arXiv id. */
export async function paperExists(db: DbOrTx, arxivId: string): Promise<boolean> {
  const row = await db
    .selectFrom("papers")
    .select("arxiv_id")
    .where("arxiv_id", "=", arxivId)
    .executeTakeFirst();
  return row !== undefined;
}
