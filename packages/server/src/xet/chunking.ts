/**
 * Content-defined chunking of the Xet protocol: a Gear rolling hash over the bytes, a boundary where its top 16
 * bits are zero, chunks of 8 KiB to 128 KiB (64 KiB on average). Boundaries depend on the content only, never on
 * how the bytes arrive, so the {@link Chunker} can be fed any buffers.
 * https://huggingface.co/docs/xet/chunking
 */
import { GEAR_TABLE } from "./gear-table.js";
import { chunkHash } from "./hashing.js";

/** The target (average) chunk size; the boundary mask has log2 of it (16) one-bits at the top. */
export const TARGET_CHUNK_SIZE = 64 * 1024;
/** No boundary is taken before a chunk has this many bytes (the last chunk of a file may be shorter). */
export const MIN_CHUNK_SIZE = TARGET_CHUNK_SIZE / 8;
/** A boundary is forced when a chunk reaches this many bytes. */
export const MAX_CHUNK_SIZE = TARGET_CHUNK_SIZE * 2;

/**
 * The Gear hash at a position depends on the last 64 bytes only (each step shifts it left by one bit), so the
 * first bytes of a chunk need not be hashed at all: hashing starts 65 bytes before the first position where a
 * boundary may be taken (the reference's skip-ahead), which yields the same hash there as hashing from the chunk's
 * first byte.
 */
const HASH_WINDOW = 64;
const HASH_FROM = MIN_CHUNK_SIZE - HASH_WINDOW - 1;
/** A boundary may be taken after the byte at this offset in the chunk (the chunk then has MIN_CHUNK_SIZE bytes). */
const TEST_FROM = MIN_CHUNK_SIZE - 1;

/** The table split into 32-bit words, for int32 arithmetic. */
const GEAR_HIGH = new Int32Array(256);
const GEAR_LOW = new Int32Array(256);
GEAR_TABLE.forEach((hex, i) => {
  GEAR_HIGH[i] = Number.parseInt(hex.slice(0, 8), 16) | 0;
  GEAR_LOW[i] = Number.parseInt(hex.slice(8), 16) | 0;
});

/**
 * A streaming chunker. {@link push} buffers of any size (the chunker keeps no bytes, only its hash state and
 * the current chunk's length) and get the end offsets of the chunks they complete; {@link finish} ends the last
 * chunk. For any split of the same bytes it returns the boundaries of the reference implementation.
 *
 * The 64-bit hash `h = (h << 1) + TABLE[byte]` is kept as two int32 words. What the low word gives the high
 * one is the bit the shift moves out plus the carry of the low addition, computed without a branch (on random
 * data a branch there mispredicts half the time) from the sign bits: the carry out of `a + b` is the top bit of
 * `(a & b) | ((a | b) & ~(a + b))`.
 */
export class Chunker {
  private high = 0;
  private low = 0;
  /** Bytes of the current chunk seen so far. */
  private chunkLength = 0;
  /** Stream offset where the current chunk starts. */
  private chunkStart = 0;

  /** Feed the next bytes of the stream; returns the (exclusive) end offsets of the chunks they complete. */
  push(data: Uint8Array): number[] {
    const ends: number[] = [];
    const n = data.length;
    let pos = 0;
    while (pos < n) {
      let length = this.chunkLength;
      if (length < HASH_FROM) {
        const skip = Math.min(HASH_FROM - length, n - pos);
        pos += skip;
        length += skip;
      }
      if (length < TEST_FROM && pos < n) {
        const warm = Math.min(TEST_FROM - length, n - pos);
        this.warm(data, pos, pos + warm);
        pos += warm;
        length += warm;
      }
      if (length >= TEST_FROM && pos < n) {
        const scanEnd = Math.min(n, pos + (MAX_CHUNK_SIZE - length));
        const found = this.scan(data, pos, scanEnd);
        if (found >= 0) {
          length += found + 1 - pos;
          pos = found + 1;
        } else {
          length += scanEnd - pos;
          pos = scanEnd;
        }
        if (found >= 0 || length === MAX_CHUNK_SIZE) {
          this.chunkStart += length;
          ends.push(this.chunkStart);
          this.chunkLength = 0;
          this.high = 0;
          this.low = 0;
          continue;
        }
      }
      this.chunkLength = length;
    }
    return ends;
  }

