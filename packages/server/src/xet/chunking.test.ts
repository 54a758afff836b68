import { describe, expect, it } from "vitest";
import {
  Chunker,
  MAX_CHUNK_SIZE,
  MIN_CHUNK_SIZE,
  chunkBoundaries,
  chunkBuffer,
  chunkStream,
} from "./chunking.js";
import { GEAR_TABLE } from "./gear-table.js";
import { hashToHex, loadXetHashing } from "./hashing.js";
import { loadVectors, makeInput, prng } from "./testdata/test-inputs.js";

// Some vectors are hashed while the suites are collected.
await loadXetHashing();

const vectors = loadVectors();

function referenceEnds(name: string): number[] {
  const v = vectors.find((x) => x.name === name);
  if (!v) throw new Error(name);
  return v.chunks.map((c) => c.offset + c.length);
}

/** Feed `data` in pieces of the given sizes (cycled) and collect the boundaries. */
function feed(data: Uint8Array, sizes: readonly number[]): number[] {
  const chunker = new Chunker();
  const ends: number[] = [];
  let at = 0;
  for (let i = 0; at < data.length; i++) {
    const size = sizes[i % sizes.length] ?? 1;
    ends.push(...chunker.push(data.subarray(at, at + size)));
    at += size;
  }
  return [...ends, ...chunker.finish()];
}

/** Piece sizes from a seeded generator: 1 byte to 200 KiB, many around the chunk sizes. */
function randomSizes(seed: string, count: number): number[] {
  const bytes = prng(seed, count * 4);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Array.from({ length: count }, (_, i) => {
    const r = view.getUint32(i * 4, true);
    const scale = [7, 300, MIN_CHUNK_SIZE + 5, 70_000, 200 * 1024][r % 5] ?? 1;
    return 1 + ((r >>> 3) % scale);
  });
}

/** The specification's pseudocode, byte by byte in 64-bit BigInt arithmetic, without the skip-ahead. */
function specChunker(data: Uint8Array): number[] {
  const table = GEAR_TABLE.map((hex) => BigInt(`0x${hex}`));
  const mask = 0xffff000000000000n;
  const wrap = (1n << 64n) - 1n;
  const ends: number[] = [];
  let h = 0n;
  let start = 0;
  for (let i = 0; i < data.length; i++) {
    h = ((h << 1n) + (table[data[i] ?? 0] ?? 0n)) & wrap;
    const size = i + 1 - start;
    if (size < MIN_CHUNK_SIZE) continue;
    if (size >= MAX_CHUNK_SIZE || (h & mask) === 0n) {
      ends.push(i + 1);
      start = i + 1;
      h = 0n;
    }
  }
  if (start < data.length) ends.push(data.length);
  return ends;
}

describe("chunk boundaries equal the reference client's (hf_xet 1.8.0)", () => {
  for (const v of vectors) {
    it(`${v.name} (${v.length} bytes, ${v.chunks.length} chunks)`, () => {
      const data = makeInput(v.segments);
      const chunks = chunkBuffer(data);
      expect(chunks.map((c) => c.offset + c.data.length)).toEqual(referenceEnds(v.name));
      expect(chunks.map((c) => hashToHex(c.hash))).toEqual(v.chunks.map((c) => c.hash));
    });
  }

  it("covers the edges: empty, 1 byte, around the minimum, around the maximum, forced cuts", () => {
    expect(referenceEnds("empty")).toEqual([]);
    expect(referenceEnds("one-byte")).toEqual([1]);
    expect(referenceEnds("min-minus-1")).toEqual([8191]);
    expect(referenceEnds("min-plus-1")).toEqual([8193]);
    expect(referenceEnds("zeros-max-minus-1")).toEqual([131071]);
    expect(referenceEnds("zeros-max")).toEqual([131072]);
    expect(referenceEnds("zeros-max-plus-1")).toEqual([131072, 131073]);
    expect(referenceEnds("zeros-1mib")).toEqual(Array.from({ length: 8 }, (_, i) => (i + 1) * 131072));
    const sizes = vectors.flatMap((v) => v.chunks.map((c) => c.length));
    expect(Math.max(...sizes)).toBe(MAX_CHUNK_SIZE);
    expect(vectors.find((v) => v.name === "random-3mib")?.chunks.length).toBe(49);
  });
});

