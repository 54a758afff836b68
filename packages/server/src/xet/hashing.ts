/**
 * The hashes of the Xet protocol: chunk hashes, the aggregated (Merkle) hash of xorbs and files, term
 * verification hashes, and the string form every hash takes on the wire.
 * https://huggingface.co/docs/xet/hashing and https://huggingface.co/docs/xet/api#converting-hashes-to-strings
 */
import { blake3 } from "@noble/hashes/blake3.js";
import { createBLAKE3, type IHasher } from "hash-wasm";
import { XetFormatError } from "./xet-format-error.js";

/** Every Xet hash is 32 bytes. */
export const HASH_BYTES = 32;

/** The key of the chunk hash (the specification's DATA_KEY). */
export const DATA_KEY = Uint8Array.from([
  102, 151, 245, 119, 91, 149, 80, 222, 49, 53, 203, 172, 165, 151, 24, 28, 157, 228, 33, 16, 155, 235, 43,
  88, 180, 208, 176, 75, 147, 173, 242, 41,
]);

/** The key of the Merkle tree's internal nodes (the specification's INTERNAL_NODE_KEY). */
export const INTERNAL_NODE_KEY = Uint8Array.from([
  1, 126, 197, 199, 165, 71, 41, 150, 253, 148, 102, 102, 180, 138, 2, 230, 93, 221, 83, 111, 55, 199, 109,
  210, 248, 99, 82, 230, 74, 83, 113, 63,
]);

/** The key of term verification hashes in uploaded shards (the specification's VERIFICATION_KEY). */
export const VERIFICATION_KEY = Uint8Array.from([
  127, 24, 87, 214, 206, 86, 237, 102, 18, 127, 249, 19, 231, 165, 195, 243, 164, 205, 38, 213, 181, 219, 73,
  230, 65, 36, 152, 127, 40, 251, 148, 195,
]);

/** The all-zero key a file hash applies to the Merkle root; also the hash of an empty xorb or file. */
export const ZERO_HASH: Uint8Array = new Uint8Array(HASH_BYTES);

/** A chunk, or a subtree of chunks, as the Merkle tree sees it: its hash and how many bytes it covers. */
export interface HashedRange {
  hash: Uint8Array;
  length: number;
}

/**
 * One WebAssembly BLAKE3 hasher per fixed key of the protocol, made by {@link loadXetHashing}. `hash-wasm`
 * hashes about ten times faster than the pure-JavaScript `@noble/hashes` (docs/xet.md, Performance) with the
 * same digests; its hashers are created asynchronously, so they are made once, before the first hash.
 */
let hashers: Array<{ key: Uint8Array; hasher: IHasher }> | null = null;
let loading: Promise<void> | null = null;

/**
 * Prepares the WebAssembly hashers the hashes of this module use. Await it once before hashing (the
 * composition root does at start-up, tests in `beforeAll`); later calls return the same promise.
 */
export function loadXetHashing(): Promise<void> {
  loading ??= Promise.all(
    [DATA_KEY, INTERNAL_NODE_KEY, VERIFICATION_KEY, ZERO_HASH].map(async (key) => ({
      key,
      hasher: await createBLAKE3(256, key),
    })),
  ).then(
    (made) => {
      hashers = made;
    },
    (err: unknown) => {
      loading = null;
      throw err;
    },
  );
  return loading;
}

function hasherFor(key: Uint8Array): IHasher | null {
  if (!hashers) {
    throw new Error("The Xet hashes are not ready: await loadXetHashing() once before hashing.");
  }
  for (const entry of hashers) if (entry.key === key) return entry.hasher;
  for (const entry of hashers) if (hashesEqual(entry.key, key)) return entry.hasher;
  return null;
}

/**
 * BLAKE3 keyed with a 32-byte key: every hash of the protocol is one. The protocol's fixed keys go through
 * the WebAssembly hashers; any other key (the per-shard key of dedup answers, over a few 32-byte hashes)
 * through `@noble/hashes`, which needs no preparation.
 */
export function keyedHash(key: Uint8Array, data: Uint8Array): Uint8Array {
  const hasher = hasherFor(key);
  if (!hasher) return blake3(data, { key });
  return hasher.init().update(data).digest("binary");
}

