/**
 * Shards (the MDB shard format): a 48-byte header, the file info section (per file: a FileDataSequenceHeader,
 * its terms, optional verification entries and a metadata extension with the SHA-256), the CAS info section (per
 * xorb: a CASChunkSequenceHeader and its chunks), each section closed by a bookend, and, in the stored form only,
 * lookup tables and a 200-byte footer. hf_xet uploads shards without the footer (footer size 0); the JavaScript
 * client uploads them with a footer but no lookup tables (their offsets and counts zero), which is accepted too
 * (its fields are checked, then ignored). The global deduplication API answers with stored-form shards. All integers are little-endian; hashes are 32 raw bytes.
 * https://huggingface.co/docs/xet/shard
 */
import {
  HASH_BYTES,
  fileHash,
  hashFromHex,
  hashToHex,
  hashesEqual,
  keyedHash,
  termVerificationHash,
} from "./hashing.js";
import { XetFormatError } from "./xet-format-error.js";

/** The magic tag every shard starts with. */
export const SHARD_HEADER_TAG = Uint8Array.from([
  72, 70, 82, 101, 112, 111, 77, 101, 116, 97, 68, 97, 116, 97, 0, 85, 105, 103, 69, 106, 123, 129, 87, 131,
  165, 189, 217, 92, 205, 209, 74, 169,
]);
export const SHARD_HEADER_VERSION = 2;
export const SHARD_FOOTER_VERSION = 1;
export const SHARD_HEADER_BYTES = 48;
export const SHARD_FOOTER_BYTES = 200;
/** Every entry of the file info and CAS info sections is 48 bytes. */
export const SHARD_ENTRY_BYTES = 48;

/** File flag: verification entries follow the terms. */
export const FILE_FLAG_WITH_VERIFICATION = 0x80000000;
/** File flag: a metadata extension (the SHA-256) follows. */
export const FILE_FLAG_WITH_METADATA_EXT = 0x40000000;
/** Chunk flag of the CAS info section: the chunk is indexed for global deduplication. */
export const CHUNK_FLAG_GLOBAL_DEDUP = 0x80000000;

/** A term of a file: chunks `[chunkStart, chunkEnd)` of a xorb, `unpackedLength` bytes once decompressed. */
export interface ShardTerm {
  xorbHash: Uint8Array;
  /** Reserved (0). */
  flags: number;
  unpackedLength: number;
  chunkStart: number;
  chunkEnd: number;
  /** The term verification hash, when the file has verification entries. */
  verificationHash?: Uint8Array;
}

/** A file of the file info section. */
export interface ShardFile {
  fileHash: Uint8Array;
  terms: ShardTerm[];
  /**
   * The file's SHA-256 (lowercase hex of the digest), when it has a metadata extension. The shard stores it like
   * every hash: the 32 bytes whose string form ({@link hashToHex}) is this hex.
   */
  sha256?: string;
}

/** A chunk of the CAS info section. */
export interface ShardXorbChunk {
  hash: Uint8Array;
  /** Offset of the chunk's bytes in the xorb's uncompressed content. */
  unpackedOffset: number;
  unpackedLength: number;
  flags: number;
}

/** A xorb of the CAS info section. */
export interface ShardXorb {
  hash: Uint8Array;
  /** Reserved (0). */
  flags: number;
  /** Total uncompressed bytes of its chunks. */
  unpackedLength: number;
  /** Its serialized length, when the writer knew it (the reference client writes 0). */
  serializedLength: number;
  chunks: ShardXorbChunk[];
}

/** The stored form's footer fields (offsets are checked by the parser and recomputed by the serializer). */
export interface ShardFooterInfo {
  /** The key of the chunk hashes' HMAC (all zero: the chunk hashes are plain). */
  chunkHashKey: Uint8Array;
  /** Creation time, seconds since the epoch. */
  creationTimestamp: bigint;
  /** After this time (seconds since the epoch) clients stop deduplicating against the shard. */
  keyExpiry: bigint;
  storedBytesOnDisk: bigint;
  materializedBytes: bigint;
  storedBytes: bigint;
}

/** A parsed shard. */
export interface ParsedShard {
  files: ShardFile[];
  xorbs: ShardXorb[];
  /** The footer of a stored-form shard; absent in an upload. */
  footer?: ShardFooterInfo;
}

const MAX_U32 = 0xffffffff;

