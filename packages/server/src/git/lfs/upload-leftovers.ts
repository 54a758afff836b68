import type { MultipartStaging } from "./multipart-staging.js";
import type { Leftovers, ObjectStore } from "./object-store.js";
import { TRANSFER_URL_TTL_SECONDS } from "./transfer-url.js";

/**
 * The least time anything an upload left behind stays untouched before it is removed: twice the life of the
 * signed URLs an upload's parts and completion are sent to, so no upload a client may still finish is cut.
 */
export const LEFTOVER_MIN_AGE_SECONDS = 2 * TRANSFER_URL_TTL_SECONDS;

/** What one pass removed. */
export type LeftoverCollection = {
  /** Temporary files and incomplete multipart uploads of the object store. */
  writes: number;
  /** Multipart LFS uploads (the Hugging Face extension) whose parts waited for a completion that never came. */
  stagedUploads: number;
  freedBytes: number;
};

/**
 * Removes what uploads left behind once nothing touched it for the grace period (or `LEFTOVER_MIN_AGE_SECONDS`,
 * if longer): a process killed mid-upload leaves a temporary file or an incomplete multipart upload, a client
 * that never completes its multipart upload leaves its parts. None of it was ever visible. Run after each
 * collector pass, in every process (removing what another process removed is fine). The store's leftovers and
 * the staged uploads are gone through apart: a failure of one (a permission the store's credentials lack)
 * still lets the other run, and is thrown after it.
 */
export function createLeftoverCollector({
  store,
  staging,
  clock,
  graceSeconds,
}: {
  store: ObjectStore;
  staging: MultipartStaging;
  clock: () => Date;
  graceSeconds: number;
}) {
  return async function collect(signal?: AbortSignal): Promise<LeftoverCollection> {
    const age = Math.max(graceSeconds, LEFTOVER_MIN_AGE_SECONDS);
    const before = new Date(clock().getTime() - age * 1000);
    const failures: string[] = [];
    const attempt = (what: string, work: () => Promise<Leftovers>) =>
      work().catch((err: unknown) => {
        failures.push(`${what}: ${(err as Error).message}`);
        return { removed: 0, freedBytes: 0 };
      });
    const writes = await attempt("the store's leftovers", () => store.removeLeftovers(before, signal));
    const staged = await attempt("staged multipart uploads", () => staging.removeLeftovers(before, signal));
    if (failures.length > 0) throw new Error(failures.join("; "));
    return {
      writes: writes.removed,
      stagedUploads: staged.removed,
      freedBytes: writes.freedBytes + staged.freedBytes,
    };
  };
}
