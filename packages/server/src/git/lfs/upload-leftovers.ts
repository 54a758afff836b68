import type { MultipartStaging } from "./multipart-staging.js";
import type { ObjectStore } from "./object-store.js";
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
 * collector pass, in every process (removing what another process removed is fine).
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
  return async function collect(): Promise<LeftoverCollection> {
    const age = Math.max(graceSeconds, LEFTOVER_MIN_AGE_SECONDS);
    const before = new Date(clock().getTime() - age * 1000);
    const writes = await store.removeLeftovers(before);
    const staged = await staging.removeLeftovers(before);
    return {
      writes: writes.removed,
      stagedUploads: staged.removed,
      freedBytes: writes.freedBytes + staged.freedBytes,
    };
  };
}
