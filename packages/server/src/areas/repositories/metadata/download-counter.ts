import { sql } from "kysely";
import type { Logger } from "pino";
import type { Db } from "../../../db/database.js";
import type { FoundRepo } from "../../../domain/repositories.js";

/**
 * Counts downloads the way the Hugging Face Hub counts them: not per file,
 * but when a client fetches one of a repository's query files (a model's
 * configuration or weights, any file of a dataset), GET or HEAD, at most once
 * per caller and repository per window, so one `snapshot_download` or
 * `from_pretrained` is one download. Recording is synchronous and in memory;
 * the counts reach the database in one batch a second later, so counting
 * never slows a download. A crash loses at most that second's counts.
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

export function createDownloadCounter({
  db,
  clock,
  logger,
  windowMs = 5 * 60_000,
  flushMs = 1_000,
}: {
  db: Db;
  clock: () => Date;
  logger: Logger;
  /** How long one caller's fetches of one repository count as one download. */
  windowMs?: number;
  flushMs?: number;
}) {
  /** Until when each caller's download of each repository has been counted. */
  const counted = new Map<string, number>();
  /** Counts waiting for the database, by repository and day. */
  const pending = new Map<string, { repositoryId: string; day: string; count: number }>();
  let timer: NodeJS.Timeout | null = null;
  let flushing: Promise<void> = Promise.resolve();

  async function write(batch: Array<{ repositoryId: string; day: string; count: number }>) {
    await db.transaction().execute(async (tx) => {
      for (const { repositoryId, day, count } of batch) {
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
  function flush(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = null;
    const batch = [...pending.values()];
    pending.clear();
    const now = clock().getTime();
    for (const [key, until] of counted) if (until <= now) counted.delete(key);
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
      const key = `${repo.row.id} ${caller}`;
      if ((counted.get(key) ?? 0) > at.getTime()) return;
      counted.set(key, at.getTime() + windowMs);
      const day = dayOf(at);
      const slot = `${repo.row.id} ${day}`;
      const waiting = pending.get(slot);
      if (waiting) waiting.count += 1;
      else pending.set(slot, { repositoryId: repo.row.id, day, count: 1 });
      timer ??= setTimeout(() => void flush(), flushMs).unref();
    },
    flush,
  };
}

export type DownloadCounter = ReturnType<typeof createDownloadCounter>;
