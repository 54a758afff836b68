import { describe, expect, it } from "vitest";
import { lz4CompressFrame, lz4DecompressFrame, xxh32 } from "./lz4.js";
import { fixture, loadLz4Frames, makeInput, prng } from "./testdata/test-inputs.js";
import { XetFormatError } from "./xet-format-error.js";

const encoder = new TextEncoder();

/** Set the frame descriptor's flag byte and recompute its checksum. */
function withFlags(frame: Uint8Array, flg: number): Uint8Array {
  const copy = frame.slice();
  copy[4] = flg;
  const descriptorEnd = 6 + (flg & 0x08 ? 8 : 0);
  copy[descriptorEnd] = (xxh32(copy.subarray(4, descriptorEnd)) >>> 8) & 0xff;
  return copy;
}

function expectLz4Error(run: () => unknown, message: RegExp): void {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(XetFormatError);
    expect((error as XetFormatError).kind).toBe("lz4");
    expect((error as Error).message).toMatch(message);
    return;
  }
  throw new Error(`expected an LZ4 error matching ${message}`);
}

describe("xxh32", () => {
  it("gives the published values", () => {
    expect(xxh32(new Uint8Array(0))).toBe(0x02cc5d05);
    expect(xxh32(encoder.encode("abc"))).toBe(0x32d153ff);
    expect(xxh32(encoder.encode("Nobody inspects the spammish repetition"))).toBe(0xe2293b2f);
  });
});

describe("frames of the reference C implementation (lz4 1.9.4)", () => {
  for (const frame of loadLz4Frames()) {
    it(`decodes ${frame.name} (${frame.lz4Flags.join(" ")})`, () => {
      const input = makeInput(frame.segments);
      const decoded = lz4DecompressFrame(fixture(frame.fixture), input.length);
      expect(Buffer.from(decoded).equals(Buffer.from(input))).toBe(true);
    });
  }

  it("checks block and content checksums and the content size", () => {
    const linked = fixture("lz4-linked-checksums.lz4");
    const length = makeInput(loadLz4Frames()[0]?.segments ?? []).length;
    expect(linked[4]).toBe(0x5c); // version 1, linked blocks, block checksums, content size, content checksum
    const lastByte = linked.slice();
    lastByte[lastByte.length - 1] = (lastByte.at(-1) ?? 0) ^ 1;
    expectLz4Error(() => lz4DecompressFrame(lastByte, length), /content checksum does not match/);
    const inBlock = linked.slice();
    inBlock[40] = (inBlock[40] ?? 0) ^ 0x20;
    expectLz4Error(() => lz4DecompressFrame(inBlock, length), /block checksum does not match/);
    const size = linked.slice();
    size[6] = (size[6] ?? 0) ^ 1;
    expectLz4Error(() => lz4DecompressFrame(size, length), /descriptor checksum/);
    expectLz4Error(() => lz4DecompressFrame(linked, length - 1), /more bytes than announced/);
    expectLz4Error(
      () => lz4DecompressFrame(linked, length + 1),
      /decodes to \d+ bytes, not the \d+ announced/,
    );
  });

  it("refuses a match reaching into the previous block when the frame says blocks are independent", () => {
    const linked = fixture("lz4-linked-checksums.lz4");
    const length = makeInput(loadLz4Frames()[0]?.segments ?? []).length;
    expectLz4Error(
      () => lz4DecompressFrame(withFlags(linked, 0x5c | 0x20), length),
      /reaches before the start/,
    );
  });
});

describe("the compressor", () => {
  const inputs: [string, Uint8Array][] = [
    ["empty", new Uint8Array(0)],
    ...[1, 4, 5, 11, 12, 13, 16, 17, 100].map((n): [string, Uint8Array] => [
      `${n} zero bytes`,
      new Uint8Array(n),
    ]),
    ["random 70 KiB", prng("lz4-random", 70 * 1024)],
    ["text 128 KiB", makeInput([{ kind: "text", seed: "lz4-text", length: 128 * 1024 }])],
    ["64 KiB exactly", makeInput([{ kind: "text", seed: "lz4-64", length: 64 * 1024 }])],
    ["64 KiB + 1", makeInput([{ kind: "text", seed: "lz4-64", length: 64 * 1024 + 1 }])],
    [
      "runs",
      makeInput([
        { kind: "fill", byte: 1, length: 70000 },
        { kind: "ramp", start: 0, step: 1, length: 60000 },
      ]),
    ],
    [
      "300 KiB (two blocks of 256 KiB max)",
      makeInput([{ kind: "text", seed: "lz4-big", length: 300 * 1024 }]),
    ],
  ];
  for (const [name, data] of inputs) {
    it(`round-trips ${name}`, () => {
      const frame = lz4CompressFrame(data);
      expect(Buffer.from(lz4DecompressFrame(frame, data.length)).equals(Buffer.from(data))).toBe(true);
    });
  }

  it("shrinks compressible data and stores incompressible blocks raw", () => {
    const text = makeInput([{ kind: "text", seed: "shrink", length: 100_000 }]);
    expect(lz4CompressFrame(text).length).toBeLessThan(text.length / 2);
    const random = prng("raw", 100_000);
    const frame = lz4CompressFrame(random);
    expect(frame.length).toBeLessThanOrEqual(random.length + 7 + 4 + 4);
    expect((frame[10] ?? 0) & 0x80).toBe(0x80); // the block size word's "uncompressed" bit
  });

  it("writes the frame header the reference client writes (independent blocks, 64 KiB or 256 KiB)", () => {
    expect([...lz4CompressFrame(new Uint8Array(100)).subarray(0, 7)]).toEqual([
      0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82,
    ]);
    expect([...lz4CompressFrame(new Uint8Array(100_000)).subarray(0, 6)]).toEqual([
      0x04, 0x22, 0x4d, 0x18, 0x60, 0x50,
    ]);
  });
});

