/**
 * LZ4 as xorb chunks use it: the LZ4 frame format (what the reference client's lz4_flex FrameEncoder writes)
 * around LZ4 blocks. The decoder is strict, since it reads what clients upload: every length and offset is
 * bounds-checked against the input and against the output size the chunk header announces (it never allocates
 * what an input claims), checksums are verified, and what the reference decoder refuses (dictionaries, skippable
 * and legacy frames, reserved bits, matches reaching outside an independent block) is refused too.
 * The encoder is a plain greedy LZ4 compressor (hash table of 4-byte sequences) writing one frame.
 *
 * Frame format: https://github.com/lz4/lz4/blob/dev/doc/lz4_Frame_format.md
 * Block format: https://github.com/lz4/lz4/blob/dev/doc/lz4_Block_format.md
 */
import { XetFormatError } from "./xet-format-error.js";

const FRAME_MAGIC = 0x184d2204;
const LEGACY_MAGIC = 0x184c2102;
const SKIPPABLE_MAGIC_MIN = 0x184d2a50;
const SKIPPABLE_MAGIC_MAX = 0x184d2a5f;

const FLG_VERSION_MASK = 0b1100_0000;
const FLG_VERSION = 0b0100_0000;
const FLG_INDEPENDENT = 0b0010_0000;
const FLG_BLOCK_CHECKSUM = 0b0001_0000;
const FLG_CONTENT_SIZE = 0b0000_1000;
const FLG_CONTENT_CHECKSUM = 0b0000_0100;
const FLG_RESERVED = 0b0000_0010;
const FLG_DICT_ID = 0b0000_0001;
const BD_BLOCK_SIZE_MASK = 0b0111_0000;

const BLOCK_UNCOMPRESSED = 0x80000000;
const MIN_MATCH = 4;
/** The last match must start at least this many bytes before the end of a block (the format's MFLIMIT). */
const MATCH_FINISH_LIMIT = 12;
/** The last bytes of a block are always literals (the format's LASTLITERALS). */
const LAST_LITERALS = 5;
const MAX_OFFSET = 65535;

const BLOCK_MAX_SIZES: Record<number, number> = {
  4: 64 * 1024,
  5: 256 * 1024,
  6: 1024 * 1024,
  7: 4 * 1024 * 1024,
};

function fail(message: string, offset: number): never {
  throw new XetFormatError("lz4", message, { offset });
}

function readU32(data: Uint8Array, at: number): number {
  return (
    ((data[at] as number) | ((data[at + 1] as number) << 8) | ((data[at + 2] as number) << 16)) +
    (data[at + 3] as number) * 0x1000000
  );
}

const PRIME32_1 = 0x9e3779b1;
const PRIME32_2 = 0x85ebca77;
const PRIME32_3 = 0xc2b2ae3d;
const PRIME32_4 = 0x27d4eb2f;
const PRIME32_5 = 0x165667b1;

