import { blake3 } from "@noble/hashes/blake3.js";
import { describe, expect, it } from "vitest";
import {
  chunkHash,
  DATA_KEY,
  fileHash,
  hashFromHex,
  hashToHex,
  INTERNAL_NODE_KEY,
  internalNodeHash,
  isGlobalDedupEligible,
  isHashHex,
  keyedHash,
  loadXetHashing,
  merkleRoot,
  termVerificationHash,
  VERIFICATION_KEY,
  xorbHash,
  ZERO_HASH,
} from "./hashing.js";
import { loadVectors, makeInput } from "./testdata/test-inputs.js";
import { XetFormatError } from "./xet-format-error.js";

// Some vectors are hashed while the suites are collected.
await loadXetHashing();

const vectors = loadVectors();

function chunksOf(hexes: { hash: string; length: number }[]) {
  return hexes.map((c) => ({ hash: hashFromHex(c.hash), length: c.length }));
}

describe("the string form of hashes", () => {
  it("writes each 8-byte group as a little-endian u64, as the specification's example", () => {
    // The specification's bytes 0..31 reordered to [7..0, 15..8, 23..16, 31..24]. (Its printed string drops the
    // "10" of the third group: 62 digits; the reordered bytes it lists give this one.)
    const bytes = Uint8Array.from({ length: 32 }, (_, i) => i);
    const reordered = [
      7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 23, 22, 21, 20, 19, 18, 17, 16, 31, 30, 29, 28,
      27, 26, 25, 24,
    ];
    const expected = "07060504030201000f0e0d0c0b0a090817161514131211101f1e1d1c1b1a1918";
    expect(Buffer.from(reordered).toString("hex")).toBe(expected);
    expect(hashToHex(bytes)).toBe(expected);
    expect(hashToHex(bytes)).not.toBe(Buffer.from(bytes).toString("hex"));
    expect([...hashFromHex(expected)]).toEqual([...bytes]);
  });

  it("round-trips every hash of the vectors", () => {
    for (const v of vectors) {
      for (const c of v.chunks) expect(hashToHex(hashFromHex(c.hash))).toBe(c.hash);
    }
  });

  it("refuses what is not 64 lowercase hex digits", () => {
    for (const bad of [
      "",
      "00",
      "G".repeat(64),
      "A".repeat(64),
      "0".repeat(63),
      "0".repeat(65),
      ` ${"0".repeat(63)}`,
    ]) {
      expect(isHashHex(bad)).toBe(false);
      expect(() => hashFromHex(bad)).toThrow(XetFormatError);
    }
    expect(() => hashToHex(new Uint8Array(31))).toThrow(RangeError);
  });
});

