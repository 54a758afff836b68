import { sql } from "kysely";
import type { DbOrTx } from "../../../db/database.js";
import type { DiscussionEventRow, DiscussionRow } from "../../../db/schema.js";

/** The statuses a listing's `status=open` and `status=closed` cover. */
export const OPEN_STATUSES = ["draft", "open"];
export const CLOSED_STATUSES = ["closed", "merged"];

export interface DiscussionFilter {
  isPullRequest?: boolean;
  statuses?: string[];
  authorId?: string;
  search?: string;
}

/** A discussion row with its author's handle and name (null once the account is deleted). */
export type DiscussionWithAuthor = DiscussionRow & {
  author_handle: string | null;
  author_fullname: string | null;
};
export type EventWithAuthor = DiscussionEventRow & {
  author_handle: string | null;
  author_fullname: string | null;
};

function filtered(db: DbOrTx, repositoryId: string, filter: DiscussionFilter) {
  let query = db.selectFrom("discussions").where("discussions.repository_id", "=", repositoryId);
  if (filter.isPullRequest !== undefined)
    query = query.where("discussions.is_pull_request", "=", filter.isPullRequest ? 1 : 0);
  if (filter.statuses) query = query.where("discussions.status", "in", filter.statuses);
  if (filter.authorId !== undefined) query = query.where("discussions.author_id", "=", filter.authorId);
  if (filter.search) {
    // LIKE with the pattern's own wildcards escaped, case-insensitively on both dialects.
    const pattern = `%${filter.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where(sql<boolean>`lower(discussions.title) like ${pattern} escape '\\'`);
  }
  return query;
}

/** SQL for discussions, their events and reactions. */
export const discussionsRepository = {
  /** The number the next discussion of a repository gets. */
  async nextNumber(db: DbOrTx, repositoryId: string): Promise<number> {
    const row = await db
      .selectFrom("discussions")
      .select((eb) => eb.fn.max("num").as("last"))
      .where("repository_id", "=", repositoryId)
      .executeTakeFirst();
    return Number(row?.last ?? 0) + 1;
  },

  /** Every pull request of a repository: its number, author and status, by number. */
  pullRequestStatuses: (db: DbOrTx, repositoryId: string) =>
    db
      .selectFrom("discussions")
      .select(["num", "author_id", "status"])
      .where("repository_id", "=", repositoryId)
      .where("is_pull_request", "=", 1)
      .orderBy("num")
      .execute(),

  insert: (db: DbOrTx, row: DiscussionRow) => db.insertInto("discussions").values(row).execute(),

  delete: (db: DbOrTx, id: string) => db.deleteFrom("discussions").where("id", "=", id).execute(),

  find: (db: DbOrTx, repositoryId: string, num: number): Promise<DiscussionWithAuthor | undefined> =>
    db
      .selectFrom("discussions")
      .leftJoin("users", "users.id", "discussions.author_id")
      .selectAll("discussions")
      .select(["users.handle as author_handle", "users.fullname as author_fullname"])
      .where("discussions.repository_id", "=", repositoryId)
      .where("discussions.num", "=", num)
      .executeTakeFirst(),

  async count(db: DbOrTx, repositoryId: string, filter: DiscussionFilter): Promise<number> {
    const row = await filtered(db, repositoryId, filter)
      .select((eb) => eb.fn.countAll().as("n"))
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  },

  page: (
    db: DbOrTx,
    repositoryId: string,
    filter: DiscussionFilter,
    offset: number,
    limit: number,
  ): Promise<DiscussionWithAuthor[]> =>
    filtered(db, repositoryId, filter)
      .leftJoin("users", "users.id", "discussions.author_id")
      .selectAll("discussions")
      .select(["users.handle as author_handle", "users.fullname as author_fullname"])
      .orderBy("discussions.pinned", "desc")
      .orderBy("discussions.num", "desc")
      .limit(limit)
      .offset(offset)
      .execute(),

  /** Comments per discussion, for a page of them. */
  async commentCounts(db: DbOrTx, discussionIds: string[]): Promise<Map<string, number>> {
    if (discussionIds.length === 0) return new Map();
    const rows = await db
      .selectFrom("discussion_events")
      .select(["discussion_id", (eb) => eb.fn.countAll().as("n")])
      .where("discussion_id", "in", discussionIds)
      .where("type", "=", "comment")
      .groupBy("discussion_id")
      .execute();
    return new Map(rows.map((row) => [row.discussion_id, Number(row.n)]));
  },

  /** Reaction counts on the comments of some discussions, per discussion. */
  async reactionCounts(
    db: DbOrTx,
    discussionIds: string[],
  ): Promise<Array<{ discussion_id: string; reaction: string; n: number }>> {
    if (discussionIds.length === 0) return [];
    const rows = await db
      .selectFrom("discussion_reactions")
      .innerJoin("discussion_events", "discussion_events.id", "discussion_reactions.event_id")
      .select([
        "discussion_events.discussion_id",
        "discussion_reactions.reaction",
        (eb) => eb.fn.countAll().as("n"),
      ])
      .where("discussion_events.discussion_id", "in", discussionIds)
      .groupBy(["discussion_events.discussion_id", "discussion_reactions.reaction"])
      .execute();
    return rows.map((row) => ({ ...row, n: Number(row.n) }));
  },

  update: (
    db: DbOrTx,
    id: string,
    changes: Partial<Pick<DiscussionRow, "title" | "status" | "merge_commit" | "updated_at" | "pinned">>,
  ) => db.updateTable("discussions").set(changes).where("id", "=", id).execute(),

  /** Changes the status only if it is still `from` (compare-and-swap); whether it did. */
  async swapStatus(
    db: DbOrTx,
    id: string,
    from: string,
    changes: Pick<DiscussionRow, "status" | "updated_at"> & Partial<Pick<DiscussionRow, "merge_commit">>,
  ) {
    const result = await db
      .updateTable("discussions")
      .set(changes)
      .where("id", "=", id)
      .where("status", "=", from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  async nextSeq(db: DbOrTx, discussionId: string): Promise<number> {
    const row = await db
      .selectFrom("discussion_events")
      .select((eb) => eb.fn.max("seq").as("last"))
      .where("discussion_id", "=", discussionId)
      .executeTakeFirst();
    return Number(row?.last ?? 0) + 1;
  },

  insertEvent: (db: DbOrTx, row: DiscussionEventRow) =>
    db.insertInto("discussion_events").values(row).execute(),

  events: (db: DbOrTx, discussionId: string): Promise<EventWithAuthor[]> =>
    db
      .selectFrom("discussion_events")
      .leftJoin("users", "users.id", "discussion_events.author_id")
      .selectAll("discussion_events")
      .select(["users.handle as author_handle", "users.fullname as author_fullname"])
      .where("discussion_events.discussion_id", "=", discussionId)
      .orderBy("discussion_events.seq")
      .execute(),

  event: (db: DbOrTx, discussionId: string, eventId: string): Promise<EventWithAuthor | undefined> =>
    db
      .selectFrom("discussion_events")
      .leftJoin("users", "users.id", "discussion_events.author_id")
      .selectAll("discussion_events")
      .select(["users.handle as author_handle", "users.fullname as author_fullname"])
      .where("discussion_events.discussion_id", "=", discussionId)
      .where("discussion_events.id", "=", eventId)
      .executeTakeFirst(),

  updateEvent: (db: DbOrTx, id: string, data: string, updatedAt: string) =>
    db.updateTable("discussion_events").set({ data, updated_at: updatedAt }).where("id", "=", id).execute(),

  /** The commits already on a discussion's timeline. */
  async commitOids(db: DbOrTx, discussionId: string): Promise<Set<string>> {
    const rows = await db
      .selectFrom("discussion_events")
      .select("data")
      .where("discussion_id", "=", discussionId)
      .where("type", "=", "commit")
      .execute();
    return new Set(rows.map((row) => (JSON.parse(row.data) as { oid: string }).oid));
  },

  reactions: (db: DbOrTx, eventIds: string[]) =>
    eventIds.length === 0
      ? Promise.resolve([])
      : db
          .selectFrom("discussion_reactions")
          .innerJoin("users", "users.id", "discussion_reactions.user_id")
          .select(["discussion_reactions.event_id", "discussion_reactions.reaction", "users.handle"])
          .where("discussion_reactions.event_id", "in", eventIds)
          .orderBy("discussion_reactions.created_at")
          .execute(),

  addReaction: (
    db: DbOrTx,
    row: { event_id: string; user_id: string; reaction: string; created_at: string },
  ) =>
    db
      .insertInto("discussion_reactions")
      .values(row)
      .onConflict((oc) => oc.columns(["event_id", "user_id", "reaction"]).doNothing())
      .execute(),

  removeReaction: (db: DbOrTx, eventId: string, userId: string, reaction: string) =>
    db
      .deleteFrom("discussion_reactions")
      .where("event_id", "=", eventId)
      .where("user_id", "=", userId)
      .where("reaction", "=", reaction)
      .execute(),

  /** Accounts by handle, for @mentions. */
  usersByHandle: (db: DbOrTx, handles: string[]) =>
    handles.length === 0
      ? Promise.resolve([])
      : db.selectFrom("users").select(["id", "handle"]).where("handle", "in", handles).execute(),

  userByHandle: (db: DbOrTx, handle: string) =>
    db.selectFrom("users").select(["id", "handle"]).where("handle", "=", handle).executeTakeFirst(),
};
