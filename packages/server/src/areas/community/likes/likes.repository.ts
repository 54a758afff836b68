import { sql } from "kysely";
import type { DbOrTx } from "../../../db/database.js";
import type { RepositoryRow } from "../../../db/schema.js";

/** An account in a repository's likers, with what its entry shows. */
export interface LikerRow {
  handle: string;
  fullname: string;
  avatar_sha256: string | null;
}

/** A repository an account liked, with its owner's handle and when. */
export type LikedRow = RepositoryRow & { owner_handle: string; liked_at: string };

/** SQL for likes and the like count kept in `repo_stats`; every function takes the database or a transaction first. */
export const likesRepository = {
  /** Adds the like; false when the account already liked the repository. */
  async add(db: DbOrTx, repositoryId: string, userId: string, at: string): Promise<boolean> {
    const result = await db
      .insertInto("repo_likes")
      .values({ repository_id: repositoryId, user_id: userId, created_at: at })
      .onConflict((oc) => oc.columns(["repository_id", "user_id"]).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  },

  /** Removes the like; false when there was none. */
  async remove(db: DbOrTx, repositoryId: string, userId: string): Promise<boolean> {
    const result = await db
      .deleteFrom("repo_likes")
      .where("repository_id", "=", repositoryId)
      .where("user_id", "=", userId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  },

  /**
   * Moves the repository's like count by `delta`, making its stats row when it
   * has none. One statement, so concurrent likes each count (PostgreSQL
   * re-reads the row it waited for; SQLite writes one at a time).
   */
  addToCount: (db: DbOrTx, repositoryId: string, delta: number) =>
    db
      .insertInto("repo_stats")
      .values({
        repository_id: repositoryId,
        likes: Math.max(delta, 0),
        downloads: 0,
        downloads_all_time: 0,
        trending_score: 0,
      })
      .onConflict((oc) =>
        oc.column("repository_id").doUpdateSet((eb) => ({ likes: eb("repo_stats.likes", "+", delta) })),
      )
      .execute(),

  async count(db: DbOrTx, repositoryId: string): Promise<number> {
    const row = await db
      .selectFrom("repo_stats")
      .select("likes")
      .where("repository_id", "=", repositoryId)
      .executeTakeFirst();
    return row?.likes ?? 0;
  },

  /** How many public repositories the account liked: what its public overview shows. */
  async publicCountOf(db: DbOrTx, userId: string): Promise<number> {
    const row = await db
      .selectFrom("repo_likes")
      .innerJoin("repositories", "repositories.id", "repo_likes.repository_id")
      .select((eb) => eb.fn.countAll<number | string>().as("n"))
      .where("repo_likes.user_id", "=", userId)
      .where("repositories.private", "=", 0)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** Whether the account likes the repository. */
  async has(db: DbOrTx, repositoryId: string, userId: string): Promise<boolean> {
    const row = await db
      .selectFrom("repo_likes")
      .select("user_id")
      .where("repository_id", "=", repositoryId)
      .where("user_id", "=", userId)
      .executeTakeFirst();
    return row !== undefined;
  },

  /** Which of these repositories the account likes. */
  async likedAmong(db: DbOrTx, userId: string, repositoryIds: string[]): Promise<Set<string>> {
    if (repositoryIds.length === 0) return new Set();
    const rows = await db
      .selectFrom("repo_likes")
      .select("repository_id")
      .where("user_id", "=", userId)
      .where("repository_id", "in", repositoryIds)
      .execute();
    return new Set(rows.map((row) => row.repository_id));
  },

  /** The like counts of these repositories (absent ones have none). */
  async counts(db: DbOrTx, repositoryIds: string[]): Promise<Map<string, number>> {
    if (repositoryIds.length === 0) return new Map();
    const rows = await db
      .selectFrom("repo_stats")
      .select(["repository_id", "likes"])
      .where("repository_id", "in", repositoryIds)
      .execute();
    return new Map(rows.map((row) => [row.repository_id, row.likes]));
  },

  /** A page of the accounts that liked a repository, first like first. */
  likers: (db: DbOrTx, repositoryId: string, offset: number, limit: number): Promise<LikerRow[]> =>
    db
      .selectFrom("repo_likes as l")
      .innerJoin("users as u", "u.id", "l.user_id")
      .leftJoin("user_profiles as p", "p.user_id", "u.id")
      .select(["u.handle", "u.fullname", "p.avatar_sha256"])
      .where("l.repository_id", "=", repositoryId)
      .orderBy("l.created_at")
      .orderBy("u.handle")
      .offset(offset)
      .limit(limit)
      .execute(),

  /**
   * A page of the repositories an account liked that the viewer can possibly
   * see (public ones, and those of `viewerIds`), newest like first; the
   * service asks the authorization rules of each.
   */
  likedBy(
    db: DbOrTx,
    userId: string,
    viewerIds: string[],
    offset: number,
    limit: number,
  ): Promise<LikedRow[]> {
    return db
      .selectFrom("repo_likes as l")
      .innerJoin("repositories", "repositories.id", "l.repository_id")
      .leftJoin("users", "users.id", "repositories.owner_id")
      .leftJoin("organizations", "organizations.id", "repositories.owner_id")
      .selectAll("repositories")
      .select([
        sql<string>`coalesce(users.handle, organizations.handle)`.as("owner_handle"),
        "l.created_at as liked_at",
      ])
      .where("l.user_id", "=", userId)
      .where((eb) =>
        viewerIds.length > 0
          ? eb.or([eb("repositories.private", "=", 0), eb("repositories.owner_id", "in", viewerIds)])
          : eb("repositories.private", "=", 0),
      )
      .orderBy("l.created_at", "desc")
      .orderBy("repositories.id")
      .offset(offset)
      .limit(limit)
      .execute();
  },

  /** Likes given since a day (`YYYY-MM-DD`), counted by repository and day, for trending. */
  async recentByDay(
    db: DbOrTx,
    since: string,
  ): Promise<Array<{ repositoryId: string; day: string; count: number }>> {
    const day = sql<string>`substr(created_at, 1, 10)`;
    const rows = await db
      .selectFrom("repo_likes")
      .select(["repository_id", day.as("day"), (eb) => eb.fn.countAll<number | string>().as("n")])
      .where("created_at", ">=", since)
      .groupBy(["repository_id", day])
      .execute();
    return rows.map((row) => ({ repositoryId: row.repository_id, day: row.day, count: Number(row.n) }));
  },

  /**
   * Removes every like of an account about to be deleted, and takes each from
   * its repository's count. On PostgreSQL the account's row is locked first,
   * so a like being added meanwhile waits and then fails with the account.
   */
  async forgetLiker(db: DbOrTx, userId: string, lockAccount: boolean): Promise<void> {
    if (lockAccount) await db.selectFrom("users").select("id").where("id", "=", userId).forUpdate().execute();
    const removed = await db
      .deleteFrom("repo_likes")
      .where("user_id", "=", userId)
      .returning("repository_id")
      .execute();
    for (const { repository_id } of removed) await likesRepository.addToCount(db, repository_id, -1);
  },
};
