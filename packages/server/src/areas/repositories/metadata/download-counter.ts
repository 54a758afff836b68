import type { Redis } from "ioredis";
import { sql } from "kysely";
import type { Logger } from "pino";
import type { Db } from "../../../db/database.js";
import type { FoundRepo } from "../../../domain/repositories.js";

/**
 * Counts downloads the way the Hugging Face Hub counts them: not per file,
 * but when a client fetches one of a repository's query files (a model's
 * configuration or weights, any file of a dataset), GET or HEAD, at most once
 * per caller and repository per window, so one `snapshot_download` or
 * `from_pretrained` is one download. Recording never holds the download: the
 * window is asked (in memory, or in Redis so every hub process shares it) and
 * the counts reach the database in one batch a second later. A crash loses at
 * most that second's counts.
 */

/** Model files that mark a download: configurations at the root, and weights anywhere. */
const MODEL_CONFIG_FILES = new Set([
  "config.json",
  "config.yaml",
  "hyperparams.yaml",
  "meta.yaml",
  "params.json",
  "adapter_config.json",
  "model_index.json",
]);
const WEIGHTS = /\.(gguf|safetensors|bin|pt|pth|ckpt|onnx|h5|keras|nemo|pb|mlmodel|tflite)$/i;

/** Whether fetching this file of a repository counts as downloading the repository. */
export function isQueryFile(type: FoundRepo["type"], path: string): boolean {
  if (type === "dataset") return true;
  if (type !== "model") return false;
  return MODEL_CONFIG_FILES.has(path) || WEIGHTS.test(path);
}

/** The UTC day of an instant, `YYYY-MM-DD`. */
export const dayOf = (at: Date) => at.toISOString().slice(0, 10);

/**
 * Which fetches open a caller's download window on a repository: the first
 * one in a window does, the rest of the window's do not.
 */
export interface DownloadWindow {
  /** True when no window of this key is open at `atMs`; opens one of `windowMs`. */
  open(key: string, atMs: number, windowMs: number): Promise<boolean>;
}

/** Windows in this process's memory (the default when no Redis is configured); closed ones go at each flush. */
export function createMemoryDownloadWindow(): DownloadWindow & { prune(nowMs: number): void } {
  const until = new Map<string, number>();
  return {
    async open(key, atMs, windowMs) {
      if ((until.get(key) ?? 0) > atMs) return false;
      until.set(key, atMs + windowMs);
      return true;
    },
    prune(nowMs) {
      for (const [key, end] of until) if (end <= nowMs) until.delete(key);
    },
  };
}

/**
 * Windows in Redis, one key each (`SET NX PX`), shared by every hub process:
 * a caller whose fetches land on several processes counts once per window. If
 * Redis is unreachable the fetch counts (a download may count twice, never
 * not at all) and the failure is logged.
 */
export function createRedisDownloadWindow(redis: Redis, prefix: string, logger: Logger): DownloadWindow {
  return {
    async open(key, _atMs, windowMs) {
      try {
        return (await redis.set(`${prefix}downloads:${key}`, "1", "PX", windowMs, "NX")) === "OK";
      } catch (err) {
        logger.error({ err: (err as Error).message }, "download window not shared: Redis failed");
        return true;
      }
    },
  };
}

export function createDownloadCounter({
  db,
  clock,
  logger,
  windowMs = 5 * 60_000,
  flushMs = 1_000,
  window = createMemoryDownloadWindow(),
}: {
  db: Db;
  clock: () => Date;
  logger: Logger;
  /** How long one caller's fetches of one repository count as one download. */
  windowMs?: number;
  flushMs?: number;
  /** Where each caller's windows are kept; this process's memory unless given. */
  window?: DownloadWindow & { prune?(nowMs: number): void };
}) {
  /** Window checks still under way; a flush waits for them, so what was recorded before it is written. */
  const asking = new Set<Promise<void>>();
  /** Counts waiting for the database, by repository and day. */
  const pending = new Map<string, { repositoryId: string; day: string; count: number }>();
  let timer: NodeJS.Timeout | null = null;
  let flushing: Promise<void> = Promise.resolve();

  async function write(batch: Array<{ repositoryId: string; day: string; count: number }>) {
    // Rows are locked in one order by every hub process, so two processes' batches never deadlock (PostgreSQL
    // would abort one, and its counts would be lost).
    const ordered = [...batch].sort((x, y) =>
      x.repositoryId === y.repositoryId
        ? x.day.localeCompare(y.day)
        : x.repositoryId < y.repositoryId
          ? -1
          : 1,
    );
    await db.transaction().execute(async (tx) => {
      for (const { repositoryId, day, count } of ordered) {
        await tx
          .insertInto("repo_downloads")
          .values({ repository_id: repositoryId, day, count })
          .onConflict((oc) =>
            oc.columns(["repository_id", "day"]).doUpdateSet({ count: sql`repo_downloads.count + ${count}` }),
          )
          .execute();
        await tx
          .updateTable("repo_stats")
          .set({
            downloads: sql`downloads + ${count}`,
            downloads_all_time: sql`downloads_all_time + ${count}`,
          })
          .where("repository_id", "=", repositoryId)
          .execute();
      }
    });
  }

  /** Writes what waits; concurrent calls queue behind each other. */
  async function flush(): Promise<void> {
    await Promise.all(asking);
    if (timer) clearTimeout(timer);
    timer = null;
    const batch = [...pending.values()];
    pending.clear();
    window.prune?.(clock().getTime());
    flushing = flushing.then(async () => {
      if (batch.length === 0) return;
      try {
        await write(batch);
      } catch (err) {
        logger.error({ err: (err as Error).message, repositories: batch.length }, "downloads not counted");
      }
    });
    return flushing;
  }

  return {
    /**
     * Notes a fetch of a file of a repository by a caller (an account id, or
     * the client's address for anonymous callers); counts it when it is a
     * query file and the caller's last counted download of the repository is
     * older than the window.
     */
    record(repo: FoundRepo, path: string, caller: string): void {
      if (!isQueryFile(repo.type, path)) return;
      const at = clock();
      const asked = window.open(`${repo.row.id} ${caller}`, at.getTime(), windowMs).then((first) => {
        asking.delete(asked);
        if (!first) return;
        const day = dayOf(at);
        const slot = `${repo.row.id} ${day}`;
        const waiting = pending.get(slot);
        if (waiting) waiting.count += 1;
        else pending.set(slot, { repositoryId: repo.row.id, day, count: 1 });
        timer ??= setTimeout(() => void flush(), flushMs).unref();
      });
      asking.add(asked);
    },
    flush,
  };
}

export type DownloadCounter = ReturnType<typeof createDownloadCounter>;
