import { describe, expect, it } from "vitest";
import { chunkBuffer } from "./chunking.js";
import { hashFromHex, hashToHex, loadXetHashing } from "./hashing.js";
import { fixture, keystream, loadVectors, makeInput, prng } from "./testdata/test-inputs.js";
import type { Vector, VectorXorb } from "./testdata/test-inputs.js";
import { XetFormatError } from "./xet-format-error.js";
import {
  CHUNK_HEADER_BYTES,
  CompressionScheme,
  XORB_MAX_BYTES,
  XORB_MAX_SERIALIZED_BYTES,
  byteGroup4,
  byteUngroup4,
  decodeChunkRecords,
  parseXorb,
  readXorbRange,
  serializeXorb,
  xorbFooter,
} from "./xorb.js";

// Some vectors are hashed while the suites are collected.
await loadXetHashing();

const stored: { vector: Vector; xorb: VectorXorb & { fixture: string }; bytes: Uint8Array }[] = [];
for (const vector of loadVectors()) {
  for (const xorb of vector.xorbs ?? []) {
    if (xorb.fixture)
      stored.push({ vector, xorb: { ...xorb, fixture: xorb.fixture }, bytes: fixture(xorb.fixture) });
  }
}

/** XOR the byte at `at` with `mask`. */
function flip(bytes: Uint8Array, at: number, mask: number): void {
  bytes[at] = (bytes[at] ?? 0) ^ mask;
}

/** 64 MiB of incompressible data in 64 KiB chunks: a full xorb as hf_xet cuts one, by its data. */
function fullXorbChunks(): Uint8Array[] {
  const data = keystream("full xorb", XORB_MAX_BYTES);
  return Array.from({ length: XORB_MAX_BYTES / 65536 }, (_, i) => data.subarray(i * 65536, (i + 1) * 65536));
}

function formatError(run: () => unknown): XetFormatError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(XetFormatError);
    return error as XetFormatError;
  }
  throw new Error("expected a XetFormatError");
}

/** A small xorb of uncompressed chunks, as a client would upload it. */
function plainXorb() {
  const data = makeInput([{ kind: "random", seed: "plain-xorb", length: 300_000 }]);
  const chunks = chunkBuffer(data).map((c) => c.data);
  return { chunks, xorb: serializeXorb(chunks, { compression: "none" }) };
}

describe("xorbs written by the reference client (hf_xet 1.8.0)", () => {
  it("include chunks of every compression scheme", () => {
    const schemes = new Set(stored.flatMap(({ bytes }) => parseXorb(bytes).chunks.map((c) => c.scheme)));
    expect([...schemes].sort()).toEqual([
      CompressionScheme.None,
      CompressionScheme.LZ4,
      CompressionScheme.ByteGrouping4LZ4,
    ]);
    expect(stored.length).toBeGreaterThanOrEqual(8);
  });

  for (const { vector, xorb, bytes } of stored) {
    it(`${xorb.fixture}: parses, verifies against its name, and lists hf_xet's chunks`, () => {
      const parsed = parseXorb(bytes, { expectedHash: xorb.hash });
      expect(hashToHex(parsed.hash)).toBe(xorb.hash);
      expect(
        parsed.chunks.map((c) => ({
          hash: hashToHex(c.hash),
          length: c.uncompressedLength,
          byteStart: c.unpackedOffset,
        })),
      ).toEqual(xorb.chunks);
      expect(parsed.unpackedLength).toBe(xorb.bytesInXorb);
      expect(parsed.hasFooter).toBe(true);
      // The stored form's footer is exactly the one the chunks imply.
      expect(
        Buffer.from(xorbFooter(parsed.hash, parsed.chunks)).equals(
          Buffer.from(bytes.subarray(parsed.recordsLength)),
        ),
      ).toBe(true);

      // The upload form (the records only) has the same hash and chunks.
      const upload = bytes.subarray(0, parsed.recordsLength);
      const uploaded = parseXorb(upload, { expectedHash: hashFromHex(xorb.hash) });
      expect(uploaded.hasFooter).toBe(false);
      expect(uploaded.chunks).toEqual(parsed.chunks);

      // Its chunks, in the file's terms, give back the input.
      const input = makeInput(vector.segments);
      const rebuilt = Buffer.concat(
        (vector.terms ?? [])
          .filter((t) => t.xorb === xorb.hash)
          .map((t) => readXorbRange(bytes, parsed, t.start, t.end)),
      );
      if ((vector.xorbs ?? []).length === 1) expect(rebuilt.equals(Buffer.from(input))).toBe(true);
      expect(decodeChunkRecords(upload).map((d) => d.length)).toEqual(
        parsed.chunks.map((c) => c.uncompressedLength),
      );
    });
  }
});