class Reader {
  constructor(
    readonly bytes: Uint8Array,
    private readonly view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength),
  ) {}

  need(at: number, count: number, what: string): void {
    if (this.bytes.length - at < count) {
      throw new XetFormatError(
        "shard",
        `shard truncated: ${what} at byte ${at} needs ${count} bytes but only ${Math.max(0, this.bytes.length - at)} remain`,
        { offset: at },
      );
    }
  }

  u32(at: number): number {
    return this.view.getUint32(at, true);
  }

  u64(at: number): bigint {
    return this.view.getBigUint64(at, true);
  }

  hash(at: number): Uint8Array {
    return this.bytes.slice(at, at + HASH_BYTES);
  }

  isBookend(at: number): boolean {
    for (let i = 0; i < HASH_BYTES; i++) if (this.bytes[at + i] !== 0xff) return false;
    return true;
  }
}

function bad(
  message: string,
  offset: number,
  location: { fileIndex?: number; xorbIndex?: number } = {},
): never {
  throw new XetFormatError("shard", message, { offset, ...location });
}

function smallU64(reader: Reader, at: number, what: string): number {
  const value = reader.u64(at);
  if (value > BigInt(reader.bytes.length))
    bad(`bad shard footer: ${what} ${value} is beyond the shard's ${reader.bytes.length} bytes`, at);
  return Number(value);
}

/**
 * Parse a shard, checking its structure: the magic tag, the versions, every count against the bytes left, chunk
 * ranges, flags, the bookends, and in the stored form the footer's offsets and lookup tables. Throws
 * {@link XetFormatError} naming the byte, and the file or xorb, at fault.
 */
