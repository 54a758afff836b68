import { randomFillSync } from "node:crypto";

/** Random bytes drawn in blocks, so an id costs a copy rather than a call into OpenSSL. */
const pool = Buffer.alloc(16 * 256);
let used = pool.length;

/**
 * A UUID whose order follows its creation time (version 7, RFC 9562 §5.7):
 * 48 bits of Unix milliseconds, then 74 random bits. As a primary key of a
 * table that only grows (the usage ledger), each new row lands at the end of
 * the index, so a batch of inserts dirties a few pages instead of one per row
 * (a random version 4 key made every ledger row write a page of the index).
 * It tells whoever holds it when it was made, to the millisecond.
 */
export function timeOrderedUuid(now: number = Date.now()): string {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const bytes = Buffer.from(pool.subarray(used, used + 16));
  used += 16;
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = 0x70 | ((bytes[6] ?? 0) & 0x0f);
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
