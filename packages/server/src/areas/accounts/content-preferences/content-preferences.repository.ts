import { sql } from "kysely";
import type { ContentFilter } from "@hub/api";
import type { DbOrTx } from "../../../db/database.js";
import type { ContentPreferencesRow, RecommendationSuppressionRow } from "../../../db/schema.js";

/** SQL for content preferences, the activity they learn from, and recommendation suppressions. */
export const contentPreferencesRepository = {
  find: (db: DbOrTx, userId: string) =>
    db.selectFrom("content_preferences").selectAll().where("user_id", "=", userId).executeTakeFirst(),

  /** An account's explicit preferences, read from their JSON columns (empty when it never set any). */
  async explicit(db: DbOrTx, userId: string) {
    const row = await contentPreferencesRepository.find(db, userId);
    return {
      hiddenTags: row ? (JSON.parse(row.hidden_tags) as string[]) : [],
      languages: row ? (JSON.parse(row.languages) as string[]) : [],
      contentFilters: row ? (JSON.parse(row.content_filters) as ContentFilter[]) : [],
      updatedAt: row?.updated_at ?? null,
    };
  },

  async save(db: DbOrTx, row: ContentPreferencesRow) {
    const { user_id: _key, ...rest } = row;
    await db
      .insertInto("content_preferences")
      .values(row)
      .onConflict((oc) => oc.column("user_id").doUpdateSet(rest))
      .execute();
  },

  /** Counts one more `kind` of activity by the account on the repository. */
  /** Adds `count` occurrences of an activity, the first at `firstAt` and the last at `lastAt`. */
  async record(
    db: DbOrTx,
    activity: {
      userId: string;
      repositoryId: string;
      kind: string;
      count: number;
      firstAt: string;
      lastAt: string;
    },
  ) {
    await db
      .insertInto("account_activity")
      .values({
        user_id: activity.userId,
        repository_id: activity.repositoryId,
        kind: activity.kind,
        count: activity.count,
        first_at: activity.firstAt,
        last_at: activity.lastAt,
      })
      .onConflict((oc) =>
        oc.columns(["user_id", "repository_id", "kind"]).doUpdateSet({
          count: sql<number>`account_activity.count + ${activity.count}`,
          last_at: activity.lastAt,
        }),
      )
      .execute();
  },

  /** The account's activity, most recent first. */
  activity: (db: DbOrTx, userId: string, limit: number) =>
    db
      .selectFrom("account_activity")
      .selectAll()
      .where("user_id", "=", userId)
      .orderBy("last_at", "desc")
      .limit(limit)
      .execute(),

  clearActivity: (db: DbOrTx, userId: string) =>
    db.deleteFrom("account_activity").where("user_id", "=", userId).execute(),

  suppressions: (db: DbOrTx, userId: string) =>
    db
      .selectFrom("recommendation_suppressions")
      .selectAll()
      .where("user_id", "=", userId)
      .orderBy("created_at", "desc")
      .orderBy("id")
      .execute(),

  findSuppression: (db: DbOrTx, userId: string, kind: string, value: string) =>
    db
      .selectFrom("recommendation_suppressions")
      .selectAll()
      .where("user_id", "=", userId)
      .where("kind", "=", kind)
      .where("value", "=", value)
      .executeTakeFirst(),

  insertSuppression: (db: DbOrTx, row: RecommendationSuppressionRow) =>
    db.insertInto("recommendation_suppressions").values(row).execute(),

  /** Anyone's suppressions of these repositories or authors (by id), which no longer exist. */
  dropSuppressionsOf: (db: DbOrTx, ids: string[]) =>
    db
      .deleteFrom("recommendation_suppressions")
      .where("kind", "in", ["repository", "author"])
      .where("value", "in", ids)
      .execute(),

  deleteSuppression: (db: DbOrTx, userId: string, id: string) =>
    db
      .deleteFrom("recommendation_suppressions")
      .where("user_id", "=", userId)
      .where("id", "=", id)
      .executeTakeFirst(),
};