export function parseShard(bytes: Uint8Array): ParsedShard {
  const r = new Reader(bytes);
  r.need(0, SHARD_HEADER_BYTES, "the header");
  for (let i = 0; i < SHARD_HEADER_TAG.length; i++) {
    if (bytes[i] !== SHARD_HEADER_TAG[i]) bad("not a shard: the header's magic tag is wrong", i);
  }
  const version = r.u64(32);
  if (version !== BigInt(SHARD_HEADER_VERSION)) {
    bad(`unsupported shard header version ${version} (expected ${SHARD_HEADER_VERSION})`, 32);
  }
  const footerSize = r.u64(40);
  if (footerSize !== 0n && footerSize !== BigInt(SHARD_FOOTER_BYTES)) {
    bad(
      `bad shard header: footer size ${footerSize} is neither 0 (upload) nor ${SHARD_FOOTER_BYTES} (stored)`,
      40,
    );
  }
  const hasFooter = footerSize !== 0n;
  const end = hasFooter ? bytes.length - SHARD_FOOTER_BYTES : bytes.length;
  if (end < SHARD_HEADER_BYTES) r.need(SHARD_HEADER_BYTES, SHARD_FOOTER_BYTES, "the footer");
  const sectionReader = new Reader(bytes.subarray(0, end));

  const files: ShardFile[] = [];
  let at = SHARD_HEADER_BYTES;
  for (;;) {
    sectionReader.need(
      at,
      SHARD_ENTRY_BYTES,
      `the header of file ${files.length} (or the file info bookend)`,
    );
    if (r.isBookend(at)) {
      at += SHARD_ENTRY_BYTES;
      break;
    }
    const fileIndex = files.length;
    const headerAt = at;
    const flags = r.u32(at + 32);
    const count = r.u32(at + 36);
    if ((flags & ~(FILE_FLAG_WITH_VERIFICATION | FILE_FLAG_WITH_METADATA_EXT)) !== 0) {
      bad(
        `file ${fileIndex} at byte ${headerAt} has unknown flags 0x${(flags >>> 0).toString(16)}`,
        headerAt + 32,
        { fileIndex },
      );
    }
    const withVerification = (flags & FILE_FLAG_WITH_VERIFICATION) !== 0;
    const withMetadata = (flags & FILE_FLAG_WITH_METADATA_EXT) !== 0;
    if (count === 0) bad(`file ${fileIndex} at byte ${headerAt} has no terms`, headerAt + 36, { fileIndex });
    const entries = count * (withVerification ? 2 : 1) + (withMetadata ? 1 : 0);
    if ((end - at - SHARD_ENTRY_BYTES) / SHARD_ENTRY_BYTES < entries) {
      bad(
        `shard truncated: file ${fileIndex} at byte ${headerAt} announces ${count} terms${withVerification ? " with verification entries" : ""}${withMetadata ? " and a metadata extension" : ""}, more than the bytes left hold`,
        headerAt + 36,
        { fileIndex },
      );
    }
    const file: ShardFile = { fileHash: r.hash(at), terms: [] };
    at += SHARD_ENTRY_BYTES;
    for (let t = 0; t < count; t++, at += SHARD_ENTRY_BYTES) {
      const term: ShardTerm = {
        xorbHash: r.hash(at),
        flags: r.u32(at + 32),
        unpackedLength: r.u32(at + 36),
        chunkStart: r.u32(at + 40),
        chunkEnd: r.u32(at + 44),
      };
      if (term.chunkStart >= term.chunkEnd) {
        bad(
          `file ${fileIndex} term ${t} at byte ${at} has an empty chunk range [${term.chunkStart}, ${term.chunkEnd})`,
          at + 40,
          { fileIndex },
        );
      }
      if (term.unpackedLength === 0)
        bad(`file ${fileIndex} term ${t} at byte ${at} has 0 unpacked bytes`, at + 36, { fileIndex });
      file.terms.push(term);
    }
    if (withVerification) {
      for (const term of file.terms) {
        term.verificationHash = r.hash(at);
        at += SHARD_ENTRY_BYTES;
      }
    }
    if (withMetadata) {
      file.sha256 = hashToHex(r.hash(at));
      at += SHARD_ENTRY_BYTES;
    }
    files.push(file);
  }
  const casInfoOffset = at;

  const xorbs: ShardXorb[] = [];
  for (;;) {
    sectionReader.need(at, SHARD_ENTRY_BYTES, `the header of xorb ${xorbs.length} (or the CAS info bookend)`);
    if (r.isBookend(at)) {
      at += SHARD_ENTRY_BYTES;
      break;
    }
    const xorbIndex = xorbs.length;
    const headerAt = at;
    const count = r.u32(at + 36);
    if (count === 0)
      bad(`xorb ${xorbIndex} at byte ${headerAt} of the CAS info section has no chunks`, headerAt + 36, {
        xorbIndex,
      });
    if ((end - at - SHARD_ENTRY_BYTES) / SHARD_ENTRY_BYTES < count) {
      bad(
        `shard truncated: xorb ${xorbIndex} at byte ${headerAt} announces ${count} chunks, more than the bytes left hold`,
        headerAt + 36,
        { xorbIndex },
      );
    }
    const xorb: ShardXorb = {
      hash: r.hash(at),
      flags: r.u32(at + 32),
      unpackedLength: r.u32(at + 40),
      serializedLength: r.u32(at + 44),
      chunks: [],
    };
    at += SHARD_ENTRY_BYTES;
    let unpacked = 0;
    for (let c = 0; c < count; c++, at += SHARD_ENTRY_BYTES) {
      const chunk: ShardXorbChunk = {
        hash: r.hash(at),
        unpackedOffset: r.u32(at + 32),
        unpackedLength: r.u32(at + 36),
        flags: r.u32(at + 40),
      };
      if (chunk.unpackedOffset !== unpacked) {
        bad(
          `xorb ${xorbIndex} chunk ${c} at byte ${at} starts at unpacked offset ${chunk.unpackedOffset}, expected ${unpacked}`,
          at + 32,
          { xorbIndex },
        );
      }
      if (chunk.unpackedLength === 0)
        bad(`xorb ${xorbIndex} chunk ${c} at byte ${at} is empty`, at + 36, { xorbIndex });
      unpacked += chunk.unpackedLength;
      xorb.chunks.push(chunk);
    }
    if (unpacked !== xorb.unpackedLength) {
      bad(
        `xorb ${xorbIndex} at byte ${headerAt} announces ${xorb.unpackedLength} bytes but its chunks hold ${unpacked}`,
        headerAt + 40,
        { xorbIndex },
      );
    }
    xorbs.push(xorb);
  }

  if (!hasFooter) {
    if (at !== bytes.length)
      bad(`${bytes.length - at} unexpected bytes after the CAS info section of a shard without footer`, at);
    return { files, xorbs };
  }
  const footer = parseFooter(r, end, casInfoOffset, at, files, xorbs);
  return { files, xorbs, footer };
}

function truncatedKey(bytes: Uint8Array, at = 0): bigint {
  return new DataView(bytes.buffer, bytes.byteOffset + at, 8).getBigUint64(0, true);
}

