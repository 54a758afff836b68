import { HASH_BYTES, hashToHex } from "../../../xet/hashing.js";

/** A chunk of a stored xorb as the hub keeps it: its hash, the length of its record, its uncompressed length. */
export interface StoredChunk {
  hash: Uint8Array;
  recordLength: number;
  length: number;
}

/** A chunk of a stored xorb with where its record starts and where its bytes start once decompressed. */
export interface StoredChunkLayout extends StoredChunk {
  offset: number;
  uncompressedLength: number;
  unpackedOffset: number;
}

/** A term of a registered file: chunks `[chunkStart, chunkEnd)` of a xorb (string form). */
export interface StoredTerm {
  xorbHash: string;
  chunkStart: number;
  chunkEnd: number;
  unpackedLength: number;
}

const CHUNK_BYTES = HASH_BYTES + 8;
const TERM_BYTES = HASH_BYTES + 12;

/** A xorb's chunk table, packed (40 bytes a chunk) and base64-encoded for a text column of either dialect. */
export function packChunks(chunks: readonly StoredChunk[]): string {
  const out = Buffer.alloc(chunks.length * CHUNK_BYTES);
  chunks.forEach((chunk, i) => {
    const at = i * CHUNK_BYTES;
    out.set(chunk.hash, at);
    out.writeUInt32LE(chunk.recordLength, at + HASH_BYTES);
    out.writeUInt32LE(chunk.length, at + HASH_BYTES + 4);
  });
  return out.toString("base64");
}

/** The chunk table `packChunks` wrote, with each chunk's record offset and unpacked offset. */
export function unpackChunks(packed: string): StoredChunkLayout[] {
  const bytes = Buffer.from(packed, "base64");
  const chunks: StoredChunkLayout[] = [];
  let offset = 0;
  let unpackedOffset = 0;
  for (let at = 0; at + CHUNK_BYTES <= bytes.length; at += CHUNK_BYTES) {
    const recordLength = bytes.readUInt32LE(at + HASH_BYTES);
    const length = bytes.readUInt32LE(at + HASH_BYTES + 4);
    chunks.push({
      hash: Uint8Array.from(bytes.subarray(at, at + HASH_BYTES)),
      recordLength,
      length,
      offset,
      uncompressedLength: length,
      unpackedOffset,
    });
    offset += recordLength;
    unpackedOffset += length;
  }
  return chunks;
}

/** A file's terms, packed (44 bytes a term) and base64-encoded. */
export function packTerms(
  terms: readonly { xorbHash: Uint8Array; chunkStart: number; chunkEnd: number; unpackedLength: number }[],
): string {
  const out = Buffer.alloc(terms.length * TERM_BYTES);
  terms.forEach((term, i) => {
    const at = i * TERM_BYTES;
    out.set(term.xorbHash, at);
    out.writeUInt32LE(term.chunkStart, at + HASH_BYTES);
    out.writeUInt32LE(term.chunkEnd, at + HASH_BYTES + 4);
    out.writeUInt32LE(term.unpackedLength, at + HASH_BYTES + 8);
  });
  return out.toString("base64");
}

/** The terms `packTerms` wrote, with xorb hashes in their string form. */
export function unpackTerms(packed: string): StoredTerm[] {
  const bytes = Buffer.from(packed, "base64");
  const terms: StoredTerm[] = [];
  for (let at = 0; at + TERM_BYTES <= bytes.length; at += TERM_BYTES) {
    terms.push({
      xorbHash: hashToHex(bytes.subarray(at, at + HASH_BYTES)),
      chunkStart: bytes.readUInt32LE(at + HASH_BYTES),
      chunkEnd: bytes.readUInt32LE(at + HASH_BYTES + 4),
      unpackedLength: bytes.readUInt32LE(at + HASH_BYTES + 8),
    });
  }
  return terms;
}
