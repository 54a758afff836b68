import { describe, expect, it } from "vitest";
import { hashToHex, loadXetHashing } from "./hashing.js";
import {
  planReconstruction,
  reconstructionResponse,
  reconstructionResponseV2,
  resolveRangeHeader,
} from "./reconstruction.js";
import type { FileTerm, QueryReconstructionResponse, XorbLayout } from "./reconstruction.js";
import { parseShard } from "./shard.js";
import type { ShardTerm } from "./shard.js";
import { fixture, loadVectors, makeInput, prng } from "./testdata/test-inputs.js";
import { XetFormatError } from "./xet-format-error.js";
import { decodeChunkRecords, parseXorb, readXorbRange } from "./xorb.js";
import type { ParsedXorb } from "./xorb.js";

// Some vectors are hashed while the suites are collected.
await loadXetHashing();

/** The stored xorbs hf_xet wrote, by hash. */
const xorbs = new Map<string, { bytes: Uint8Array; parsed: ParsedXorb }>();
for (const v of loadVectors()) {
  for (const x of v.xorbs ?? []) {
    if (!x.fixture) continue;
    const bytes = fixture(x.fixture);
    xorbs.set(x.hash, { bytes, parsed: parseXorb(bytes) });
  }
}
const layoutOf = (hex: string): XorbLayout | undefined => xorbs.get(hex)?.parsed;

/**
 * What a client does with an answer (the download protocol): fetch each `url_range` of the xorb, decode the
 * chunks, take each term's chunks from the fetch that covers them, skip `offset_into_first_range`, and cut to the
 * requested length.
 */
function download(answer: QueryReconstructionResponse, length: number): Buffer {
  const parts: Uint8Array[] = [];
  for (const term of answer.terms) {
    const fetch = answer.fetch_info[term.hash]?.find(
      (f) => f.range.start <= term.range.start && f.range.end >= term.range.end,
    );
    if (!fetch) throw new Error(`no fetch covers term ${JSON.stringify(term)}`);
    const stored = xorbs.get(fetch.url.replace("xorb://", ""));
    if (!stored) throw new Error("unknown xorb");
    const chunks = decodeChunkRecords(stored.bytes.subarray(fetch.url_range.start, fetch.url_range.end + 1));
    expect(chunks).toHaveLength(fetch.range.end - fetch.range.start);
    const termChunks = chunks.slice(term.range.start - fetch.range.start, term.range.end - fetch.range.start);
    expect(termChunks.reduce((n, c) => n + c.length, 0)).toBe(term.unpacked_length);
    parts.push(...termChunks);
  }
  const all = Buffer.concat(parts);
  return all.subarray(answer.offset_into_first_range, answer.offset_into_first_range + length);
}

const urlFor = (fetch: { xorbHash: string }) => `xorb://${fetch.xorbHash}`;

