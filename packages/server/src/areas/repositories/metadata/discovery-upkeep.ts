import type { Logger } from "pino";
import type { Db } from "../../../db/database.js";
import type { FoundRepo } from "../../../domain/repositories.js";
import { dayOf } from "./download-counter.js";
import type { MetadataIndexer } from "./metadata-indexer.js";

/** Days of downloads a repository's `downloads` counts. */
const DOWNLOAD_DAYS = 30;
/** Days of downloads and likes trending looks at, the newest weighing most. */
const TRENDING_DAYS = 7;
/** What one like weighs against one download in trending. */
const LIKE_WEIGHT = 10;

const daysBefore = (at: Date, days: number) => dayOf(new Date(at.getTime() - days * 86_400_000));

/**
 * Discovery's background work: indexing repositories made before indexing
 * existed, and every few minutes recomputing each repository's downloads of
 * the last 30 days (days age out) and its trending score: its downloads and
 * likes of the last 7 days, each day weighing less as it ages.
 */
export function createDiscoveryUpkeep({
  db,
  clock,
  logger,
  indexer,
  findById,
  intervalSeconds,
  recentLikes,
}: {
  db: Db;
  clock: () => Date;
  logger: Logger;
  indexer: MetadataIndexer;
  findById: (id: string) => Promise<FoundRepo | null>;
  intervalSeconds: number;
  /** Likes given since a day (`YYYY-MM-DD`), by repository and day; none until likes exist. */
  recentLikes?: (since: string) => Promise<Array<{ repositoryId: string; day: string; count: number }>>;
}) {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;

  /** Recomputes downloads (last 30 days) and trending scores. */
  async function recompute(): Promise<void> {
    const now = clock();
    const today = dayOf(now);
    const since30 = daysBefore(now, DOWNLOAD_DAYS - 1);
    const since7 = daysBefore(now, TRENDING_DAYS - 1);
    const recent = await db
      .selectFrom("repo_downloads")
      .select(["repository_id", "day", "count"])
      .where("day", ">=", since30)
      .execute();
    const downloads = new Map<string, number>();
    const scores = new Map<string, number>();
    const weigh = (repositoryId: string, day: string, amount: number) => {
      if (day < since7) return;
      const age = Math.max(0, Math.round((Date.parse(today) - Date.parse(day)) / 86_400_000));
      const weight = (TRENDING_DAYS - age) / TRENDING_DAYS;
      scores.set(repositoryId, (scores.get(repositoryId) ?? 0) + amount * weight);
    };
    for (const row of recent) {
      downloads.set(row.repository_id, (downloads.get(row.repository_id) ?? 0) + row.count);
      weigh(row.repository_id, row.day, row.count);
    }
    for (const like of (await recentLikes?.(since7)) ?? []) {
      weigh(like.repositoryId, like.day, like.count * LIKE_WEIGHT);
    }
    await db.transaction().execute(async (tx) => {
      // Repositories whose counts fell to nothing, then those with counts.
      await tx
        .updateTable("repo_stats")
        .set({ downloads: 0, trending_score: 0 })
        .where((eb) => eb.or([eb("downloads", ">", 0), eb("trending_score", ">", 0)]))
        .execute();
      const touched = new Set([...downloads.keys(), ...scores.keys()]);
      for (const repositoryId of touched) {
        await tx
          .updateTable("repo_stats")
          .set({
            downloads: downloads.get(repositoryId) ?? 0,
            trending_score: Math.round((scores.get(repositoryId) ?? 0) * 100) / 100,
          })
          .where("repository_id", "=", repositoryId)
          .execute();
      }
    });
  }

  async function work(): Promise<void> {
    try {
      const indexed = await indexer.backfill(findById);
      if (indexed > 0) logger.info({ repositories: indexed }, "repositories indexed for discovery");
      await recompute();
    } catch (err) {
      logger.error({ err: (err as Error).message }, "discovery upkeep failed");
    }
  }

  return {
    recompute,
    /** Runs the work now, then every interval. */
    start(): void {
      if (timer) return;
      running = work();
      timer = setInterval(() => {
        running = (running ?? Promise.resolve()).then(work);
      }, intervalSeconds * 1000).unref();
    },
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}

export type DiscoveryUpkeep = ReturnType<typeof createDiscoveryUpkeep>;