function rotl32(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

function xxhRound(acc: number, input: number): number {
  return Math.imul(rotl32((acc + Math.imul(input, PRIME32_2)) | 0, 13), PRIME32_1);
}

/** XXH32, the checksum of the LZ4 frame format (header, blocks, content). https://github.com/Cyan4973/xxHash */
export function xxh32(data: Uint8Array, seed = 0): number {
  const n = data.length;
  let i = 0;
  let h: number;
  if (n >= 16) {
    let v1 = (seed + PRIME32_1 + PRIME32_2) | 0;
    let v2 = (seed + PRIME32_2) | 0;
    let v3 = seed | 0;
    let v4 = (seed - PRIME32_1) | 0;
    for (; i <= n - 16; i += 16) {
      v1 = xxhRound(v1, readU32(data, i));
      v2 = xxhRound(v2, readU32(data, i + 4));
      v3 = xxhRound(v3, readU32(data, i + 8));
      v4 = xxhRound(v4, readU32(data, i + 12));
    }
    h = (rotl32(v1, 1) + rotl32(v2, 7) + rotl32(v3, 12) + rotl32(v4, 18)) | 0;
  } else {
    h = (seed + PRIME32_5) | 0;
  }
  h = (h + n) | 0;
  for (; i + 4 <= n; i += 4) {
    h = Math.imul(rotl32((h + Math.imul(readU32(data, i), PRIME32_3)) | 0, 17), PRIME32_4);
  }
  for (; i < n; i++) {
    h = Math.imul(rotl32((h + Math.imul(data[i] as number, PRIME32_5)) | 0, 11), PRIME32_1);
  }
  h ^= h >>> 15;
  h = Math.imul(h, PRIME32_2);
  h ^= h >>> 13;
  h = Math.imul(h, PRIME32_3);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Decode one LZ4 block `src[from, to)` into `dst` at `dstPos`; matches may reach back to `windowStart`. Returns
 * the new output position. `base` is the offset of `src` in the enclosing object, for error messages.
 */
function decodeBlock(
  src: Uint8Array,
  from: number,
  to: number,
  dst: Uint8Array,
  dstPos: number,
  windowStart: number,
  base: number,
): number {
  let s = from;
  let d = dstPos;
  const dstEnd = dst.length;
  while (s < to) {
    const token = src[s++] as number;
    let literals = token >>> 4;
    if (literals === 15) {
      let extra: number;
      do {
        if (s >= to) fail("LZ4 block ends inside a literal length", base + s);
        extra = src[s++] as number;
        literals += extra;
      } while (extra === 255);
    }
    if (literals > to - s)
      fail(`LZ4 literal run of ${literals} bytes runs past the end of its block`, base + s);
    if (literals > dstEnd - d) fail("LZ4 block decodes to more bytes than announced", base + s);
    if (literals < 16) {
      for (let k = 0; k < literals; k++) dst[d++] = src[s++] as number;
    } else {
      dst.set(src.subarray(s, s + literals), d);
      s += literals;
      d += literals;
    }
    if (s === to) break;
    if (to - s < 2) fail("LZ4 block ends inside a match offset", base + s);
    const offset = (src[s] as number) | ((src[s + 1] as number) << 8);
    s += 2;
    if (offset === 0) fail("LZ4 match offset 0 is invalid", base + s - 2);
    if (offset > d - windowStart)
      fail(`LZ4 match offset ${offset} reaches before the start of the data`, base + s - 2);
    let length = token & 15;
    if (length === 15) {
      let extra: number;
      do {
        if (s >= to) fail("LZ4 block ends inside a match length", base + s);
        extra = src[s++] as number;
        length += extra;
      } while (extra === 255);
    }
    length += MIN_MATCH;
    if (length > dstEnd - d) fail("LZ4 block decodes to more bytes than announced", base + s);
    let m = d - offset;
    if (offset >= length) {
      dst.copyWithin(d, m, m + length);
      d += length;
    } else {
      for (let k = 0; k < length; k++) dst[d++] = dst[m++] as number;
    }
  }
  return d;
}

/**
 * Decode LZ4 frames (one or more, concatenated) whose content is exactly `expectedLength` bytes. `base` is the
 * offset of `src` in the enclosing object, so errors name the byte in the xorb.
 */
export function lz4DecompressFrame(src: Uint8Array, expectedLength: number, base = 0): Uint8Array {
  const dst = new Uint8Array(expectedLength);
  let s = 0;
  let d = 0;
  if (src.length === 0) fail("LZ4 data is empty: expected a frame", base);
  while (s < src.length) {
    if (src.length - s < 4) fail("LZ4 data ends inside a frame's magic number", base + s);
    const magic = readU32(src, s);
    if (magic !== FRAME_MAGIC) {
      if (magic === LEGACY_MAGIC) fail("legacy LZ4 frames are not accepted", base + s);
      if (magic >= SKIPPABLE_MAGIC_MIN && magic <= SKIPPABLE_MAGIC_MAX) {
        fail("skippable LZ4 frames are not accepted", base + s);
      }
      fail(`not an LZ4 frame: magic number 0x${magic.toString(16).padStart(8, "0")}`, base + s);
    }
    const descriptorStart = s + 4;
    if (src.length - descriptorStart < 3)
      fail("LZ4 data ends inside a frame descriptor", base + descriptorStart);
    const flg = src[descriptorStart] as number;
    const bd = src[descriptorStart + 1] as number;
    if ((flg & FLG_VERSION_MASK) !== FLG_VERSION) {
      fail(`unsupported LZ4 frame version ${(flg & FLG_VERSION_MASK) >>> 6}`, base + descriptorStart);
    }
    if (flg & FLG_RESERVED || bd & ~BD_BLOCK_SIZE_MASK)
      fail("LZ4 frame descriptor has reserved bits set", base + descriptorStart);
    if (flg & FLG_DICT_ID) fail("LZ4 frames with a dictionary are not accepted", base + descriptorStart);
    const blockMax = BLOCK_MAX_SIZES[(bd & BD_BLOCK_SIZE_MASK) >>> 4];
    if (blockMax === undefined)
      fail(`LZ4 block size code ${(bd & BD_BLOCK_SIZE_MASK) >>> 4} is invalid`, base + descriptorStart + 1);
    let h = descriptorStart + 2;
    let contentSize: number | undefined;
    if (flg & FLG_CONTENT_SIZE) {
      if (src.length - h < 9) fail("LZ4 data ends inside a frame descriptor", base + h);
      contentSize = readU32(src, h) + readU32(src, h + 4) * 0x100000000;
      h += 8;
    }
    if (h >= src.length) fail("LZ4 data ends inside a frame descriptor", base + h);
    const headerChecksum = (xxh32(src.subarray(descriptorStart, h)) >>> 8) & 0xff;
    if (src[h] !== headerChecksum) fail("LZ4 frame descriptor checksum does not match", base + h);
    s = h + 1;

    const independent = (flg & FLG_INDEPENDENT) !== 0;
    const blockChecksums = (flg & FLG_BLOCK_CHECKSUM) !== 0;
    const frameStart = d;
    for (;;) {
      if (src.length - s < 4) fail("LZ4 data ends before the frame's end mark", base + s);
      const word = readU32(src, s);
      s += 4;
      if (word === 0) break;
      const raw = word >= BLOCK_UNCOMPRESSED;
      const size = raw ? word - BLOCK_UNCOMPRESSED : word;
      if (size > blockMax)
        fail(`LZ4 block of ${size} bytes exceeds the frame's maximum of ${blockMax}`, base + s - 4);
      if (size > src.length - s)
        fail(`LZ4 block of ${size} bytes runs past the end of the data`, base + s - 4);
      if (blockChecksums) {
        if (src.length - (s + size) < 4) fail("LZ4 data ends inside a block checksum", base + s + size);
        if (xxh32(src.subarray(s, s + size)) !== readU32(src, s + size)) {
          fail("LZ4 block checksum does not match", base + s + size);
        }
      }
      const blockStart = d;
      if (raw) {
        if (size > dst.length - d) fail("LZ4 frame decodes to more bytes than announced", base + s);
        dst.set(src.subarray(s, s + size), d);
        d += size;
      } else {
        d = decodeBlock(src, s, s + size, dst, d, independent ? blockStart : frameStart, base);
      }
      if (d - blockStart > blockMax)
        fail(`LZ4 block decodes to more than the frame's maximum of ${blockMax} bytes`, base + s);
      s += size + (blockChecksums ? 4 : 0);
    }
    if (contentSize !== undefined && contentSize !== d - frameStart) {
      fail(
        `LZ4 frame announces ${contentSize} bytes of content but holds ${d - frameStart}`,
        base + descriptorStart,
      );
    }
    if (flg & FLG_CONTENT_CHECKSUM) {
      if (src.length - s < 4) fail("LZ4 data ends inside the content checksum", base + s);
      if (xxh32(dst.subarray(frameStart, d)) !== readU32(src, s))
        fail("LZ4 content checksum does not match", base + s);
      s += 4;
    }
  }
  if (d !== expectedLength) fail(`LZ4 data decodes to ${d} bytes, not the ${expectedLength} announced`, base);
  return dst;
}

const HASH_BITS = 16;
const HASH_SHIFT = 32 - HASH_BITS;
const ACCELERATION_SKIP = 6;

function sequenceHash(data: Uint8Array, at: number): number {
  return Math.imul(readU32(data, at), 2654435761) >>> HASH_SHIFT;
}

function writeLength(out: Uint8Array, o: number, value: number): number {
  let rest = value - 15;
  while (rest >= 255) {
    out[o++] = 255;
    rest -= 255;
  }
  out[o++] = rest;
  return o;
}

/** The worst-case size of an LZ4 block of `length` bytes. */
function blockBound(length: number): number {
  return length + Math.ceil(length / 255) + 16;
}

/** Compress `src[from, to)` as one LZ4 block into `out` at `o`; returns the new output position. */
function encodeBlock(
  src: Uint8Array,
  from: number,
  to: number,
  out: Uint8Array,
  o: number,
  table: Int32Array,
): number {
  table.fill(-1);
  let anchor = from;
  let i = from;
  const matchLimit = to - MATCH_FINISH_LIMIT;
  let misses = 0;
  while (i < matchLimit) {
    const h = sequenceHash(src, i);
    const candidate = table[h] as number;
    table[h] = i;
    if (candidate < from || i - candidate > MAX_OFFSET || readU32(src, candidate) !== readU32(src, i)) {
      i += 1 + (misses++ >>> ACCELERATION_SKIP);
      continue;
    }
    misses = 0;
    let start = i;
    let ref = candidate;
    while (start > anchor && ref > from && src[start - 1] === src[ref - 1]) {
      start--;
      ref--;
    }
    let end = i + MIN_MATCH;
    const endLimit = to - LAST_LITERALS;
    while (end < endLimit && src[end] === src[ref + (end - start)]) end++;
    const literals = start - anchor;
    const matchLength = end - start - MIN_MATCH;
    const tokenAt = o++;
    if (literals >= 15) o = writeLength(out, o, literals);
    out.set(src.subarray(anchor, start), o);
    o += literals;
    out[o++] = (start - ref) & 0xff;
    out[o++] = (start - ref) >>> 8;
    if (matchLength >= 15) o = writeLength(out, o, matchLength);
    out[tokenAt] = (Math.min(literals, 15) << 4) | Math.min(matchLength, 15);
    anchor = end;
    i = end;
  }
  const literals = to - anchor;
  const tokenAt = o++;
  if (literals >= 15) o = writeLength(out, o, literals);
  out.set(src.subarray(anchor, to), o);
  o += literals;
  out[tokenAt] = Math.min(literals, 15) << 4;
  return o;
}

/**
 * Compress bytes as one LZ4 frame with independent blocks and no checksums, as the reference client does (block
 * size 64 KiB for up to 64 KiB of data, 256 KiB above); a block that does not shrink is stored raw.
 */
export function lz4CompressFrame(data: Uint8Array): Uint8Array {
  const blockMax = data.length <= 64 * 1024 ? 64 * 1024 : 256 * 1024;
  const blocks = Math.max(1, Math.ceil(data.length / blockMax));
  const out = new Uint8Array(7 + blocks * (4 + blockBound(blockMax)) + 4);
  out.set([0x04, 0x22, 0x4d, 0x18], 0);
  out[4] = FLG_VERSION | FLG_INDEPENDENT;
  out[5] = (blockMax === 64 * 1024 ? 4 : 5) << 4;
  out[6] = (xxh32(out.subarray(4, 6)) >>> 8) & 0xff;
  let o = 7;
  const table = new Int32Array(1 << HASH_BITS);
  for (let from = 0; from < data.length; from += blockMax) {
    const to = Math.min(data.length, from + blockMax);
    const sizeAt = o;
    const end = encodeBlock(data, from, to, out, o + 4, table);
    const size = end - (o + 4);
    if (size < to - from) {
      writeU32(out, sizeAt, size);
      o = end;
    } else {
      writeU32(out, sizeAt, (BLOCK_UNCOMPRESSED + (to - from)) >>> 0);
      out.set(data.subarray(from, to), o + 4);
      o += 4 + (to - from);
    }
  }
  writeU32(out, o, 0);
  return out.slice(0, o + 4);
}

function writeU32(out: Uint8Array, at: number, value: number): void {
  out[at] = value & 0xff;
  out[at + 1] = (value >>> 8) & 0xff;
  out[at + 2] = (value >>> 16) & 0xff;
  out[at + 3] = (value >>> 24) & 0xff;
}
