/**
 * Xorbs: a sequence of chunks, each an 8-byte header (version, compressed length, compression scheme,
 * uncompressed length) and its compressed bytes, at most 64 MiB in all. Clients upload the chunk records only;
 * the reference's stored form appends a footer (XETBLOB: the hash, the chunk hashes and the chunk boundaries),
 * which is accepted when it agrees with the chunks. Parsing decompresses and hashes every chunk, so a parsed
 * xorb is a verified one: its hash is the Merkle hash of its chunks.
 * https://huggingface.co/docs/xet/xorb
 */
import { MAX_CHUNK_SIZE } from "./chunking.js";
import { HASH_BYTES, chunkHash, hashToHex, hashesEqual, hashFromHex, xorbHash } from "./hashing.js";
import { lz4CompressFrame, lz4DecompressFrame } from "./lz4.js";
import { XetFormatError } from "./xet-format-error.js";

/**
 * The most chunk data (uncompressed) a xorb holds: the reference client cuts a xorb before a chunk would take
 * its data past this (`MAX_XORB_BYTES`), so its serialized form is this plus a header per chunk.
 */
export const XORB_MAX_BYTES = 64 * 1024 * 1024;
/** The most chunks the reference client puts in a xorb (`MAX_XORB_CHUNKS`). */
export const XORB_MAX_CHUNKS = 8 * 1024;
/** Every chunk record starts with an 8-byte header. */
export const CHUNK_HEADER_BYTES = 8;
/**
 * The largest serialized xorb a CAS server accepts: 64 MiB of chunk data, the chunk headers of the most chunks
 * a xorb holds, and room for a stored-form footer (a hash and a boundary pair per chunk). The specification
 * words the limit as 64 MiB serialized, but hf_xet counts the chunk data only: with incompressible data most of
 * its full xorbs are a few KiB over 64 MiB.
 */
export const XORB_MAX_SERIALIZED_BYTES =
  XORB_MAX_BYTES + XORB_MAX_CHUNKS * (CHUNK_HEADER_BYTES + 32 + 8) + 1024;
/** The only chunk header version. */
const CHUNK_HEADER_VERSION = 0;
/** The reference accepts compressed lengths up to twice the largest chunk. */
const MAX_COMPRESSED_LENGTH = 2 * MAX_CHUNK_SIZE;

/** The compression schemes of chunk records, by their byte in the chunk header. */
export const CompressionScheme = { None: 0, LZ4: 1, ByteGrouping4LZ4: 2 } as const;
export type CompressionScheme = (typeof CompressionScheme)[keyof typeof CompressionScheme];
const SCHEME_NAMES: Record<number, string> = { 0: "none", 1: "lz4", 2: "bg4-lz4" };

/** A chunk of a parsed xorb. */
export interface XorbChunk {
  index: number;
  /** The chunk hash of its uncompressed bytes. */
  hash: Uint8Array;
  /** Byte offset of its header in the xorb. */
  offset: number;
  /** Bytes of the record: header and compressed data. */
  recordLength: number;
  compressedLength: number;
  uncompressedLength: number;
  scheme: CompressionScheme;
  /** Offset of its bytes in the concatenation of the xorb's uncompressed chunks. */
  unpackedOffset: number;
}

/** A parsed and verified xorb. */
export interface ParsedXorb {
  /** The Merkle hash of its chunks: the name it must be uploaded under. */
  hash: Uint8Array;
  chunks: XorbChunk[];
  /** Bytes of the chunk records: the whole xorb unless a stored-form footer follows. */
  recordsLength: number;
  /** Total uncompressed bytes. */
  unpackedLength: number;
  /** Whether a stored-form (XETBLOB) footer followed the records (it was checked against them). */
  hasFooter: boolean;
}

const FOOTER_IDENT = new TextEncoder().encode("XETBLOB");
const HASHES_IDENT = new TextEncoder().encode("XBLBHSH");
const BOUNDARIES_IDENT = new TextEncoder().encode("XBLBBND");
const FOOTER_VERSION = 1;
const FOOTER_HASHES_VERSION = 0;
const FOOTER_BOUNDARIES_VERSION = 1;
const FOOTER_BUFFER_BYTES = 16;

function startsWith(bytes: Uint8Array, at: number, ident: Uint8Array): boolean {
  if (bytes.length - at < ident.length) return false;
  for (let i = 0; i < ident.length; i++) if (bytes[at + i] !== ident[i]) return false;
  return true;
}

