import type { FastifyBaseLogger } from "fastify";
import type { InferenceUsageRow } from "../db/schema.js";

/** Where usage rows are written with their charges; the inference area implements it. */
export interface UsageLedger {
  recordBatch(rows: ReadonlyArray<{ usage: InferenceUsageRow; ownerType: string }>): Promise<void>;
}

/** How long a ledger row may wait before its batch is written, and how many rows a batch holds at most. */
const FLUSH_MS = 50;
const MAX_BATCH = 500;

/**
 * Writes the usage ledger behind the responses: rows queue in memory and are
 * written (with their charges) in one transaction every FLUSH_MS, instead of
 * one transaction per request, which cost more than the relaying itself.
 * Closing writes what is queued. A crash can lose the last FLUSH_MS of rows.
 */
export function createUsageWriter(inference: UsageLedger, logger: FastifyBaseLogger) {
  let queue: Array<{ usage: InferenceUsageRow; ownerType: string }> = [];
  let timer: NodeJS.Timeout | null = null;
  let writing: Promise<void> = Promise.resolve();

  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = null;
    const batch = queue;
    queue = [];
    // Batches are written one after another, so charges apply in order.
    writing = writing.then(() =>
      inference.recordBatch(batch).catch((err: unknown) => {
        logger.error({ err, rows: batch.length }, "usage rows not recorded");
      }),
    );
    return writing;
  };

  return {
    record(usage: InferenceUsageRow, ownerType: string): void {
      queue.push({ usage, ownerType });
      if (queue.length >= MAX_BATCH) void flush();
      else timer ??= setTimeout(() => void flush(), FLUSH_MS);
    },
    close: flush,
  };
}

export type UsageWriter = ReturnType<typeof createUsageWriter>;
