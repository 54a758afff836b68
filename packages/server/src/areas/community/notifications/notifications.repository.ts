import type { DbOrTx } from "../../../db/database.js";
import type { NotificationRow, RepoWatchRow } from "../../../db/schema.js";

/** Rows per insert: 9 values each stay far below SQLite's 32,766 and PostgreSQL's 65,535 parameters. */
const INSERT_BATCH = 500;

/** What selects part of an inbox; `hidden` are repositories whose notifications are left out. */
export interface InboxFilter {
  repositoryId?: string;
  isPullRequest?: boolean;
  unread?: boolean;
  hidden: string[];
}

/** A notification with what its answer shows of the discussion and the actor. */
export interface NotificationWithDiscussion extends NotificationRow {
  repository_id: string;
  num: number;
  title: string;
  status: string;
  is_pull_request: number;
  actor_handle: string | null;
}

function inbox(db: DbOrTx, userId: string, filter: InboxFilter) {
  let query = db
    .selectFrom("notifications")
    .innerJoin("discussions", "discussions.id", "notifications.discussion_id")
    .where("notifications.user_id", "=", userId);
  if (filter.repositoryId !== undefined)
    query = query.where("discussions.repository_id", "=", filter.repositoryId);
  if (filter.isPullRequest !== undefined)
    query = query.where("discussions.is_pull_request", "=", filter.isPullRequest ? 1 : 0);
  if (filter.unread) query = query.where("notifications.read_at", "is", null);
  if (filter.hidden.length > 0) query = query.where("discussions.repository_id", "not in", filter.hidden);
  return query;
}

/** SQL for notifications and repository watches; every function takes the database or a transaction first. */
export const notificationsRepository = {
  /** Inserts in batches, under both dialects' limits on the values of one statement. */
  async insert(db: DbOrTx, rows: NotificationRow[]): Promise<void> {
    for (let start = 0; start < rows.length; start += INSERT_BATCH)
      await db
        .insertInto("notifications")
        .values(rows.slice(start, start + INSERT_BATCH))
        .execute();
  },

  /** Who watches or mutes a repository. */
  watchesOf: (db: DbOrTx, repositoryId: string) =>
    db
      .selectFrom("repo_watches")
      .select(["user_id", "mode"])
      .where("repository_id", "=", repositoryId)
      .execute(),

  /** The members of an organization with one of these roles. */
  async membersWithRoles(db: DbOrTx, organizationId: string, roles: readonly string[]): Promise<string[]> {
    const rows = await db
      .selectFrom("memberships")
      .select("user_id")
      .where("organization_id", "=", organizationId)
      .where("role", "in", roles)
      .execute();
    return rows.map((row) => row.user_id);
  },

  /** Everyone who wrote an event of the discussion (comments, status and title changes, commits). */
  async eventAuthors(db: DbOrTx, discussionId: string): Promise<string[]> {
    const rows = await db
      .selectFrom("discussion_events")
      .select("author_id")
      .distinct()
      .where("discussion_id", "=", discussionId)
      .where("author_id", "is not", null)
      .execute();
    return rows.flatMap((row) => (row.author_id === null ? [] : [row.author_id]));
  },

  /** The repositories an inbox's selection draws from. */
  async repositoriesIn(db: DbOrTx, userId: string, filter: InboxFilter): Promise<string[]> {
    const rows = await inbox(db, userId, filter).select("discussions.repository_id").distinct().execute();
    return rows.map((row) => row.repository_id);
  },

  async count(db: DbOrTx, userId: string, filter: InboxFilter): Promise<number> {
    const row = await inbox(db, userId, filter)
      .select((eb) => eb.fn.countAll().as("n"))
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  },

  /** A page of the inbox, newest first. */
  page: (
    db: DbOrTx,
    userId: string,
    filter: InboxFilter,
    offset: number,
    limit: number,
  ): Promise<NotificationWithDiscussion[]> =>
    inbox(db, userId, filter)
      .leftJoin("users", "users.id", "notifications.actor_id")
      .selectAll("notifications")
      .select([
        "discussions.repository_id",
        "discussions.num",
        "discussions.title",
        "discussions.status",
        "discussions.is_pull_request",
        "users.handle as actor_handle",
      ])
      .orderBy("notifications.created_at", "desc")
      .orderBy("notifications.id", "desc")
      .limit(limit)
      .offset(offset)
      .execute(),

  /** One of the account's notifications with its repository, or undefined. */
  find: (db: DbOrTx, userId: string, id: string) =>
    db
      .selectFrom("notifications")
      .innerJoin("discussions", "discussions.id", "notifications.discussion_id")
      .select(["notifications.id", "notifications.read_at", "discussions.repository_id"])
      .where("notifications.user_id", "=", userId)
      .where("notifications.id", "=", id)
      .executeTakeFirst(),

  markRead: (db: DbOrTx, userId: string, id: string, at: string) =>
    db
      .updateTable("notifications")
      .set({ read_at: at })
      .where("user_id", "=", userId)
      .where("id", "=", id)
      .where("read_at", "is", null)
      .execute(),

  /** Marks read what the selection holds unread; answers how many. */
  async markAllRead(db: DbOrTx, userId: string, filter: InboxFilter, at: string): Promise<number> {
    const unread = inbox(db, userId, { ...filter, unread: true }).select("notifications.id");
    const result = await db
      .updateTable("notifications")
      .set({ read_at: at })
      .where("user_id", "=", userId)
      .where("id", "in", unread)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  },

  watch: (db: DbOrTx, userId: string, repositoryId: string) =>
    db
      .selectFrom("repo_watches")
      .select("mode")
      .where("user_id", "=", userId)
      .where("repository_id", "=", repositoryId)
      .executeTakeFirst(),

  /** Sets the account's mode for a repository, replacing the one it had. */
  setWatch: (db: DbOrTx, row: RepoWatchRow) =>
    db
      .insertInto("repo_watches")
      .values(row)
      .onConflict((oc) => oc.columns(["user_id", "repository_id"]).doUpdateSet({ mode: row.mode }))
      .execute(),

  deleteWatch: (db: DbOrTx, userId: string, repositoryId: string) =>
    db
      .deleteFrom("repo_watches")
      .where("user_id", "=", userId)
      .where("repository_id", "=", repositoryId)
      .execute(),
};