describe("the streaming chunker", () => {
  const patterns: [string, number[]][] = [
    ["1 byte at a time", [1]],
    ["7 bytes", [7]],
    ["8191 bytes", [8191]],
    ["64 KiB", [65536]],
    ["1 MiB", [1024 * 1024]],
    ["seeded random sizes", randomSizes("feeding", 4000)],
  ];
  for (const name of ["mixed", "min-plus-1", "zeros-max-plus-1", "text-lz4"]) {
    for (const [pattern, sizes] of patterns) {
      it(`${name}, fed ${pattern}, cuts where hf_xet cuts`, () => {
        const v = vectors.find((x) => x.name === name);
        expect(feed(makeInput(v?.segments ?? []), sizes)).toEqual(referenceEnds(name));
      });
    }
  }

  it("random-3mib and repeated-block, fed in random sizes, cut where hf_xet cuts", () => {
    for (const name of ["random-3mib", "repeated-block"]) {
      const v = vectors.find((x) => x.name === name);
      const data = makeInput(v?.segments ?? []);
      expect(feed(data, randomSizes(`${name}-a`, 500))).toEqual(referenceEnds(name));
      expect(feed(data, [MIN_CHUNK_SIZE - 64, 65, 1, MAX_CHUNK_SIZE + 3])).toEqual(referenceEnds(name));
    }
  });

  it("equals the specification's byte-by-byte pseudocode on data it has no vector for", () => {
    const data = makeInput([
      { kind: "random", seed: "spec-1", length: 700_000 },
      { kind: "fill", byte: 7, length: 300_000 },
      { kind: "text", seed: "spec-2", length: 200_000 },
    ]);
    const expected = specChunker(data);
    expect(expected.length).toBeGreaterThan(10);
    expect(chunkBoundaries(data)).toEqual(expected);
    expect(feed(data, randomSizes("spec-feed", 300))).toEqual(expected);
  });

  it("keeps every chunk between the minimum and the maximum but the last", () => {
    const data = prng("bounds", 2_000_000);
    const ends = chunkBoundaries(data);
    ends.forEach((end, i) => {
      const size = end - (ends[i - 1] ?? 0);
      expect(size).toBeLessThanOrEqual(MAX_CHUNK_SIZE);
      if (i < ends.length - 1) expect(size).toBeGreaterThanOrEqual(MIN_CHUNK_SIZE);
    });
    expect(ends.at(-1)).toBe(data.length);
  });

  it("starts over after finish()", () => {
    const chunker = new Chunker();
    const data = prng("again", 300_000);
    const first = [...chunker.push(data), ...chunker.finish()];
    expect(first.length).toBeGreaterThan(1);
    const second = [...chunker.push(data), ...chunker.finish()];
    expect(second).toEqual(first.map((end) => end + data.length));
    expect(chunker.finish()).toEqual([]);
  });

  it("chunkStream yields the reference chunks, with their bytes and hashes, from any split of a stream", async () => {
    const v = vectors.find((x) => x.name === "mixed");
    const data = makeInput(v?.segments ?? []);
    async function* pieces() {
      let at = 0;
      for (const size of randomSizes("stream", 500)) {
        if (at >= data.length) return;
        yield data.slice(at, at + size);
        at += size;
      }
    }
    const chunks = [];
    for await (const chunk of chunkStream(pieces())) chunks.push(chunk);
    expect(chunks.map((c) => ({ offset: c.offset, length: c.data.length, hash: hashToHex(c.hash) }))).toEqual(
      v?.chunks,
    );
    for (const c of chunks)
      expect(Buffer.from(c.data).equals(Buffer.from(data.subarray(c.offset, c.offset + c.data.length)))).toBe(
        true,
      );
    const none = [];
    for await (const chunk of chunkStream([])) none.push(chunk);
    expect(none).toEqual([]);
  });
});