describe("reconstructing the files hf_xet uploaded", () => {
  for (const v of loadVectors().filter((x) => x.uploadedShardFixture)) {
    const input = makeInput(v.segments);
    const file = parseShard(fixture(v.uploadedShardFixture ?? "")).files[0];
    const terms: ShardTerm[] = file?.terms ?? [];

    it(`${v.name}: the whole file`, () => {
      const plan = planReconstruction(terms, layoutOf);
      expect(plan.offsetIntoFirstRange).toBe(0);
      expect(plan.fileSize).toBe(input.length);
      expect(plan.terms).toEqual(
        terms.map((t) => ({
          xorbHash: hashToHex(t.xorbHash),
          chunkStart: t.chunkStart,
          chunkEnd: t.chunkEnd,
          unpackedLength: t.unpackedLength,
        })),
      );
      expect(download(reconstructionResponse(plan, urlFor), input.length).equals(Buffer.from(input))).toBe(
        true,
      );
    });

    it(`${v.name}: byte ranges`, () => {
      const noise = prng(`ranges-${v.name}`, 64);
      const view = new DataView(noise.buffer, noise.byteOffset);
      const ranges = [
        [0, 1],
        [input.length - 1, input.length],
        [0, input.length],
        ...Array.from({ length: 8 }, (_, i) => {
          const a = view.getUint32(i * 8, true) % input.length;
          const b = view.getUint32(i * 8 + 4, true) % input.length;
          return [Math.min(a, b), Math.max(a, b) + 1];
        }),
      ];
      for (const [start = 0, end = 0] of ranges) {
        const plan = planReconstruction(terms, layoutOf, { start, end });
        const answer = reconstructionResponse(plan, urlFor);
        const got = download(answer, end - start);
        expect(got.equals(Buffer.from(input.subarray(start, end))), `[${start}, ${end})`).toBe(true);
        // Only the chunks holding the range: the first kept chunk starts at or before `start`, within one chunk.
        expect(answer.offset_into_first_range).toBeLessThan(128 * 1024);
      }
    });
  }

  it("merges the chunk ranges of terms on the same xorb into one fetch", () => {
    const v = loadVectors().find((x) => x.name === "zeros-1mib");
    const terms = parseShard(fixture(v?.uploadedShardFixture ?? "")).files[0]?.terms ?? [];
    const plan = planReconstruction(terms, layoutOf);
    expect(plan.terms).toHaveLength(8);
    expect(plan.fetches).toHaveLength(1);
    const answer = reconstructionResponse(plan, urlFor);
    const [hash] = Object.keys(answer.fetch_info);
    const stored = xorbs.get(hash ?? "");
    expect(answer.fetch_info[hash ?? ""]).toEqual([
      {
        range: { start: 0, end: 1 },
        url: `xorb://${hash}`,
        url_range: { start: 0, end: (stored?.parsed.recordsLength ?? 0) - 1 },
      },
    ]);
  });
});