describe("serializing", () => {
  const data = makeInput([
    { kind: "text", seed: "serialize", length: 200_000 },
    { kind: "ramp", start: 5, step: 3, length: 150_000 },
    { kind: "random", seed: "serialize-r", length: 140_000 },
  ]);
  const chunks = chunkBuffer(data);

  for (const compression of ["none", "lz4", "bg4-lz4", "auto"] as const) {
    it(`round-trips with ${compression}`, () => {
      const xorb = serializeXorb(
        chunks.map((c) => c.data),
        { compression },
      );
      const parsed = parseXorb(xorb.bytes, { expectedHash: xorb.hash });
      expect(parsed.chunks).toEqual(xorb.chunks);
      expect(parsed.chunks.map((c) => hashToHex(c.hash))).toEqual(chunks.map((c) => hashToHex(c.hash)));
      expect(
        Buffer.from(readXorbRange(xorb.bytes, parsed, 0, parsed.chunks.length)).equals(Buffer.from(data)),
      ).toBe(true);
      if (compression === "none")
        expect(xorb.bytes.length).toBe(data.length + CHUNK_HEADER_BYTES * chunks.length);
      else expect(xorb.bytes.length).toBeLessThan(data.length * 0.8);
    });
  }

  it("picks the smaller scheme per chunk with auto, and stores what does not shrink uncompressed", () => {
    const schemes = serializeXorb(
      chunks.map((c) => c.data),
      { compression: "auto" },
    ).chunks.map((c) => c.scheme);
    expect(schemes).toContain(CompressionScheme.LZ4);
    expect(schemes).toContain(CompressionScheme.ByteGrouping4LZ4);
    expect(schemes).toContain(CompressionScheme.None);
  });

  it("gives a chunk sequence the hash hf_xet gives it, whatever the compression", () => {
    const v = loadVectors().find((x) => x.name === "text-lz4");
    const input = makeInput(v?.segments ?? []);
    const xorb = serializeXorb(
      chunkBuffer(input).map((c) => c.data),
      { compression: "bg4-lz4", footer: true },
    );
    expect(hashToHex(xorb.hash)).toBe(v?.xorbs?.[0]?.hash);
    expect(parseXorb(xorb.bytes, { expectedHash: xorb.hash }).hasFooter).toBe(true);
  });

  it("groups bytes by position in 4-byte words, as the specification shows", () => {
    const data = Uint8Array.from([0xa1, 0xa2, 0xa3, 0xa4, 0xb1, 0xb2, 0xb3, 0xb4, 0xc1, 0xc2]);
    expect([...byteGroup4(data)]).toEqual([0xa1, 0xb1, 0xc1, 0xa2, 0xb2, 0xc2, 0xa3, 0xb3, 0xa4, 0xb4]);
    for (let n = 0; n < 12; n++) {
      const d = prng(`bg4-${n}`, n);
      expect([...byteUngroup4(byteGroup4(d))]).toEqual([...d]);
    }
  });

  it("takes a full xorb as hf_xet sends it: 64 MiB of data that does not compress, and a header per chunk", () => {
    const full = serializeXorb(fullXorbChunks(), { compression: "none" });
    expect(full.bytes.length).toBe(XORB_MAX_BYTES + 1024 * CHUNK_HEADER_BYTES);
    const parsed = parseXorb(full.bytes, { expectedHash: full.hash });
    expect(parsed.unpackedLength).toBe(XORB_MAX_BYTES);
    expect(parsed.chunks).toHaveLength(1024);
  });

  it("refuses empty xorbs and oversized chunks", () => {
    expect(() => serializeXorb([])).toThrow(RangeError);
    expect(() => serializeXorb([new Uint8Array(128 * 1024 + 1)])).toThrow(RangeError);
    expect(() => serializeXorb([new Uint8Array(0)])).toThrow(RangeError);
  });
});