interface LookupTables {
  files: { key: bigint; index: number }[];
  xorbs: { key: bigint; index: number }[];
  chunks: { key: bigint; index: number; chunk: number }[];
}

/**
 * The lookup tables of the stored form, as the reference builds them: truncated hash (the first 8 bytes as a
 * little-endian u64) → entry index in the section (counting every 48-byte entry), sorted by key.
 */
function lookupTables(files: readonly ShardFile[], xorbs: readonly ShardXorb[]): LookupTables {
  const tables: LookupTables = { files: [], xorbs: [], chunks: [] };
  let index = 0;
  for (const file of files) {
    tables.files.push({ key: truncatedKey(file.fileHash), index });
    index +=
      1 + file.terms.length * (file.terms.some((t) => t.verificationHash) ? 2 : 1) + (file.sha256 ? 1 : 0);
  }
  index = 0;
  for (const xorb of xorbs) {
    tables.xorbs.push({ key: truncatedKey(xorb.hash), index });
    xorb.chunks.forEach((chunk, c) => tables.chunks.push({ key: truncatedKey(chunk.hash), index, chunk: c }));
    index += 1 + xorb.chunks.length;
  }
  const byKey = (a: { key: bigint }, b: { key: bigint }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  tables.files.sort(byKey);
  tables.xorbs.sort(byKey);
  tables.chunks.sort(byKey);
  return tables;
}

function parseFooter(
  r: Reader,
  footerAt: number,
  casInfoOffset: number,
  lookupsAt: number,
  files: readonly ShardFile[],
  xorbs: readonly ShardXorb[],
): ShardFooterInfo {
  const version = r.u64(footerAt);
  if (version !== BigInt(SHARD_FOOTER_VERSION))
    bad(`unsupported shard footer version ${version} (expected ${SHARD_FOOTER_VERSION})`, footerAt);
  const field = (i: number) => footerAt + 8 * i;
  if (smallU64(r, field(1), "file info offset") !== SHARD_HEADER_BYTES) {
    bad(
      `bad shard footer: the file info offset is ${r.u64(field(1))}, expected ${SHARD_HEADER_BYTES}`,
      field(1),
    );
  }
  if (smallU64(r, field(2), "CAS info offset") !== casInfoOffset) {
    bad(`bad shard footer: the CAS info offset is ${r.u64(field(2))}, expected ${casInfoOffset}`, field(2));
  }
  const expected = lookupTables(files, xorbs);
  const layout: [string, number, number][] = [
    ["file lookup", 3, 12],
    ["xorb lookup", 5, 12],
    ["chunk lookup", 7, 16],
  ];
  let at = lookupsAt;
  const counts: number[] = [];
  // The JavaScript client writes the footer without lookup tables: every offset and count zero.
  const withoutLookups = layout.every(([, i]) => r.u64(field(i)) === 0n && r.u64(field(i + 1)) === 0n);
  for (const [name, i, size] of withoutLookups ? [] : layout) {
    if (smallU64(r, field(i), `${name} offset`) !== at)
      bad(`bad shard footer: the ${name} offset is ${r.u64(field(i))}, expected ${at}`, field(i));
    const count = smallU64(r, field(i + 1), `${name} entry count`);
    if (count * size > footerAt - at)
      bad(`bad shard footer: the ${name} table of ${count} entries runs into the footer`, field(i + 1));
    counts.push(count);
    at += count * size;
  }
  if (at !== footerAt) bad(`${footerAt - at} unexpected bytes between the lookup tables and the footer`, at);
  const footerOffset = r.u64(field(24));
  if (footerOffset !== BigInt(footerAt))
    bad(`bad shard footer: the footer offset is ${footerOffset}, expected ${footerAt}`, field(24));
  if (!withoutLookups) checkLookups(r, lookupsAt, counts, expected);
  return {
    chunkHashKey: r.hash(field(9)),
    creationTimestamp: r.u64(field(13)),
    keyExpiry: r.u64(field(14)),
    storedBytesOnDisk: r.u64(field(21)),
    materializedBytes: r.u64(field(22)),
    storedBytes: r.u64(field(23)),
  };
}

/**
 * A table is either empty (the reference's local CAS stores uploads so) or holds exactly the entries the content
 * implies, sorted by key (entries with equal keys in any order).
 */
function checkLookups(r: Reader, at: number, counts: number[], expected: LookupTables): void {
  const [fileCount = 0, xorbCount = 0, chunkCount = 0] = counts;
  const check = (
    name: string,
    count: number,
    want: { key: bigint; index: number; chunk?: number }[],
    size: number,
  ) => {
    if (count === 0) return;
    if (count !== want.length)
      bad(`bad shard lookup table: ${name} has ${count} entries, expected ${want.length}`, at);
    const wanted = new Set(want.map((e) => `${e.key}:${e.index}:${e.chunk ?? ""}`));
    let previous = -1n;
    for (let i = 0; i < count; i++, at += size) {
      const key = r.u64(at);
      const entry = `${key}:${r.u32(at + 8)}:${size === 16 ? r.u32(at + 12) : ""}`;
      if (key < previous || !wanted.delete(entry)) {
        bad(`bad shard lookup table: ${name} entry ${i} at byte ${at} does not match the sections`, at);
      }
      previous = key;
    }
  };
  check("the file lookup", fileCount, expected.files, 12);
  check("the xorb lookup", xorbCount, expected.xorbs, 12);
  check("the chunk lookup", chunkCount, expected.chunks, 16);
}

/** Options of {@link serializeShard}. */
export interface SerializeShardOptions {
  /**
   * Write the stored form, with lookup tables and the footer (what the global deduplication API answers with).
   * Without it, the upload form: footer size 0, no lookup tables, no footer. Fields left out: a zero key, the
   * current time, no expiry (u64 max), and the byte counts computed from the content.
   */
  footer?: Partial<ShardFooterInfo> | boolean;
  /** With the footer: write the lookup tables (the default) or leave them empty. */
  lookupTables?: boolean;
}

function writeHash(out: Uint8Array, at: number, hash: Uint8Array): void {
  if (hash.length !== HASH_BYTES) throw new RangeError(`a hash has ${HASH_BYTES} bytes, not ${hash.length}`);
  out.set(hash, at);
}

function checkU32(value: number, what: string): number {
  if (!Number.isInteger(value) || value < 0 || value > MAX_U32)
    throw new RangeError(`${what} ${value} does not fit a u32`);
  return value;
}

/**
 * Serialize files and xorbs into a shard, in the order given. A file's verification entries are written when
 * all its terms have a verification hash (a file with only some is refused), its metadata extension when it has
 * a SHA-256.
 */
export function serializeShard(content: ParsedShard, options: SerializeShardOptions = {}): Uint8Array {
  const { files, xorbs } = content;
  let entries = 2;
  for (const [i, file] of files.entries()) {
    const verified = file.terms.filter((t) => t.verificationHash).length;
    if (verified !== 0 && verified !== file.terms.length) {
      throw new RangeError(
        `file ${i} has verification hashes for ${verified} of its ${file.terms.length} terms`,
      );
    }
    if (file.terms.length === 0) throw new RangeError(`file ${i} has no terms`);
    entries += 1 + file.terms.length * (verified ? 2 : 1) + (file.sha256 ? 1 : 0);
  }
  for (const xorb of xorbs) entries += 1 + xorb.chunks.length;
  const footerFields = options.footer === true ? {} : options.footer === false ? undefined : options.footer;
  const tables = footerFields
    ? options.lookupTables === false
      ? { files: [], xorbs: [], chunks: [] }
      : lookupTables(files, xorbs)
    : undefined;
  const tableBytes = tables
    ? tables.files.length * 12 + tables.xorbs.length * 12 + tables.chunks.length * 16
    : 0;
  const sectionsEnd = SHARD_HEADER_BYTES + entries * SHARD_ENTRY_BYTES;
  const out = new Uint8Array(sectionsEnd + tableBytes + (footerFields ? SHARD_FOOTER_BYTES : 0));
  const view = new DataView(out.buffer);
  const u32 = (at: number, value: number, what: string) => view.setUint32(at, checkU32(value, what), true);
  const u64 = (at: number, value: bigint | number) => view.setBigUint64(at, BigInt(value), true);
  const bookend = (at: number) => out.fill(0xff, at, at + HASH_BYTES);

  out.set(SHARD_HEADER_TAG, 0);
  u64(32, SHARD_HEADER_VERSION);
  u64(40, footerFields ? SHARD_FOOTER_BYTES : 0);
  let at = SHARD_HEADER_BYTES;
  for (const file of files) {
    const verified = file.terms.some((t) => t.verificationHash);
    writeHash(out, at, file.fileHash);
    u32(
      at + 32,
      ((verified ? FILE_FLAG_WITH_VERIFICATION : 0) | (file.sha256 ? FILE_FLAG_WITH_METADATA_EXT : 0)) >>> 0,
      "file flags",
    );
    u32(at + 36, file.terms.length, "term count");
    at += SHARD_ENTRY_BYTES;
    for (const term of file.terms) {
      writeHash(out, at, term.xorbHash);
      u32(at + 32, term.flags, "term flags");
      u32(at + 36, term.unpackedLength, "term unpacked length");
      u32(at + 40, term.chunkStart, "chunk index");
      u32(at + 44, term.chunkEnd, "chunk index");
      at += SHARD_ENTRY_BYTES;
    }
    if (verified) {
      for (const term of file.terms) {
        if (term.verificationHash) writeHash(out, at, term.verificationHash);
        at += SHARD_ENTRY_BYTES;
      }
    }
    if (file.sha256) {
      writeHash(out, at, hashFromHex(file.sha256));
      at += SHARD_ENTRY_BYTES;
    }
  }
  bookend(at);
  at += SHARD_ENTRY_BYTES;
  const casInfoOffset = at;
  for (const xorb of xorbs) {
    writeHash(out, at, xorb.hash);
    u32(at + 32, xorb.flags, "xorb flags");
    u32(at + 36, xorb.chunks.length, "chunk count");
    u32(at + 40, xorb.unpackedLength, "xorb unpacked length");
    u32(at + 44, xorb.serializedLength, "xorb serialized length");
    at += SHARD_ENTRY_BYTES;
    for (const chunk of xorb.chunks) {
      writeHash(out, at, chunk.hash);
      u32(at + 32, chunk.unpackedOffset, "chunk offset");
      u32(at + 36, chunk.unpackedLength, "chunk length");
      u32(at + 40, chunk.flags, "chunk flags");
      at += SHARD_ENTRY_BYTES;
    }
  }
  bookend(at);
  at += SHARD_ENTRY_BYTES;
  if (!footerFields || !tables) return out;

  const lookupsAt = at;
  for (const entry of [...tables.files, ...tables.xorbs]) {
    u64(at, entry.key);
    u32(at + 8, entry.index, "lookup index");
    at += 12;
  }
  for (const entry of tables.chunks) {
    u64(at, entry.key);
    u32(at + 8, entry.index, "lookup index");
    u32(at + 12, entry.chunk, "lookup index");
    at += 16;
  }
  const f = at;
  const field = (i: number) => f + 8 * i;
  u64(field(0), SHARD_FOOTER_VERSION);
  u64(field(1), SHARD_HEADER_BYTES);
  u64(field(2), casInfoOffset);
  u64(field(3), lookupsAt);
  u64(field(4), tables.files.length);
  u64(field(5), lookupsAt + tables.files.length * 12);
  u64(field(6), tables.xorbs.length);
  u64(field(7), lookupsAt + (tables.files.length + tables.xorbs.length) * 12);
  u64(field(8), tables.chunks.length);
  writeHash(out, field(9), footerFields.chunkHashKey ?? new Uint8Array(HASH_BYTES));
  u64(field(13), footerFields.creationTimestamp ?? BigInt(Math.floor(Date.now() / 1000)));
  u64(field(14), footerFields.keyExpiry ?? 0xffffffffffffffffn);
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  u64(field(21), footerFields.storedBytesOnDisk ?? sum(xorbs.map((x) => x.serializedLength)));
  u64(
    field(22),
    footerFields.materializedBytes ?? sum(files.flatMap((file) => file.terms.map((t) => t.unpackedLength))),
  );
  u64(field(23), footerFields.storedBytes ?? sum(xorbs.map((x) => x.unpackedLength)));
  u64(field(24), f);
  return out;
}

/**
 * The CAS info section of a global deduplication answer: each chunk hash replaced by its keyed hash with `key`
 * (the footer's chunk hash key), so a client can match chunks it has without learning the others.
 */
export function protectChunkHashes(xorbs: readonly ShardXorb[], key: Uint8Array): ShardXorb[] {
  return xorbs.map((xorb) => ({
    ...xorb,
    chunks: xorb.chunks.map((c) => ({ ...c, hash: keyedHash(key, c.hash) })),
  }));
}

/** What the server knows of a stored xorb: its chunks' hashes and uncompressed lengths, in order. */
export interface KnownXorb {
  chunks: readonly { hash: Uint8Array; length: number }[];
}

/**
 * Check an uploaded shard against the xorbs the server stores (`lookup` answers by the xorb's string form):
 * the upload form; every CAS info entry matches the stored xorb chunk for chunk; every file has verification
 * entries and a SHA-256; every term names a stored xorb, a chunk range inside it, its true unpacked length and
 * verification hash; and the file hash is the hash of the chunks the terms name. Throws the first
 * {@link XetFormatError}; `missingXorbs` lists every unknown xorb first, so the server can name them all.
 */
export function verifyUploadedShard(
  shard: ParsedShard,
  lookup: (xorbHashHex: string) => KnownXorb | undefined,
): void {
  const missing = missingXorbs(shard, lookup);
  if (missing.length > 0) {
    throw new XetFormatError(
      "shard",
      `the shard names ${missing.length} xorb(s) that are not stored: ${missing.join(", ")}`,
    );
  }
  shard.xorbs.forEach((xorb, xorbIndex) => {
    const known = lookup(hashToHex(xorb.hash)) as KnownXorb;
    const name = `xorb ${xorbIndex} (${hashToHex(xorb.hash)}) of the CAS info section`;
    if (known.chunks.length !== xorb.chunks.length) {
      throw new XetFormatError(
        "shard",
        `${name} lists ${xorb.chunks.length} chunks, but the stored xorb has ${known.chunks.length}`,
        { xorbIndex },
      );
    }
    xorb.chunks.forEach((chunk, c) => {
      const stored = known.chunks[c];
      if (!stored || !hashesEqual(stored.hash, chunk.hash) || stored.length !== chunk.unpackedLength) {
        throw new XetFormatError("shard", `${name}: chunk ${c} does not match the stored xorb's chunk ${c}`, {
          xorbIndex,
        });
      }
    });
  });
  shard.files.forEach((file, fileIndex) => {
    const name = `file ${fileIndex} (${hashToHex(file.fileHash)})`;
    if (!file.sha256)
      throw new XetFormatError(
        "shard",
        `${name} has no metadata extension; an uploaded shard gives every file's SHA-256`,
        { fileIndex },
      );
    const chunks: { hash: Uint8Array; length: number }[] = [];
    file.terms.forEach((term, t) => {
      const known = lookup(hashToHex(term.xorbHash)) as KnownXorb;
      if (term.chunkEnd > known.chunks.length) {
        throw new XetFormatError(
          "shard",
          `${name} term ${t}: chunk range [${term.chunkStart}, ${term.chunkEnd}) is outside xorb ${hashToHex(term.xorbHash)}'s ${known.chunks.length} chunks`,
          { fileIndex },
        );
      }
      const range = known.chunks.slice(term.chunkStart, term.chunkEnd);
      const length = range.reduce((sum, c) => sum + c.length, 0);
      if (length !== term.unpackedLength) {
        throw new XetFormatError(
          "shard",
          `${name} term ${t}: announces ${term.unpackedLength} unpacked bytes, but its chunks hold ${length}`,
          { fileIndex },
        );
      }
      if (!term.verificationHash) {
        throw new XetFormatError(
          "shard",
          `${name} has no verification entries; an uploaded shard verifies every term`,
          { fileIndex },
        );
      }
      if (!hashesEqual(term.verificationHash, termVerificationHash(range.map((c) => c.hash)))) {
        throw new XetFormatError(
          "shard",
          `${name} term ${t}: the verification hash does not match the chunks of xorb ${hashToHex(term.xorbHash)}`,
          { fileIndex },
        );
      }
      chunks.push(...range);
    });
    const computed = fileHash(chunks);
    if (!hashesEqual(computed, file.fileHash)) {
      throw new XetFormatError("shard", `${name}: its terms' chunks hash to file ${hashToHex(computed)}`, {
        fileIndex,
      });
    }
  });
}

/** The distinct xorbs (string form) that the shard's terms and CAS info section name and `lookup` does not know. */
export function missingXorbs(
  shard: ParsedShard,
  lookup: (xorbHashHex: string) => KnownXorb | undefined,
): string[] {
  const named = new Set<string>();
  for (const xorb of shard.xorbs) named.add(hashToHex(xorb.hash));
  for (const file of shard.files) for (const term of file.terms) named.add(hashToHex(term.xorbHash));
  return [...named].filter((hex) => lookup(hex) === undefined);
}