describe("files across several xorbs", () => {
  const [a, b] = ["text-none", "ramp-bg4"].map(
    (name) => loadVectors().find((v) => v.name === name)?.xorbs?.[0]?.hash ?? "",
  );
  const xa = xorbs.get(a ?? "");
  const xb = xorbs.get(b ?? "");
  if (!a || !b || !xa || !xb) throw new Error("fixtures");
  const term = (hash: string, x: { parsed: ParsedXorb }, start: number, end: number): FileTerm => ({
    xorbHash: hash,
    chunkStart: start,
    chunkEnd: end,
    unpackedLength: x.parsed.chunks.slice(start, end).reduce((n, c) => n + c.uncompressedLength, 0),
  });
  // a[0,2) b[1,4) a[1,3) b[4,5): overlapping and disjoint ranges on both xorbs.
  const terms = [term(a, xa, 0, 2), term(b, xb, 1, 4), term(a, xa, 1, 3), term(b, xb, 4, 5)];
  const content = Buffer.concat([
    readXorbRange(xa.bytes, xa.parsed, 0, 2),
    readXorbRange(xb.bytes, xb.parsed, 1, 4),
    readXorbRange(xa.bytes, xa.parsed, 1, 3),
    readXorbRange(xb.bytes, xb.parsed, 4, 5),
  ]);

  it("fetches each xorb's chunks once, merging overlapping and adjacent ranges", () => {
    const plan = planReconstruction(terms, layoutOf);
    expect(plan.fetches.map((f) => [f.xorbHash, f.chunkStart, f.chunkEnd])).toEqual([
      [a, 0, 3],
      [b, 1, 5],
    ]);
    expect(download(reconstructionResponse(plan, urlFor), content.length).equals(content)).toBe(true);
  });

  it("answers a range inside the second term with that term only, trimmed to its chunks", () => {
    const first = xb.parsed.chunks[2];
    const startOfTerm2 = terms[0]?.unpackedLength ?? 0;
    const chunk1 = xb.parsed.chunks[1]?.uncompressedLength ?? 0;
    const start = startOfTerm2 + chunk1 + 10;
    const end = start + 100;
    const plan = planReconstruction(terms, layoutOf, { start, end });
    expect(plan.terms).toEqual([
      { xorbHash: b, chunkStart: 2, chunkEnd: 3, unpackedLength: first?.uncompressedLength },
    ]);
    expect(plan.offsetIntoFirstRange).toBe(10);
    expect(plan.fetches).toEqual([
      {
        xorbHash: b,
        chunkStart: 2,
        chunkEnd: 3,
        byteStart: first?.offset,
        byteEnd: (first?.offset ?? 0) + (first?.recordLength ?? 0) - 1,
      },
    ]);
    expect(download(reconstructionResponse(plan, urlFor), 100).equals(content.subarray(start, end))).toBe(
      true,
    );
  });

  it("gives the V2 answer: one URL per xorb with all its ranges", () => {
    const answer = reconstructionResponseV2(planReconstruction(terms, layoutOf), (hash) => `xorb://${hash}`);
    expect(Object.keys(answer.xorbs)).toEqual([a, b]);
    expect(answer.xorbs[a]).toEqual([
      {
        url: `xorb://${a}`,
        ranges: [
          {
            chunks: { start: 0, end: 3 },
            bytes: {
              start: 0,
              end: (xa.parsed.chunks[2]?.offset ?? 0) + (xa.parsed.chunks[2]?.recordLength ?? 0) - 1,
            },
          },
        ],
      },
    ]);
    expect(answer.terms.map((t) => t.range)).toEqual(
      terms.map((t) => ({ start: t.chunkStart, end: t.chunkEnd })),
    );
  });

  it("refuses terms the stored xorbs do not hold", () => {
    expect(() => planReconstruction([{ ...term(a, xa, 0, 2), chunkEnd: 99 }], layoutOf)).toThrow(
      /outside xorb/,
    );
    expect(() => planReconstruction([{ ...term(a, xa, 0, 2), unpackedLength: 5 }], layoutOf)).toThrow(
      /announces 5 bytes/,
    );
    expect(() => planReconstruction([term("00".repeat(32), xa, 0, 1)], layoutOf)).toThrow(/not stored/);
    expect(() => planReconstruction(terms, layoutOf, { start: 0, end: content.length + 1 })).toThrow(
      XetFormatError,
    );
  });
});

describe("the Range header", () => {
  it("resolves the forms clients send", () => {
    expect(resolveRangeHeader(undefined, 100)).toBeUndefined();
    expect(resolveRangeHeader("bytes=0-99", 100)).toEqual({ start: 0, end: 100 });
    expect(resolveRangeHeader("bytes=10-19", 100)).toEqual({ start: 10, end: 20 });
    expect(resolveRangeHeader("bytes=10-", 100)).toEqual({ start: 10, end: 100 });
    expect(resolveRangeHeader("bytes=-10", 100)).toEqual({ start: 90, end: 100 });
    expect(resolveRangeHeader("bytes=-1000", 100)).toEqual({ start: 0, end: 100 });
    expect(resolveRangeHeader("bytes=50-100000", 100)).toEqual({ start: 50, end: 100 });
  });

  it("calls a start at or past the end unsatisfiable (the API's 416)", () => {
    for (const header of [
      "bytes=100-",
      "bytes=100-200",
      "bytes=5-4",
      "bytes=-0",
      "items=0-1",
      "bytes=0-1,3-4",
      "bytes=-",
    ]) {
      const run = () => resolveRangeHeader(header, 100);
      expect(run, header).toThrow(XetFormatError);
      expect(run, header).toThrow(/not satisfiable/);
    }
    expect(() => resolveRangeHeader("bytes=0-0", 0)).toThrow(/not satisfiable/);
  });

  it("plans nothing for an empty file", () => {
    expect(planReconstruction([], layoutOf)).toMatchObject({
      terms: [],
      fetches: [],
      fileSize: 0,
      offsetIntoFirstRange: 0,
    });
  });
});