function u24(bytes: Uint8Array, at: number): number {
  return (bytes[at] as number) | ((bytes[at + 1] as number) << 8) | ((bytes[at + 2] as number) << 16);
}

function writeU32(out: Uint8Array, at: number, value: number): void {
  out[at] = value & 0xff;
  out[at + 1] = (value >>> 8) & 0xff;
  out[at + 2] = (value >>> 16) & 0xff;
  out[at + 3] = (value >>> 24) & 0xff;
}

/**
 * Byte grouping (BG4): byte i of the data goes to group i mod 4, and the groups are concatenated, so bytes at
 * the same position of 4-byte values (floats, integers) sit together before LZ4 compresses them.
 */
export function byteGroup4(data: Uint8Array): Uint8Array {
  const n = data.length;
  const out = new Uint8Array(n);
  const base = n >>> 2;
  const rest = n & 3;
  let o = 0;
  for (let g = 0; g < 4; g++) {
    const count = base + (g < rest ? 1 : 0);
    for (let k = 0, i = g; k < count; k++, i += 4) out[o++] = data[i] as number;
  }
  return out;
}

/** The inverse of {@link byteGroup4}. */
export function byteUngroup4(grouped: Uint8Array): Uint8Array {
  const n = grouped.length;
  const out = new Uint8Array(n);
  const base = n >>> 2;
  const rest = n & 3;
  let o = 0;
  for (let g = 0; g < 4; g++) {
    const count = base + (g < rest ? 1 : 0);
    for (let k = 0, i = g; k < count; k++, i += 4) out[i] = grouped[o++] as number;
  }
  return out;
}

interface ChunkRecord {
  offset: number;
  scheme: CompressionScheme;
  compressedLength: number;
  uncompressedLength: number;
  data: Uint8Array;
}

/** Read and decompress the chunk record at `offset`; `index` names the chunk in errors. */
function readRecord(bytes: Uint8Array, offset: number, index: number): ChunkRecord {
  const where = `chunk ${index} at byte ${offset}`;
  const at = { offset, chunkIndex: index };
  if (bytes.length - offset < CHUNK_HEADER_BYTES) {
    throw new XetFormatError(
      "xorb",
      `xorb truncated: ${where} needs an ${CHUNK_HEADER_BYTES}-byte header but only ${bytes.length - offset} bytes remain`,
      at,
    );
  }
  const version = bytes[offset] as number;
  if (version !== CHUNK_HEADER_VERSION) {
    throw new XetFormatError(
      "xorb",
      `bad chunk header: ${where} has version ${version}, expected ${CHUNK_HEADER_VERSION}`,
      at,
    );
  }
  const compressedLength = u24(bytes, offset + 1);
  const schemeByte = bytes[offset + 4] as number;
  const uncompressedLength = u24(bytes, offset + 5);
  if (SCHEME_NAMES[schemeByte] === undefined) {
    throw new XetFormatError(
      "xorb",
      `bad chunk header: ${where} has unknown compression scheme ${schemeByte}`,
      at,
    );
  }
  const scheme = schemeByte as CompressionScheme;
  if (uncompressedLength === 0) throw new XetFormatError("xorb", `bad chunk header: ${where} is empty`, at);
  if (uncompressedLength > MAX_CHUNK_SIZE) {
    throw new XetFormatError(
      "xorb",
      `bad chunk header: ${where} has ${uncompressedLength} uncompressed bytes, more than the ${MAX_CHUNK_SIZE} a chunk may have`,
      at,
    );
  }
  if (compressedLength > MAX_COMPRESSED_LENGTH) {
    throw new XetFormatError(
      "xorb",
      `bad chunk header: ${where} has ${compressedLength} compressed bytes, more than ${MAX_COMPRESSED_LENGTH}`,
      at,
    );
  }
  if (scheme === CompressionScheme.None && compressedLength !== uncompressedLength) {
    throw new XetFormatError(
      "xorb",
      `bad chunk header: ${where} is uncompressed but announces ${compressedLength} stored and ${uncompressedLength} uncompressed bytes`,
      at,
    );
  }
  const dataStart = offset + CHUNK_HEADER_BYTES;
  if (bytes.length - dataStart < compressedLength) {
    throw new XetFormatError(
      "xorb",
      `xorb truncated: ${where} announces ${compressedLength} compressed bytes but only ${bytes.length - dataStart} remain`,
      at,
    );
  }
  const stored = bytes.subarray(dataStart, dataStart + compressedLength);
  let data: Uint8Array;
  try {
    if (scheme === CompressionScheme.None) data = stored;
    else if (scheme === CompressionScheme.LZ4)
      data = lz4DecompressFrame(stored, uncompressedLength, dataStart);
    else data = byteUngroup4(lz4DecompressFrame(stored, uncompressedLength, dataStart));
  } catch (error) {
    if (!(error instanceof XetFormatError)) throw error;
    throw new XetFormatError(
      "xorb",
      `bad compression: ${where} (${SCHEME_NAMES[scheme]}): ${error.message}`,
      {
        offset: error.offset ?? dataStart,
        chunkIndex: index,
      },
    );
  }
  return { offset, scheme, compressedLength, uncompressedLength, data };
}

