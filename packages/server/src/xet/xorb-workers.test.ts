import { describe, expect, it } from "vitest";
import { hashToHex, loadXetHashing } from "./hashing.js";
import { keystream } from "./testdata/test-inputs.js";
import { XetFormatError } from "./xet-format-error.js";
import { verifyXorb } from "./xorb-workers.js";
import { parseXorb, serializeXorb, XORB_MAX_BYTES } from "./xorb.js";

await loadXetHashing();

/** A full xorb (64 MiB of data in 64 KiB chunks) of `seed`'s bytes, as hf_xet sends one. */
function fullXorb(seed: string) {
  const data = keystream(seed, XORB_MAX_BYTES);
  return serializeXorb(
    Array.from({ length: XORB_MAX_BYTES / 65536 }, (_, i) => data.subarray(i * 65536, (i + 1) * 65536)),
    { compression: "none" },
  );
}

/** What `run` throws. */
async function failure(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}

describe("xorb verification on worker threads", () => {
  it("answers what parseXorb answers, and gives the bytes back", async () => {
    const xorb = fullXorb("valid");
    const inline = parseXorb(xorb.bytes, { expectedHash: xorb.hash });
    const { parsed, bytes } = await verifyXorb(Buffer.from(xorb.bytes.slice()), hashToHex(xorb.hash));
    expect(parsed).toEqual(inline);
    expect(Buffer.compare(bytes, xorb.bytes)).toBe(0);
  });

  it("refuses a corrupted or misnamed xorb with parseXorb's own format error", async () => {
    const xorb = fullXorb("corrupted");
    const corrupted = xorb.bytes.slice();
    const at = xorb.chunks[700]?.offset ?? 0;
    corrupted[at + 100] = (corrupted[at + 100] ?? 0) ^ 0xff;
    const hex = hashToHex(xorb.hash);
    const inline = await failure(() => parseXorb(corrupted, { expectedHash: hex }));
    const offloaded = await failure(() => verifyXorb(Buffer.from(corrupted), hex));
    expect(offloaded).toBeInstanceOf(XetFormatError);
    expect(inline).toBeInstanceOf(XetFormatError);
    expect((offloaded as XetFormatError).message).toBe((inline as XetFormatError).message);
    expect((offloaded as XetFormatError).kind).toBe((inline as XetFormatError).kind);

    const header = xorb.bytes.slice();
    header[at] = 9; // chunk 700's header version
    const inlineHeader = (await failure(() => parseXorb(header))) as XetFormatError;
    const offloadedHeader = (await failure(() => verifyXorb(Buffer.from(header), hex))) as XetFormatError;
    expect(offloadedHeader.message).toBe(inlineHeader.message);
    expect(offloadedHeader.chunkIndex).toBe(700);
    expect(offloadedHeader.offset).toBe(inlineHeader.offset);
  });

  it("keeps the event loop answering while large xorbs are verified", async () => {
    const xorbs = ["a", "b", "c"].map((seed) => fullXorb(`loop ${seed}`));
    // What one verification blocks the loop for when it runs here.
    const start = performance.now();
    parseXorb(xorbs[0]?.bytes ?? new Uint8Array(0));
    const inlineMs = performance.now() - start;

    const bodies = xorbs.map((xorb) => Buffer.from(xorb.bytes));
    let last = performance.now();
    let longest = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }, 2);
    try {
      const answers = await Promise.all(
        xorbs.map((xorb, i) => verifyXorb(bodies[i] ?? Buffer.alloc(0), hashToHex(xorb.hash))),
      );
      expect(answers.map((a) => a.parsed.chunks.length)).toEqual([1024, 1024, 1024]);
    } finally {
      // The time since the last tick counts too: a loop blocked to the end never ticks at all.
      longest = Math.max(longest, performance.now() - last);
      clearInterval(ticker);
    }
    expect(longest).toBeLessThan(inlineMs / 2);
  });
});