describe("hashes equal the reference client's (hf_xet 1.8.0)", () => {
  it("chunk hashes: BLAKE3 keyed with DATA_KEY over each chunk", () => {
    let checked = 0;
    for (const v of vectors) {
      const input = makeInput(v.segments);
      expect(input.length).toBe(v.length);
      for (const c of v.chunks) {
        expect(hashToHex(chunkHash(input.subarray(c.offset, c.offset + c.length)))).toBe(c.hash);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(150);
  });

  it("xorb hashes: the aggregated Merkle hash, over one to 49 chunks", () => {
    const sizes = new Set<number>();
    for (const v of vectors) {
      for (const x of v.xorbs ?? []) {
        expect(hashToHex(xorbHash(chunksOf(x.chunks)))).toBe(x.hash);
        sizes.add(x.chunks.length);
      }
    }
    // One chunk (its own root), a single internal node, and trees of two and three levels.
    expect([...sizes].sort((a, b) => a - b)).toEqual(expect.arrayContaining([1, 2, 3, 4, 5, 7, 8, 19, 49]));
  });

  it("file hashes: the Merkle root keyed with the zero key; the empty file's is zero", () => {
    for (const v of vectors) {
      expect(hashToHex(fileHash(chunksOf(v.chunks))), v.name).toBe(v.fileHash);
      if (v.uploadedFileHash) expect(v.uploadedFileHash).toBe(v.fileHash);
    }
    expect(vectors.find((v) => v.length === 0)?.fileHash).toBe("0".repeat(64));
  });

  it("term verification hashes: BLAKE3 keyed with VERIFICATION_KEY over the raw chunk hashes of the term", () => {
    let checked = 0;
    for (const v of vectors) {
      for (const term of v.terms ?? []) {
        const xorb = v.xorbs?.find((x) => x.hash === term.xorb);
        const hashes = (xorb?.chunks ?? []).slice(term.start, term.end).map((c) => hashFromHex(c.hash));
        expect(hashes.length).toBe(term.end - term.start);
        expect(hashToHex(termVerificationHash(hashes))).toBe(term.verificationHash);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(40);
  });
});

describe("the Merkle tree", () => {
  it("hashes an internal node as the text the specification shows", () => {
    const children = [
      ["1f6a2b8e9d3c4075a2e8c5fd4f0b763e6f3c1d7a9b2e6487de3f91ab7c6d5401", 10000],
      ["7c94fe2a38bdcf9b4d2a6f7e1e08ac35bc24a7903d6f5a0e7d1c2b93e5f748de", 20000],
      ["cfd18a92e0743bb09e56dbf76ea2c34d99b5a0cf271f8d429b6cd148203df061", 25000],
      ["e38d7c09a21b4cf8d0f92b3a85e6df19f7c20435e0b1c78a9d635f7b8c2e4da1", 64000],
    ] as const;
    const text =
      "1f6a2b8e9d3c4075a2e8c5fd4f0b763e6f3c1d7a9b2e6487de3f91ab7c6d5401 : 10000\n" +
      "7c94fe2a38bdcf9b4d2a6f7e1e08ac35bc24a7903d6f5a0e7d1c2b93e5f748de : 20000\n" +
      "cfd18a92e0743bb09e56dbf76ea2c34d99b5a0cf271f8d429b6cd148203df061 : 25000\n" +
      "e38d7c09a21b4cf8d0f92b3a85e6df19f7c20435e0b1c78a9d635f7b8c2e4da1 : 64000\n";
    const node = internalNodeHash(children.map(([hash, length]) => ({ hash: hashFromHex(hash), length })));
    expect(node.length).toBe(119000);
    expect(hashToHex(node.hash)).toBe(
      hashToHex(keyedHash(INTERNAL_NODE_KEY, new TextEncoder().encode(text))),
    );
  });

  it("is the zero hash for no chunks and the chunk itself for one", () => {
    expect(merkleRoot([])).toEqual(ZERO_HASH);
    expect(xorbHash([])).toEqual(ZERO_HASH);
    const h = chunkHash(new Uint8Array([1, 2, 3]));
    expect(merkleRoot([{ hash: h, length: 3 }])).toEqual(h);
    expect(fileHash([{ hash: h, length: 3 }])).toEqual(keyedHash(ZERO_HASH, h));
  });

  it("depends on the chunk lengths as well as their hashes", () => {
    const a = { hash: chunkHash(new Uint8Array([1])), length: 1 };
    const b = { hash: chunkHash(new Uint8Array([2])), length: 1 };
    expect(hashToHex(merkleRoot([a, b]))).not.toBe(hashToHex(merkleRoot([a, { ...b, length: 2 }])));
  });

  it("keys chunk hashes with DATA_KEY, not plain BLAKE3", () => {
    const data = new Uint8Array([97]);
    expect(chunkHash(data)).toEqual(keyedHash(DATA_KEY, data));
    expect(chunkHash(data)).not.toEqual(keyedHash(ZERO_HASH, data));
  });
});

describe("global deduplication eligibility", () => {
  it("holds when the hash's last u64 is a multiple of 1024", () => {
    const hash = new Uint8Array(32).fill(0xab);
    hash[24] = 0;
    hash[25] = 0;
    expect(isGlobalDedupEligible(hash)).toBe(true);
    hash[25] = 4; // 1024
    expect(isGlobalDedupEligible(hash)).toBe(true);
    hash[25] = 2; // 512
    expect(isGlobalDedupEligible(hash)).toBe(false);
    hash[25] = 0;
    hash[24] = 1;
    expect(isGlobalDedupEligible(hash)).toBe(false);
  });
});

describe("the WebAssembly hashers", () => {
  const keys = { DATA_KEY, INTERNAL_NODE_KEY, VERIFICATION_KEY, ZERO_HASH };
  // Around BLAKE3's 1 KiB chunk and 64-byte block boundaries, and past hash-wasm's 16 KiB copy into its memory.
  const sizes = [0, 1, 63, 64, 65, 1023, 1024, 1025, 16 * 1024 + 1, 131_072, 1_000_003];

  for (const [name, key] of Object.entries(keys)) {
    it(`give @noble/hashes' BLAKE3 digests under ${name}`, () => {
      for (const size of sizes) {
        const data = makeInput([{ kind: "random", seed: `wasm-${name}-${size}`, length: size }]);
        expect(hashToHex(keyedHash(key, data))).toBe(hashToHex(blake3(data, { key })));
      }
    });
  }

  it("serve a copy of a fixed key like the key itself, and any other key through @noble/hashes", () => {
    const data = makeInput([{ kind: "text", seed: "wasm-keys", length: 5000 }]);
    expect(keyedHash(Uint8Array.from(DATA_KEY), data)).toEqual(chunkHash(data));
    const other = new Uint8Array(32).fill(7);
    expect(keyedHash(other, data)).toEqual(blake3(data, { key: other }));
    expect(keyedHash(other, data)).not.toEqual(chunkHash(data));
  });

  it("keep no state between hashes", () => {
    const a = makeInput([{ kind: "random", seed: "state-a", length: 70_000 }]);
    const b = makeInput([{ kind: "random", seed: "state-b", length: 3 }]);
    const first = chunkHash(b);
    chunkHash(a);
    expect(chunkHash(b)).toEqual(first);
  });
});