describe("malformed frames", () => {
  const data = makeInput([{ kind: "text", seed: "malformed", length: 5000 }]);
  const frame = lz4CompressFrame(data);

  it("names what is wrong", () => {
    expectLz4Error(() => lz4DecompressFrame(new Uint8Array(0), 1), /empty/);
    expectLz4Error(
      () => lz4DecompressFrame(Uint8Array.from([1, 2, 3, 4, 5, 6, 7]), 1),
      /magic number 0x04030201/,
    );
    expectLz4Error(
      () => lz4DecompressFrame(Uint8Array.from([0x02, 0x21, 0x4c, 0x18, 0, 0, 0, 0]), 1),
      /legacy/,
    );
    expectLz4Error(
      () => lz4DecompressFrame(Uint8Array.from([0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0]), 1),
      /skippable/,
    );
    expectLz4Error(() => lz4DecompressFrame(withFlags(frame, 0x60 | 0x02), data.length), /reserved bits/);
    expectLz4Error(() => lz4DecompressFrame(withFlags(frame, 0x60 | 0x01), data.length), /dictionary/);
    expectLz4Error(() => lz4DecompressFrame(withFlags(frame, 0x80 | 0x20), data.length), /version 2/);
    const badChecksum = frame.slice();
    badChecksum[6] = (badChecksum[6] ?? 0) ^ 0xff;
    expectLz4Error(() => lz4DecompressFrame(badChecksum, data.length), /descriptor checksum/);
    const blockCode = frame.slice();
    blockCode[5] = 0x30;
    blockCode[6] = (xxh32(blockCode.subarray(4, 6)) >>> 8) & 0xff;
    expectLz4Error(() => lz4DecompressFrame(blockCode, data.length), /block size code 3/);
  });

  it("refuses every truncation", () => {
    for (let cut = 0; cut < frame.length; cut++) {
      expect(() => lz4DecompressFrame(frame.subarray(0, cut), data.length)).toThrow(XetFormatError);
    }
  });

  it("refuses blocks larger than the frame allows, offsets 0 and offsets before the data", () => {
    const head = [0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82];
    const block = (bytes: number[]) =>
      Uint8Array.from([...head, bytes.length, 0, 0, 0, ...bytes, 0, 0, 0, 0]);
    // 1 literal "a", then a match at offset 0 / offset 2 (only 1 byte precedes it).
    expectLz4Error(() => lz4DecompressFrame(block([0x10, 97, 0, 0]), 5), /offset 0/);
    expectLz4Error(() => lz4DecompressFrame(block([0x10, 97, 2, 0]), 5), /offset 2 reaches before/);
    expectLz4Error(() => lz4DecompressFrame(block([0x50, 97]), 5), /runs past the end of its block/);
    expectLz4Error(() => lz4DecompressFrame(block([0xf0]), 20), /ends inside a literal length/);
    // Offset 1 repeating "a" 4 + 15 + 255 + 10 times: longer than the 20 bytes announced.
    expectLz4Error(
      () => lz4DecompressFrame(block([0x1f, 97, 1, 0, 255, 10]), 20),
      /more bytes than announced/,
    );
    expect([...lz4DecompressFrame(block([0x10, 97, 1, 0]), 5)]).toEqual([97, 97, 97, 97, 97]);
    const tooBig = Uint8Array.from([...head, 0x01, 0x00, 0x01, 0x80]);
    expectLz4Error(() => lz4DecompressFrame(tooBig, 70000), /exceeds the frame's maximum/);
  });

  it("never fails with anything but a format error on corrupted frames", () => {
    const noise = prng("flip", frame.length);
    for (let i = 0; i < frame.length; i++) {
      const corrupted = frame.slice();
      corrupted[i] = (corrupted[i] ?? 0) ^ ((noise[i] ?? 0) | 1);
      try {
        lz4DecompressFrame(corrupted, data.length);
      } catch (error) {
        expect(error).toBeInstanceOf(XetFormatError);
      }
    }
  });
});
