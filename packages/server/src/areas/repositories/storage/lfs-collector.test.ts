import { Writable } from "node:stream";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { createLfsCollector } from "./lfs-collector.js";
import type { StorageService } from "./storage.service.js";

/** A logger whose lines the test reads. */
function capturingLogger() {
  const lines: Array<{ msg: string; err?: string }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as { msg: string; err?: string });
      done();
    },
  });
  return { logger: pino(sink), lines };
}

const until = async (done: () => boolean) => {
  for (let i = 0; i < 100 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
};

describe("the LFS collector's passes", () => {
  it("runs every follower after the LFS pass, each on its own: a failure is logged and the next still runs", async () => {
    const { logger, lines } = capturingLogger();
    const ran: string[] = [];
    const collector = createLfsCollector({
      storage: {
        collect: () => Promise.reject(new Error("the database went away")),
      } as unknown as StorageService,
      then: [
        { name: "Xet", collect: () => Promise.reject(new Error("a xorb listing failed")) },
        {
          name: "Upload leftovers",
          collect: () => {
            ran.push("leftovers");
            return Promise.resolve({ freedBytes: 10, writes: 1 });
          },
        },
      ],
      intervalSeconds: 1,
      logger,
    });
    collector.start();
    await until(() => ran.length > 0 && lines.length >= 3);
    await collector.stop();
    expect(ran).toEqual(["leftovers"]);
    expect(lines.map((line) => [line.msg, line.err])).toEqual([
      ["LFS collector pass failed", "the database went away"],
      ["Xet collector pass failed", "a xorb listing failed"],
      ["Upload leftovers collector freed unused data", undefined],
    ]);
  });

  it("aborts a running follower when it stops, and waits for it", async () => {
    const { logger, lines } = capturingLogger();
    let started = false;
    let sawAbort = false;
    const collector = createLfsCollector({
      storage: {
        collect: () => Promise.resolve({ unlinked: 0, freedBytes: 0 }),
      } as unknown as StorageService,
      then: [
        {
          name: "Upload leftovers",
          collect: (signal) =>
            new Promise((resolve) => {
              started = true;
              signal.addEventListener("abort", () => {
                sawAbort = true;
                resolve({ freedBytes: 0 });
              });
            }),
        },
      ],
      intervalSeconds: 1,
      logger,
    });
    collector.start();
    await until(() => started);
    await collector.stop();
    expect(sawAbort).toBe(true);
    expect(lines).toEqual([]);
  });
});