/** The hash of a chunk's (uncompressed) bytes. */
export function chunkHash(data: Uint8Array): Uint8Array {
  return keyedHash(DATA_KEY, data);
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/**
 * The string form of a hash: the 32 bytes read as four little-endian u64 values, each written as 16 lowercase
 * hex digits. So the bytes 00 01 02 … 1f are written "0706050403020100 0f0e…08 1716…10 1f1e…18" (without the
 * spaces), never byte by byte. Used in every API path, JSON body and internal node text.
 */
export function hashToHex(hash: Uint8Array): string {
  if (hash.length !== HASH_BYTES)
    throw new RangeError(`a Xet hash has ${HASH_BYTES} bytes, not ${hash.length}`);
  let out = "";
  for (let group = 0; group < HASH_BYTES; group += 8) {
    for (let i = group + 7; i >= group; i--) out += HEX[hash[i] ?? 0];
  }
  return out;
}

const HASH_HEX = /^[0-9a-f]{64}$/;

/** Whether a string is a hash in the protocol's string form (64 lowercase hex digits). */
export function isHashHex(value: string): boolean {
  return HASH_HEX.test(value);
}

/** The bytes of a hash given in the protocol's string form (the inverse of {@link hashToHex}). */
export function hashFromHex(hex: string): Uint8Array {
  if (!isHashHex(hex)) {
    throw new XetFormatError(
      "hash",
      `"${hex.slice(0, 80)}" is not a Xet hash: expected 64 lowercase hex digits`,
    );
  }
  const out = new Uint8Array(HASH_BYTES);
  for (let group = 0; group < HASH_BYTES; group += 8) {
    for (let i = 0; i < 8; i++) {
      const at = (group + i) * 2;
      out[group + 7 - i] = Number.parseInt(hex.slice(at, at + 2), 16);
    }
  }
  return out;
}

/** Whether two hashes are the same 32 bytes. */
export function hashesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The last u64 of a hash (bytes 24..31, little-endian) modulo a power of two up to 2^16. */
function lastWordModulo(hash: Uint8Array, powerOfTwo: number): number {
  return ((hash[24] ?? 0) | ((hash[25] ?? 0) << 8)) & (powerOfTwo - 1);
}

/**
 * Whether a chunk hash is one the global deduplication index keeps: its last u64 is a multiple of 1024 (the
 * reference's MDB_SHARD_GLOBAL_DEDUP_CHUNK_MODULUS). Clients query the global deduplication API for these chunks
 * (and a file's first chunk), so a server indexes them. https://huggingface.co/docs/xet/deduplication
 */
export function isGlobalDedupEligible(hash: Uint8Array): boolean {
  return lastWordModulo(hash, 1024) === 0;
}

const encoder = new TextEncoder();

/**
 * The hash of an internal node of the Merkle tree: BLAKE3 keyed with INTERNAL_NODE_KEY over one line per child,
 * `{hash as hex} : {length in bytes}\n`. Its length is the sum of the children's.
 */
export function internalNodeHash(children: readonly HashedRange[]): HashedRange {
  let text = "";
  let length = 0;
  for (const child of children) {
    text += `${hashToHex(child.hash)} : ${child.length}\n`;
    length += child.length;
  }
  return { hash: keyedHash(INTERNAL_NODE_KEY, encoder.encode(text)), length };
}

/** Mean branching factor of the aggregated hash tree. */
const MEAN_BRANCHING = 4;
/** A node has at most 2 × MEAN_BRANCHING + 1 children. */
const MAX_CHILDREN = 2 * MEAN_BRANCHING + 1;

/**
 * How many of `nodes[start…]` the next internal node takes: all of them when at most 2 are left; otherwise
 * up to and including the first node from the third on whose hash's last u64 is a multiple of 4, and at most
 * 9. So the tree's shape depends on the content only, as chunk boundaries do.
 */
function nextGroupSize(nodes: readonly HashedRange[], start: number): number {
  const remaining = nodes.length - start;
  if (remaining <= 2) return remaining;
  const end = Math.min(MAX_CHILDREN, remaining);
  for (let i = 2; i < end; i++) {
    const node = nodes[start + i];
    if (node && lastWordModulo(node.hash, MEAN_BRANCHING) === 0) return i + 1;
  }
  return end;
}

/**
 * The root of the aggregated hash tree over a sequence of chunks (the "MerkleHash" of the specification): the
 * sequence is cut into groups by {@link nextGroupSize}, each group becomes its internal node, and the level
 * above is cut again, until one node is left. An empty sequence has the zero hash; a single chunk is its own
 * root.
 */
export function merkleRoot(leaves: readonly HashedRange[]): Uint8Array {
  if (leaves.length === 0) return ZERO_HASH.slice();
  let level: HashedRange[] = leaves.slice();
  while (level.length > 1) {
    const next: HashedRange[] = [];
    for (let start = 0; start < level.length;) {
      const size = nextGroupSize(level, start);
      next.push(internalNodeHash(level.slice(start, start + size)));
      start += size;
    }
    level = next;
  }
  const root = level[0];
  return root ? root.hash.slice() : ZERO_HASH.slice();
}

/** The hash of a xorb: the Merkle root of its chunks' hashes and lengths, in order. */
export function xorbHash(chunks: readonly HashedRange[]): Uint8Array {
  return merkleRoot(chunks);
}

/**
 * The hash of a file (its Xet id): the Merkle root of its chunks, then keyed-hashed with the all-zero key. An
 * empty file's hash is the zero hash, as the reference client computes it.
 */
export function fileHash(chunks: readonly HashedRange[]): Uint8Array {
  if (chunks.length === 0) return ZERO_HASH.slice();
  return keyedHash(ZERO_HASH, merkleRoot(chunks));
}

/**
 * The verification hash of a term (a shard upload's FileVerificationEntry): BLAKE3 keyed with VERIFICATION_KEY
 * over the raw 32 bytes of each chunk hash of the term's range, in order.
 */
export function termVerificationHash(chunkHashes: readonly Uint8Array[]): Uint8Array {
  const buffer = new Uint8Array(chunkHashes.length * HASH_BYTES);
  chunkHashes.forEach((hash, i) => buffer.set(hash, i * HASH_BYTES));
  return keyedHash(VERIFICATION_KEY, buffer);
}