/**
 * Decode consecutive chunk records (a whole xorb, or the byte range of a few of its chunks that a client
 * downloads) into the chunks' bytes. A stored-form footer ends the records.
 */
export function decodeChunkRecords(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.length && !startsWith(bytes, offset, FOOTER_IDENT);) {
    const record = readRecord(bytes, offset, out.length);
    out.push(record.data);
    offset += CHUNK_HEADER_BYTES + record.compressedLength;
  }
  return out;
}

/** Options of {@link parseXorb}. */
export interface ParseXorbOptions {
  /** The hash the xorb is uploaded under (bytes or its string form): a different Merkle hash is an error. */
  expectedHash?: Uint8Array | string;
}

/**
 * Parse and verify a serialized xorb: every chunk header, every chunk's decompression (to exactly its announced
 * length), the 64 MiB limit, and the Merkle hash of the chunk hashes against `expectedHash` when given. A
 * stored-form footer after the records must agree with them. Throws {@link XetFormatError} naming the byte and
 * the chunk at fault.
 */
export function parseXorb(bytes: Uint8Array, options: ParseXorbOptions = {}): ParsedXorb {
  if (bytes.length > XORB_MAX_SERIALIZED_BYTES) {
    throw new XetFormatError(
      "xorb",
      `xorb is ${bytes.length} bytes, more than the ${XORB_MAX_SERIALIZED_BYTES}-byte limit (64 MiB of chunk data with its headers)`,
    );
  }
  const chunks: XorbChunk[] = [];
  let offset = 0;
  let unpacked = 0;
  while (offset < bytes.length && !startsWith(bytes, offset, FOOTER_IDENT)) {
    const record = readRecord(bytes, offset, chunks.length);
    const recordLength = CHUNK_HEADER_BYTES + record.compressedLength;
    chunks.push({
      index: chunks.length,
      hash: chunkHash(record.data),
      offset,
      recordLength,
      compressedLength: record.compressedLength,
      uncompressedLength: record.uncompressedLength,
      scheme: record.scheme,
      unpackedOffset: unpacked,
    });
    unpacked += record.uncompressedLength;
    offset += recordLength;
    if (unpacked > XORB_MAX_BYTES) {
      throw new XetFormatError(
        "xorb",
        `xorb holds more than ${XORB_MAX_BYTES} bytes (64 MiB) of chunk data by chunk ${chunks.length - 1}`,
        { offset: offset - recordLength, chunkIndex: chunks.length - 1 },
      );
    }
  }
  if (chunks.length === 0) throw new XetFormatError("xorb", "xorb has no chunks", { offset: 0 });
  const hash = xorbHash(chunks.map((c) => ({ hash: c.hash, length: c.uncompressedLength })));
  const recordsLength = offset;
  const hasFooter = offset < bytes.length;
  if (hasFooter) checkFooter(bytes, recordsLength, hash, chunks);
  if (options.expectedHash !== undefined) {
    const expected =
      typeof options.expectedHash === "string" ? hashFromHex(options.expectedHash) : options.expectedHash;
    if (!hashesEqual(expected, hash)) {
      throw new XetFormatError(
        "xorb",
        `xorb hash mismatch: its ${chunks.length} chunks hash to ${hashToHex(hash)}, but it was uploaded as ${hashToHex(expected)}`,
      );
    }
  }
  return { hash, chunks, recordsLength, unpackedLength: unpacked, hasFooter };
}

