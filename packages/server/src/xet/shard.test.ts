import { describe, expect, it } from "vitest";
import { hashFromHex, hashToHex, keyedHash, loadXetHashing } from "./hashing.js";
import {
  SHARD_FOOTER_BYTES,
  SHARD_HEADER_BYTES,
  missingXorbs,
  parseShard,
  protectChunkHashes,
  serializeShard,
  verifyUploadedShard,
} from "./shard.js";
import type { KnownXorb, ParsedShard } from "./shard.js";
import { fixture, loadVectors, prng } from "./testdata/test-inputs.js";
import type { Vector } from "./testdata/test-inputs.js";
import { XetFormatError } from "./xet-format-error.js";

// Some vectors are hashed while the suites are collected.
await loadXetHashing();

const withShards = loadVectors().filter(
  (v): v is Vector & { uploadedShardFixture: string; sessionShardFixture: string } =>
    Boolean(v.uploadedShardFixture && v.sessionShardFixture),
);

/** What the server would know of the xorbs hf_xet uploaded (their chunk lists). */
function knownXorbs(vectors: readonly Vector[]): (hex: string) => KnownXorb | undefined {
  const known = new Map<string, KnownXorb>();
  for (const v of vectors) {
    for (const x of v.xorbs ?? []) {
      known.set(x.hash, { chunks: x.chunks.map((c) => ({ hash: hashFromHex(c.hash), length: c.length })) });
    }
  }
  return (hex) => known.get(hex);
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

/** The upload form of a stored shard: the header's footer size 0, the sections, nothing after them. */
function uploadForm(stored: Uint8Array): Uint8Array {
  const parsed = parseShard(stored);
  const upload = serializeShard({ files: parsed.files, xorbs: parsed.xorbs });
  expect(upload.length).toBeLessThan(stored.length - SHARD_FOOTER_BYTES + 1);
  return upload;
}

describe("shards written by the reference client (hf_xet 1.8.0)", () => {
  it("cover every vector with objects", () => {
    expect(withShards.length).toBeGreaterThanOrEqual(8);
  });

  for (const v of withShards) {
    it(`${v.name}: the uploaded shard (as its local CAS stores it) lists the file, its terms and its xorb`, () => {
      const bytes = fixture(v.uploadedShardFixture);
      const shard = parseShard(bytes);
      expect(shard.files).toHaveLength(1);
      const [file] = shard.files;
      expect(hashToHex(file?.fileHash ?? new Uint8Array(32))).toBe(v.fileHash);
      expect(file?.sha256).toBe(v.sha256);
      expect(
        file?.terms.map((t) => ({
          xorb: hashToHex(t.xorbHash),
          start: t.chunkStart,
          end: t.chunkEnd,
          unpackedLength: t.unpackedLength,
          verificationHash: t.verificationHash ? hashToHex(t.verificationHash) : undefined,
        })),
      ).toEqual(v.terms);
      expect(
        shard.xorbs.map((x) => ({
          hash: hashToHex(x.hash),
          bytesInXorb: x.unpackedLength,
          chunks: x.chunks.map((c) => ({
            hash: hashToHex(c.hash),
            length: c.unpackedLength,
            byteStart: c.unpackedOffset,
          })),
        })),
      ).toEqual(v.xorbs?.map((x) => ({ hash: x.hash, bytesInXorb: x.bytesInXorb, chunks: x.chunks })));
      expect(shard.footer).toBeDefined();

      // Stored form, without lookup tables, byte for byte; and its upload form verifies.
      expect(
        Buffer.from(serializeShard(shard, { footer: shard.footer, lookupTables: false })).equals(
          Buffer.from(bytes),
        ),
      ).toBe(true);
      const upload = uploadForm(bytes);
      expect(upload.subarray(40, 48)).toEqual(new Uint8Array(8));
      expect(Buffer.from(upload.subarray(48)).equals(Buffer.from(bytes.subarray(48, upload.length)))).toBe(
        true,
      );
      const reparsed = parseShard(upload);
      expect(reparsed.footer).toBeUndefined();
      expect(reparsed.files).toEqual(shard.files);
      expect(reparsed.xorbs).toEqual(shard.xorbs);
      verifyUploadedShard(reparsed, knownXorbs([v]));
    });

    it(`${v.name}: the session shard, with lookup tables, round-trips byte for byte`, () => {
      const bytes = fixture(v.sessionShardFixture);
      const shard = parseShard(bytes);
      const uploaded = parseShard(fixture(v.uploadedShardFixture));
      expect(shard.files).toEqual(uploaded.files);
      expect(shard.xorbs.map((x) => x.chunks.map((c) => hashToHex(c.hash)))).toEqual(
        uploaded.xorbs.map((x) => x.chunks.map((c) => hashToHex(c.hash))),
      );
      expect(shard.footer?.creationTimestamp).toBeGreaterThan(1_700_000_000n);
      expect(shard.footer?.keyExpiry).toBeGreaterThan(shard.footer?.creationTimestamp ?? 0n);
      expect(Buffer.from(serializeShard(shard, { footer: shard.footer })).equals(Buffer.from(bytes))).toBe(
        true,
      );
    });
  }
});

describe("serializing", () => {
  const v = withShards.find((x) => x.name === "mixed");
  const shard = parseShard(fixture(v?.uploadedShardFixture ?? ""));

  it("writes the stored form with lookup tables a parser accepts, and defaults the footer fields", () => {
    const before = BigInt(Math.floor(Date.now() / 1000));
    const stored = parseShard(serializeShard(shard, { footer: true }));
    expect(stored.files).toEqual(shard.files);
    expect(stored.footer?.keyExpiry).toBe(0xffffffffffffffffn);
    expect(stored.footer?.creationTimestamp).toBeGreaterThanOrEqual(before);
    expect(stored.footer?.storedBytes).toBe(BigInt(shard.xorbs[0]?.unpackedLength ?? 0));
    expect(stored.footer?.materializedBytes).toBe(BigInt(v?.length ?? 0));
    expect(stored.footer?.chunkHashKey).toEqual(new Uint8Array(32));
  });

  it("protects chunk hashes with a key for global deduplication answers", () => {
    const key = prng("hmac", 32);
    const answer = parseShard(
      serializeShard(
        { files: [], xorbs: protectChunkHashes(shard.xorbs, key) },
        { footer: { chunkHashKey: key } },
      ),
    );
    expect(answer.files).toEqual([]);
    expect(answer.footer?.chunkHashKey).toEqual(key);
    const original = shard.xorbs[0]?.chunks[0]?.hash ?? new Uint8Array(32);
    expect(answer.xorbs[0]?.chunks[0]?.hash).toEqual(keyedHash(key, original));
    expect(answer.xorbs[0]?.chunks[0]?.hash).not.toEqual(original);
  });

  it("refuses files with verification hashes for only some terms", () => {
    const file = shard.files[0];
    const term = file?.terms[0];
    if (!file || !term) throw new Error("a file with a term");
    const partial: ParsedShard = {
      files: [{ ...file, terms: [term, { ...term, verificationHash: undefined }] }],
      xorbs: [],
    };
    expect(() => serializeShard(partial)).toThrow(/verification hashes for 1 of its 2 terms/);
  });
});

describe("verifying an uploaded shard against the stored xorbs", () => {
  const v = withShards.find((x) => x.name === "zeros-1mib");
  const upload = parseShard(uploadForm(fixture(v?.uploadedShardFixture ?? "")));
  const lookup = knownXorbs(v ? [v] : []);
  const edit = (change: (s: ParsedShard) => void): ParsedShard => {
    const copy = structuredClone(upload);
    change(copy);
    return copy;
  };

  it("accepts the reference client's shard (8 terms on one chunk)", () => {
    expect(upload.files[0]?.terms).toHaveLength(8);
    expect(() => verifyUploadedShard(upload, lookup)).not.toThrow();
  });

  it("names every xorb that is not stored", () => {
    expect(missingXorbs(upload, () => undefined)).toEqual([v?.xorbs?.[0]?.hash]);
    const error = formatError(() => verifyUploadedShard(upload, () => undefined));
    expect(error.message).toBe(`the shard names 1 xorb(s) that are not stored: ${v?.xorbs?.[0]?.hash}`);
  });

  it("refuses a CAS info entry that does not match the stored xorb", () => {
    const wrong = edit((s) => {
      const chunk = s.xorbs[0]?.chunks[0];
      if (chunk) chunk.hash = new Uint8Array(32).fill(7);
    });
    expect(formatError(() => verifyUploadedShard(wrong, lookup)).message).toMatch(
      /chunk 0 does not match the stored xorb's chunk 0/,
    );
  });

  it("refuses a wrong verification hash, a wrong length, a range outside the xorb, a wrong file hash", () => {
    const cases: [string, (s: ParsedShard) => void, RegExp][] = [
      [
        "verification",
        (s) => (s.files[0]?.terms[3]?.verificationHash ?? new Uint8Array(1)).fill(9, 0, 1),
        /term 3: the verification hash does not match/,
      ],
      [
        "length",
        (s) => void ((s.files[0]?.terms[1] as { unpackedLength: number }).unpackedLength += 1),
        /term 1: announces 131073 unpacked bytes, but its chunks hold 131072/,
      ],
      [
        "range",
        (s) => void ((s.files[0]?.terms[0] as { chunkEnd: number }).chunkEnd = 2),
        /term 0: chunk range \[0, 2\) is outside xorb [0-9a-f]{64}'s 1 chunks/,
      ],
      ["file hash", (s) => s.files[0]?.fileHash.fill(9, 5, 6), /its terms' chunks hash to file [0-9a-f]{64}/],
      ["dropped term", (s) => void s.files[0]?.terms.pop(), /its terms' chunks hash to file/],
      [
        "no sha256",
        (s) => void delete (s.files[0] as { sha256?: string }).sha256,
        /has no metadata extension/,
      ],
      [
        "no verification",
        (s) => s.files[0]?.terms.forEach((t) => delete t.verificationHash),
        /has no verification entries/,
      ],
    ];
    for (const [name, change, message] of cases) {
      const error = formatError(() => verifyUploadedShard(edit(change), lookup));
      expect(error.message, name).toMatch(message);
      expect(error.fileIndex, name).toBe(0);
    }
  });

  it("accepts a shard uploaded with a footer, with or without lookup tables, as the JavaScript client sends it", () => {
    const stored = parseShard(fixture(v?.uploadedShardFixture ?? ""));
    expect(stored.footer).toBeDefined();
    expect(() => verifyUploadedShard(stored, lookup)).not.toThrow();
    // The session shard has lookup tables (the uploaded one's are empty).
    const bytes = new Uint8Array(fixture(v?.sessionShardFixture ?? ""));
    const session = parseShard(bytes);
    const footer = bytes.length - SHARD_FOOTER_BYTES;
    const tables = Number(parseShardFooterField(bytes, 3));
    // The JavaScript client's form: the same sections, no lookup tables, their offsets and counts zero.
    const withoutTables = new Uint8Array(tables + SHARD_FOOTER_BYTES);
    withoutTables.set(bytes.subarray(0, tables));
    withoutTables.set(bytes.subarray(footer), tables);
    const view = new DataView(withoutTables.buffer);
    for (let field = 3; field <= 8; field++) view.setBigUint64(tables + 8 * field, 0n, true);
    view.setBigUint64(tables + 8 * 24, BigInt(tables), true);
    const parsed = parseShard(withoutTables);
    expect(parsed.files).toEqual(session.files);
    expect(parsed.xorbs).toEqual(session.xorbs);
    // Zero counts with the tables still there are bytes the footer does not account for.
    const zeroed = new Uint8Array(bytes);
    for (let field = 3; field <= 8; field++)
      new DataView(zeroed.buffer).setBigUint64(footer + 8 * field, 0n, true);
    expect(formatError(() => parseShard(zeroed)).message).toMatch(
      /unexpected bytes between the lookup tables/,
    );
  });
});

describe("malformed shards", () => {
  const v = withShards.find((x) => x.name === "text-lz4");
  const stored = fixture(v?.sessionShardFixture ?? "");
  const upload = uploadForm(stored);
  const patch = (bytes: Uint8Array, at: number, values: number[]) => {
    const copy = bytes.slice();
    copy.set(values, at);
    return copy;
  };
  const u32 = (value: number) => [value & 0xff, (value >>> 8) & 0xff, (value >>> 16) & 0xff, value >>> 24];

  it("names a bad tag, version or footer size", () => {
    expect(formatError(() => parseShard(patch(upload, 3, [0]))).message).toBe(
      "not a shard: the header's magic tag is wrong",
    );
    expect(formatError(() => parseShard(patch(upload, 32, [3]))).message).toBe(
      "unsupported shard header version 3 (expected 2)",
    );
    expect(formatError(() => parseShard(patch(upload, 40, [100]))).message).toBe(
      "bad shard header: footer size 100 is neither 0 (upload) nor 200 (stored)",
    );
    expect(formatError(() => parseShard(new Uint8Array(10))).message).toBe(
      "shard truncated: the header at byte 0 needs 48 bytes but only 10 remain",
    );
  });

  it("refuses every truncation, of the upload form and of the stored form", () => {
    for (const bytes of [upload, stored]) {
      for (let cut = 0; cut < bytes.length; cut++)
        expect(() => parseShard(bytes.subarray(0, cut))).toThrow(XetFormatError);
    }
  });

  it("refuses trailing bytes, unknown flags, empty files and ranges, counts past the end", () => {
    const extended = new Uint8Array(upload.length + 48);
    extended.set(upload);
    expect(formatError(() => parseShard(extended)).message).toBe(
      `48 unexpected bytes after the CAS info section of a shard without footer`,
    );
    const file = SHARD_HEADER_BYTES;
    let error = formatError(() => parseShard(patch(upload, file + 32, u32(0xc0000001))));
    expect(error.message).toBe(`file 0 at byte 48 has unknown flags 0xc0000001`);
    expect(error.fileIndex).toBe(0);
    error = formatError(() => parseShard(patch(upload, file + 36, u32(0))));
    expect(error.message).toBe("file 0 at byte 48 has no terms");
    error = formatError(() => parseShard(patch(upload, file + 36, u32(1_000_000))));
    expect(error.message).toMatch(
      /^shard truncated: file 0 at byte 48 announces 1000000 terms with verification entries and a metadata extension/,
    );
    const term = file + 48;
    error = formatError(() => parseShard(patch(upload, term + 40, u32(9))));
    expect(error.message).toBe(`file 0 term 0 at byte ${term} has an empty chunk range [9, 7)`);
  });

  it("refuses a CAS info section whose chunks disagree with its header", () => {
    const shard = parseShard(upload);
    const files = shard.files.reduce((n, f) => n + 1 + f.terms.length * 2 + 1, 0);
    const xorb = SHARD_HEADER_BYTES + (files + 1) * 48;
    let error = formatError(() => parseShard(patch(upload, xorb + 40, u32(12))));
    expect(error.message).toMatch(/^xorb 0 at byte \d+ announces 12 bytes but its chunks hold 300000/);
    expect(error.xorbIndex).toBe(0);
    error = formatError(() => parseShard(patch(upload, xorb + 48 + 48 + 32, u32(1))));
    expect(error.message).toMatch(/^xorb 0 chunk 1 at byte \d+ starts at unpacked offset 1, expected 24346/);
  });

  it("refuses footers and lookup tables that do not match the sections", () => {
    const footer = stored.length - SHARD_FOOTER_BYTES;
    expect(formatError(() => parseShard(patch(stored, footer, [2]))).message).toBe(
      "unsupported shard footer version 2 (expected 1)",
    );
    expect(formatError(() => parseShard(patch(stored, footer + 16, [1]))).message).toMatch(
      /the CAS info offset is \d+, expected \d+/,
    );
    expect(formatError(() => parseShard(patch(stored, footer + 192, [0]))).message).toMatch(
      /the footer offset is \d+, expected \d+/,
    );
    const tables = Number(parseShardFooterField(stored, 3));
    expect(formatError(() => parseShard(patch(stored, tables, [(stored[tables] ?? 0) ^ 1]))).message).toMatch(
      /bad shard lookup table: the file lookup entry 0 at byte \d+ does not match the sections/,
    );
    expect(formatError(() => parseShard(patch(stored, footer + 8 * 8, [200]))).message).toMatch(
      /chunk lookup table of 200 entries runs into the footer/,
    );
  });

  it("never fails with anything but a format error on corrupted bytes", () => {
    const noise = prng("shard-flip", stored.length);
    for (let i = 0; i < stored.length; i++) {
      try {
        parseShard(patch(stored, i, [(stored[i] ?? 0) ^ ((noise[i] ?? 0) | 1)]));
      } catch (error) {
        expect(error).toBeInstanceOf(XetFormatError);
      }
    }
  });
});

function parseShardFooterField(bytes: Uint8Array, index: number): bigint {
  return new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(
    bytes.length - SHARD_FOOTER_BYTES + 8 * index,
    true,
  );
}