  /** End of the stream: returns the end offset of the last chunk, if any bytes are left in it. */
  finish(): number[] {
    if (this.chunkLength === 0) return [];
    this.chunkStart += this.chunkLength;
    this.chunkLength = 0;
    this.high = 0;
    this.low = 0;
    return [this.chunkStart];
  }

  /** Hash bytes where no boundary may be taken yet. */
  private warm(data: Uint8Array, from: number, to: number): void {
    let high = this.high;
    let low = this.low;
    for (let i = from; i < to; i++) {
      const b = data[i] as number;
      const table = GEAR_LOW[b] as number;
      const shifted = low << 1;
      const sum = (shifted + table) | 0;
      const carry = (low >>> 31) + (((shifted & table) | ((shifted | table) & ~sum)) >>> 31);
      high = ((high << 1) + (GEAR_HIGH[b] as number) + carry) | 0;
      low = sum;
    }
    this.high = high;
    this.low = low;
  }

  /** Hash bytes, stopping at the first one after which the top 16 bits of the hash are zero; -1 if none. */
  private scan(data: Uint8Array, from: number, to: number): number {
    let high = this.high;
    let low = this.low;
    for (let i = from; i < to; i++) {
      const b = data[i] as number;
      const table = GEAR_LOW[b] as number;
      const shifted = low << 1;
      const sum = (shifted + table) | 0;
      const carry = (low >>> 31) + (((shifted & table) | ((shifted | table) & ~sum)) >>> 31);
      high = ((high << 1) + (GEAR_HIGH[b] as number) + carry) | 0;
      low = sum;
      if (high >>> 16 === 0) {
        this.high = high;
        this.low = low;
        return i;
      }
    }
    this.high = high;
    this.low = low;
    return -1;
  }
}

/** The end offsets of the chunks of a whole buffer (empty for an empty buffer). */
export function chunkBoundaries(data: Uint8Array): number[] {
  const chunker = new Chunker();
  return [...chunker.push(data), ...chunker.finish()];
}

/** A chunk of a file: where it starts, its bytes and its hash. */
export interface Chunk {
  offset: number;
  data: Uint8Array;
  hash: Uint8Array;
}

/** The chunks of a whole buffer with their hashes. Their `data` are views into `data`, not copies. */
export function chunkBuffer(data: Uint8Array): Chunk[] {
  let start = 0;
  return chunkBoundaries(data).map((end) => {
    const chunk = data.subarray(start, end);
    const result = { offset: start, data: chunk, hash: chunkHash(chunk) };
    start = end;
    return result;
  });
}

/**
 * The chunks of a stream of buffers (a file read from disk or a request body), with their hashes, in order. A
 * chunk that lies within one input buffer is a view into it; one that spans buffers is a copy.
 */
export async function* chunkStream(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
): AsyncGenerator<Chunk> {
  const chunker = new Chunker();
  let pending: Uint8Array[] = [];
  let pendingStart = 0;
  const take = (end: number, piece: Uint8Array, pieceStart: number): Chunk => {
    const fromPiece = piece.subarray(Math.max(0, pendingStart - pieceStart), end - pieceStart);
    let data = fromPiece;
    if (pending.length > 0) {
      data = new Uint8Array(end - pendingStart);
      let at = 0;
      for (const part of pending) {
        data.set(part, at);
        at += part.length;
      }
      data.set(fromPiece, at);
      pending = [];
    }
    const chunk = { offset: pendingStart, data, hash: chunkHash(data) };
    pendingStart = end;
    return chunk;
  };
  let streamOffset = 0;
  for await (const piece of source) {
    const pieceStart = streamOffset;
    streamOffset += piece.length;
    for (const end of chunker.push(piece)) yield take(end, piece, pieceStart);
    if (pendingStart < streamOffset) pending.push(piece.subarray(Math.max(0, pendingStart - pieceStart)));
  }
  for (const end of chunker.finish()) {
    const last = pending.pop() ?? new Uint8Array(0);
    yield take(end, last, end - last.length);
  }
}