/** The uncompressed bytes of chunks `[start, end)` of a xorb, concatenated. */
export function readXorbRange(bytes: Uint8Array, parsed: ParsedXorb, start: number, end: number): Uint8Array {
  if (!(
    Number.isInteger(start) &&
    Number.isInteger(end) &&
    start >= 0 &&
    start < end &&
    end <= parsed.chunks.length
  )) {
    throw new XetFormatError(
      "xorb",
      `chunk range [${start}, ${end}) is not within the xorb's ${parsed.chunks.length} chunks`,
    );
  }
  const first = parsed.chunks[start] as XorbChunk;
  const last = parsed.chunks[end - 1] as XorbChunk;
  const out = new Uint8Array(last.unpackedOffset + last.uncompressedLength - first.unpackedOffset);
  let at = 0;
  for (let i = start; i < end; i++) {
    const chunk = parsed.chunks[i] as XorbChunk;
    const record = readRecord(bytes, chunk.offset, i);
    out.set(record.data, at);
    at += record.data.length;
  }
  return out;
}

function footerMismatch(what: string, offset: number): never {
  throw new XetFormatError("xorb", `bad xorb footer: ${what}`, { offset });
}

/** Check a stored-form footer at `start` against the chunks parsed before it. */
function checkFooter(bytes: Uint8Array, start: number, hash: Uint8Array, chunks: readonly XorbChunk[]): void {
  const n = chunks.length;
  const expected = xorbFooter(hash, chunks);
  if (bytes.length - start < 8) footerMismatch("truncated", start);
  if (bytes[start + 7] !== FOOTER_VERSION) {
    footerMismatch(`version ${bytes[start + 7]} is not supported (expected ${FOOTER_VERSION})`, start + 7);
  }
  if (bytes.length - start !== expected.length) {
    footerMismatch(`${bytes.length - start} bytes, expected ${expected.length} for ${n} chunks`, start);
  }
  const hashesAt = start + 8 + HASH_BYTES + 12;
  chunks.forEach((chunk, index) => {
    const at = hashesAt + index * HASH_BYTES;
    if (
      startsWith(bytes, hashesAt - 12, HASHES_IDENT) &&
      !hashesEqual(bytes.subarray(at, at + HASH_BYTES), chunk.hash)
    ) {
      throw new XetFormatError(
        "xorb",
        `bad xorb footer: it lists chunk ${index} as ${hashToHex(bytes.subarray(at, at + HASH_BYTES))}, but the chunk's bytes hash to ${hashToHex(chunk.hash)}`,
        { offset: at, chunkIndex: index },
      );
    }
  });
  if (!hashesEqual(bytes.subarray(start + 8, start + 8 + HASH_BYTES), hash)) {
    footerMismatch(
      `names xorb ${hashToHex(bytes.subarray(start + 8, start + 8 + HASH_BYTES))}, but the chunks hash to ${hashToHex(hash)}`,
      start + 8,
    );
  }
  const nonceAt = expected.length - 4 - FOOTER_BUFFER_BYTES;
  for (let i = 0; i < expected.length; i++) {
    if (i >= nonceAt && i < nonceAt + FOOTER_BUFFER_BYTES) continue;
    if (bytes[start + i] !== expected[i]) {
      footerMismatch(
        `byte ${start + i} does not agree with the chunks (chunk hashes, boundaries or lengths)`,
        start + i,
      );
    }
  }
}

/**
 * The reference's stored-form xorb footer (version 1) for these chunks: XETBLOB, the xorb hash, the chunk hashes
 * (XBLBHSH), the records' end offsets and the unpacked end offsets (XBLBBND), the chunk count, the offsets of
 * those sections from the end, a 16-byte reserved buffer, and the footer's length.
 */
export function xorbFooter(
  hash: Uint8Array,
  chunks: readonly Pick<
    XorbChunk,
    "hash" | "offset" | "recordLength" | "unpackedOffset" | "uncompressedLength"
  >[],
): Uint8Array {
  const n = chunks.length;
  const hashesSection = 7 + 1 + 4 + n * HASH_BYTES;
  const boundariesSection = 7 + 1 + 4 + n * 8;
  const tail = 4 + 4 + 4 + FOOTER_BUFFER_BYTES;
  const infoLength = 7 + 1 + HASH_BYTES + hashesSection + boundariesSection + tail;
  const out = new Uint8Array(infoLength + 4);
  let o = 0;
  out.set(FOOTER_IDENT, o);
  o += 7;
  out[o++] = FOOTER_VERSION;
  out.set(hash, o);
  o += HASH_BYTES;
  out.set(HASHES_IDENT, o);
  o += 7;
  out[o++] = FOOTER_HASHES_VERSION;
  writeU32(out, o, n);
  o += 4;
  for (const chunk of chunks) {
    out.set(chunk.hash, o);
    o += HASH_BYTES;
  }
  out.set(BOUNDARIES_IDENT, o);
  o += 7;
  out[o++] = FOOTER_BOUNDARIES_VERSION;
  writeU32(out, o, n);
  o += 4;
  for (const chunk of chunks) {
    writeU32(out, o, chunk.offset + chunk.recordLength);
    o += 4;
  }
  for (const chunk of chunks) {
    writeU32(out, o, chunk.unpackedOffset + chunk.uncompressedLength);
    o += 4;
  }
  writeU32(out, o, n);
  writeU32(out, o + 4, boundariesSection + tail + hashesSection);
  writeU32(out, o + 8, boundariesSection + tail);
  o += 12 + FOOTER_BUFFER_BYTES;
  writeU32(out, o, infoLength);
  return out;
}

