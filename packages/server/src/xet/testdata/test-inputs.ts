/**
 * The inputs of the Xet reference vectors, rebuilt byte for byte from their description (the same rules as
 * generate.py), and the vectors and fixtures hf_xet produced for them.
 */
import { createCipheriv, createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

const WORDS = [
  "tensor",
  "weights",
  "layer",
  "model",
  "token",
  "dataset",
  "shard",
  "xorb",
  "chunk",
  "hash",
  "merkle",
  "upload",
  "the",
  "of",
  "and",
  "gradient",
];

/** A segment of an input (see generate.py). */
export type Segment =
  | { kind: "random"; seed: string; length: number }
  | { kind: "fill"; byte: number; length: number }
  | { kind: "text"; seed: string; length: number }
  | { kind: "ramp"; start: number; step: number; length: number }
  | { kind: "repeat"; times: number; of: Segment[] };

/** `length` random bytes fast (AES-256-CTR keyed by the seed's SHA-256): for inputs of many MiB, not for vectors. */
export function keystream(seed: string, length: number): Uint8Array {
  const key = createHash("sha256").update(seed).digest();
  return createCipheriv("aes-256-ctr", key, Buffer.alloc(16)).update(Buffer.alloc(length));
}

/** SHA-256 in counter mode: sha256(seed + ":" + u64le(counter)), concatenated, cut to `length`. */
export function prng(seed: string, length: number): Uint8Array {
  const out = new Uint8Array(Math.ceil(length / 32) * 32);
  const counter = Buffer.alloc(8);
  for (let i = 0; i * 32 < length; i++) {
    counter.writeBigUInt64LE(BigInt(i));
    out.set(createHash("sha256").update(seed).update(":").update(counter).digest(), i * 32);
  }
  return out.subarray(0, length);
}

function segment(seg: Segment): Uint8Array {
  switch (seg.kind) {
    case "random":
      return prng(seg.seed, seg.length);
    case "fill":
      return new Uint8Array(seg.length).fill(seg.byte);
    case "text": {
      const parts: string[] = [];
      let size = 0;
      for (const b of prng(seg.seed, seg.length)) {
        const word = `${WORDS[b & 15] ?? ""}${b >= 0xf0 ? "\n" : " "}`;
        parts.push(word);
        size += word.length;
        if (size >= seg.length) break;
      }
      return new TextEncoder().encode(parts.join("")).subarray(0, seg.length);
    }
    case "ramp": {
      const count = Math.ceil(seg.length / 4);
      const out = Buffer.alloc(count * 4);
      for (let i = 0; i < count; i++) out.writeUInt32LE((seg.start + i * seg.step) % 2 ** 32, i * 4);
      return new Uint8Array(out.buffer, out.byteOffset, seg.length);
    }
    case "repeat": {
      const block = makeInput(seg.of);
      const out = new Uint8Array(block.length * seg.times);
      for (let i = 0; i < seg.times; i++) out.set(block, i * block.length);
      return out;
    }
  }
}

/** The bytes an input description stands for. */
export function makeInput(segments: readonly Segment[]): Uint8Array {
  const parts = segments.map(segment);
  const out = new Uint8Array(parts.reduce((sum, p) => sum + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

export interface VectorChunk {
  offset: number;
  length: number;
  hash: string;
}

export interface VectorTerm {
  xorb: string;
  start: number;
  end: number;
  unpackedLength: number;
  verificationHash: string;
}

export interface VectorXorb {
  hash: string;
  storedLength: number;
  bytesInXorb: number;
  chunks: { hash: string; length: number; byteStart: number }[];
  fixture?: string;
}

/** One input and what hf_xet computed for it. */
export interface Vector {
  name: string;
  segments: Segment[];
  length: number;
  sha256: string;
  fileHash: string;
  compressionPolicy: string;
  chunks: VectorChunk[];
  uploadedFileHash?: string;
  uploadedSha256?: string;
  terms?: VectorTerm[];
  xorbs?: VectorXorb[];
  uploadedShardFixture?: string;
  sessionShardFixture?: string;
}

/** The vectors of vectors.json. */
export function loadVectors(): Vector[] {
  const parsed = JSON.parse(readFileSync(join(here, "vectors.json"), "utf8")) as { vectors: Vector[] };
  return parsed.vectors;
}

/** A binary fixture written by generate.py. */
export function fixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(join(here, "fixtures", name)));
}

/** The vector of that name. */
export function vector(name: string): Vector {
  const found = loadVectors().find((v) => v.name === name);
  if (!found) throw new Error(`no vector ${name}`);
  return found;
}

/** An LZ4 frame the reference C implementation (the lz4 command) wrote for an input. */
export interface Lz4Frame {
  name: string;
  segments: Segment[];
  lz4Flags: string[];
  fixture: string;
}

/** The LZ4 frames of vectors.json. */
export function loadLz4Frames(): Lz4Frame[] {
  return (JSON.parse(readFileSync(join(here, "vectors.json"), "utf8")) as { lz4Frames: Lz4Frame[] })
    .lz4Frames;
}