describe("malformed and mismatched xorbs", () => {
  it("a corrupted byte of an uncompressed chunk: the hash no longer matches the name", () => {
    const { xorb } = plainXorb();
    const bytes = xorb.bytes.slice();
    const target = xorb.chunks[2];
    if (!target) throw new Error("expected 3 chunks");
    flip(bytes, target.offset + CHUNK_HEADER_BYTES + 100, 0x01);
    const error = formatError(() => parseXorb(bytes, { expectedHash: xorb.hash }));
    expect(error.message).toContain("xorb hash mismatch");
    expect(error.message).toContain(hashToHex(xorb.hash));
  });

  it("a corrupted chunk of a xorb with its footer: the error names the chunk", () => {
    const item = stored.find(({ xorb }) => xorb.fixture.startsWith("text-none"));
    if (!item) throw new Error("fixture");
    const parsed = parseXorb(item.bytes);
    const bytes = item.bytes.slice();
    const chunk = parsed.chunks[1];
    if (!chunk) throw new Error("expected 2 chunks");
    flip(bytes, chunk.offset + CHUNK_HEADER_BYTES + 10, 0x40);
    const error = formatError(() => parseXorb(bytes, { expectedHash: item.xorb.hash }));
    expect(error.chunkIndex).toBe(1);
    expect(error.message).toMatch(/chunk 1 as [0-9a-f]{64}, but the chunk's bytes hash to/);
  });

  it("a corrupted LZ4 chunk names the chunk and its byte", () => {
    const item = stored.find(({ xorb }) => xorb.fixture.startsWith("text-lz4"));
    if (!item) throw new Error("fixture");
    const parsed = parseXorb(item.bytes);
    const chunk = parsed.chunks[3];
    if (!chunk) throw new Error("expected 4 chunks");
    const bytes = item.bytes.subarray(0, parsed.recordsLength).slice();
    // The LZ4 block size word, just after the chunk header and the 7-byte frame header.
    bytes[chunk.offset + CHUNK_HEADER_BYTES + 9] = 0xff;
    const error = formatError(() => parseXorb(bytes));
    expect(error.chunkIndex).toBe(3);
    expect(error.message).toMatch(/^bad compression: chunk 3 at byte \d+ \(lz4\): /);
    expect(error.offset).toBeGreaterThan(chunk.offset);
  });

  it("truncated anywhere: names the chunk whose header or data is cut", () => {
    const { xorb } = plainXorb();
    for (const chunk of xorb.chunks) {
      for (const cut of [chunk.offset + 3, chunk.offset + CHUNK_HEADER_BYTES + 5]) {
        const error = formatError(() => parseXorb(xorb.bytes.subarray(0, cut)));
        expect(error.message).toMatch(
          new RegExp(`^xorb truncated: chunk ${chunk.index} at byte ${chunk.offset}`),
        );
        expect(error.chunkIndex).toBe(chunk.index);
      }
    }
    const compressed = stored.find(({ xorb }) => xorb.fixture.startsWith("mixed"))?.bytes ?? new Uint8Array();
    const records = parseXorb(compressed).recordsLength;
    for (let cut = 1; cut < records; cut += 7919)
      expect(() => parseXorb(compressed.subarray(0, cut))).toThrow(XetFormatError);
  });

  it("a bad header: unknown scheme, version, lengths", () => {
    const { xorb } = plainXorb();
    const second = xorb.chunks[1]?.offset ?? 0;
    const patch = (at: number, value: number) => {
      const bytes = xorb.bytes.slice();
      bytes[at] = value;
      return bytes;
    };
    let error = formatError(() => parseXorb(patch(second + 4, 7)));
    expect(error.message).toBe(
      `bad chunk header: chunk 1 at byte ${second} has unknown compression scheme 7`,
    );
    expect(error.offset).toBe(second);
    error = formatError(() => parseXorb(patch(second, 1)));
    expect(error.message).toBe(`bad chunk header: chunk 1 at byte ${second} has version 1, expected 0`);
    error = formatError(() => parseXorb(patch(second + 7, 2)));
    expect(error.message).toMatch(/more than the 131072 a chunk may have/);
    error = formatError(() => parseXorb(patch(second + 1, ((xorb.bytes[second + 1] ?? 0) + 1) & 0xff)));
    expect(error.message).toMatch(/is uncompressed but announces/);
    error = formatError(() => parseXorb(Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0])));
    expect(error.message).toBe("bad chunk header: chunk 0 at byte 0 is empty");
  });

  it("the wrong name", () => {
    const { xorb } = plainXorb();
    const other = "ab".repeat(32);
    const error = formatError(() => parseXorb(xorb.bytes, { expectedHash: other }));
    expect(error.message).toBe(
      `xorb hash mismatch: its ${xorb.chunks.length} chunks hash to ${hashToHex(xorb.hash)}, but it was uploaded as ${other}`,
    );
    expect(formatError(() => parseXorb(xorb.bytes, { expectedHash: "not-a-hash" })).kind).toBe("hash");
  });

  it("nothing, more bytes than 64 MiB of data with its headers, or more than 64 MiB of data", () => {
    expect(formatError(() => parseXorb(new Uint8Array(0))).message).toBe("xorb has no chunks");
    expect(formatError(() => parseXorb(new Uint8Array(XORB_MAX_SERIALIZED_BYTES + 1))).message).toBe(
      `xorb is ${XORB_MAX_SERIALIZED_BYTES + 1} bytes, more than the ${XORB_MAX_SERIALIZED_BYTES}-byte limit (64 MiB of chunk data with its headers)`,
    );
    // 64 MiB of data and one more chunk: within the serialized limit, over the data limit.
    const full = serializeXorb(fullXorbChunks(), { compression: "none" });
    const extra = serializeXorb([prng("one more", 64 * 1024)]);
    const over = new Uint8Array(full.bytes.length + extra.bytes.length);
    over.set(full.bytes);
    over.set(extra.bytes, full.bytes.length);
    expect(over.length).toBeLessThan(XORB_MAX_SERIALIZED_BYTES);
    const error = formatError(() => parseXorb(over));
    expect(error.message).toBe(
      `xorb holds more than ${XORB_MAX_BYTES} bytes (64 MiB) of chunk data by chunk ${full.chunks.length}`,
    );
    expect(error.chunkIndex).toBe(full.chunks.length);
  });

  it("a footer that disagrees with the chunks", () => {
    const item = stored.find(({ xorb }) => xorb.fixture.startsWith("ramp-bg4"));
    if (!item) throw new Error("fixture");
    const { recordsLength } = parseXorb(item.bytes);
    const lastBoundary = item.bytes.slice();
    // The records' end offsets follow the hashes section; change the first one.
    const boundariesAt = recordsLength + 8 + 32 + 12 + 32 * 5 + 12;
    flip(lastBoundary, boundariesAt, 1);
    expect(formatError(() => parseXorb(lastBoundary)).message).toMatch(
      /^bad xorb footer: byte \d+ does not agree/,
    );
    const nonce = item.bytes.slice();
    flip(nonce, nonce.length - 8, 0xff); // the reserved buffer (a nonce) is not checked
    expect(hashToHex(parseXorb(nonce).hash)).toBe(item.xorb.hash);
    const cut = item.bytes.subarray(0, item.bytes.length - 1);
    expect(formatError(() => parseXorb(cut)).message).toMatch(
      /^bad xorb footer: \d+ bytes, expected \d+ for 5 chunks/,
    );
    const version = item.bytes.slice();
    version[recordsLength + 7] = 0;
    expect(formatError(() => parseXorb(version)).message).toMatch(/version 0 is not supported/);
  });

  it("never fails with anything but a format error on corrupted bytes", () => {
    const item = stored.find(({ xorb }) => xorb.fixture.startsWith("ramp-auto"));
    if (!item) throw new Error("fixture");
    const noise = prng("xorb-flip", item.bytes.length);
    for (let i = 0; i < item.bytes.length; i += 13) {
      const bytes = item.bytes.slice();
      flip(bytes, i, (noise[i] ?? 0) | 1);
      try {
        parseXorb(bytes, { expectedHash: item.xorb.hash });
      } catch (error) {
        expect(error).toBeInstanceOf(XetFormatError);
      }
    }
  });
});