/** How {@link serializeXorb} compresses chunks. */
export type XorbCompression = "none" | "lz4" | "bg4-lz4" | "auto";

/** Options of {@link serializeXorb}. */
export interface SerializeXorbOptions {
  /**
   * `lz4` (the default) or `bg4-lz4` compress every chunk with that scheme; `auto` tries both and keeps the
   * smaller; `none` stores chunks as they are. A chunk that does not shrink is stored uncompressed.
   */
  compression?: XorbCompression;
  /** Append the reference's stored-form footer (uploads have none). */
  footer?: boolean;
}

/** A serialized xorb with its hash and chunk layout. */
export interface SerializedXorb extends ParsedXorb {
  bytes: Uint8Array;
}

function compress(
  data: Uint8Array,
  compression: XorbCompression,
): { scheme: CompressionScheme; stored: Uint8Array } {
  let best: { scheme: CompressionScheme; stored: Uint8Array } = {
    scheme: CompressionScheme.None,
    stored: data,
  };
  if (compression === "lz4" || compression === "auto") {
    const stored = lz4CompressFrame(data);
    if (stored.length < best.stored.length) best = { scheme: CompressionScheme.LZ4, stored };
  }
  if (compression === "bg4-lz4" || compression === "auto") {
    const stored = lz4CompressFrame(byteGroup4(data));
    if (stored.length < best.stored.length) best = { scheme: CompressionScheme.ByteGrouping4LZ4, stored };
  }
  return best;
}

/**
 * Serialize chunks (each at most 128 KiB, in order) into a xorb: its bytes as a client uploads them (or with the
 * stored-form footer), its hash and its chunk layout.
 */
export function serializeXorb(
  chunkData: readonly Uint8Array[],
  options: SerializeXorbOptions = {},
): SerializedXorb {
  if (chunkData.length === 0) throw new RangeError("a xorb holds at least one chunk");
  const compression = options.compression ?? "lz4";
  const chunks: XorbChunk[] = [];
  const records: Uint8Array[] = [];
  let offset = 0;
  let unpacked = 0;
  chunkData.forEach((data, index) => {
    if (data.length === 0 || data.length > MAX_CHUNK_SIZE) {
      throw new RangeError(`chunk ${index} has ${data.length} bytes; a chunk has 1 to ${MAX_CHUNK_SIZE}`);
    }
    const { scheme, stored } = compress(data, compression);
    const record = new Uint8Array(CHUNK_HEADER_BYTES + stored.length);
    record[0] = CHUNK_HEADER_VERSION;
    record[1] = stored.length & 0xff;
    record[2] = (stored.length >>> 8) & 0xff;
    record[3] = (stored.length >>> 16) & 0xff;
    record[4] = scheme;
    record[5] = data.length & 0xff;
    record[6] = (data.length >>> 8) & 0xff;
    record[7] = (data.length >>> 16) & 0xff;
    record.set(stored, CHUNK_HEADER_BYTES);
    records.push(record);
    chunks.push({
      index,
      hash: chunkHash(data),
      offset,
      recordLength: record.length,
      compressedLength: stored.length,
      uncompressedLength: data.length,
      scheme,
      unpackedOffset: unpacked,
    });
    offset += record.length;
    unpacked += data.length;
  });
  const hash = xorbHash(chunks.map((c) => ({ hash: c.hash, length: c.uncompressedLength })));
  if (options.footer) records.push(xorbFooter(hash, chunks));
  const bytes = new Uint8Array(records.reduce((sum, r) => sum + r.length, 0));
  let at = 0;
  for (const record of records) {
    bytes.set(record, at);
    at += record.length;
  }
  if (unpacked > XORB_MAX_BYTES)
    throw new RangeError(`the chunks hold ${unpacked} bytes, more than the 64 MiB limit`);
  return {
    bytes,
    hash,
    chunks,
    recordsLength: offset,
    unpackedLength: unpacked,
    hasFooter: options.footer === true,
  };
}
