import { randomBytes } from "node:crypto";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { closeRedis, openRedis } from "../../../db/redis.js";
import {
  createMemoryDownloadWindow,
  createRedisDownloadWindow,
  type DownloadWindow,
} from "./download-counter.js";

const logger = pino({ level: "silent" });
const redis = openRedis("redis://127.0.0.1:6379", logger);
const other = openRedis("redis://127.0.0.1:6379", logger);
afterAll(async () => {
  await closeRedis(redis);
  await closeRedis(other);
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Two handles on one store of windows: two hub processes on one Redis, or the same memory twice. */
const WINDOWS: Array<[string, () => [DownloadWindow, DownloadWindow]]> = [
  [
    "memory",
    () => {
      const window = createMemoryDownloadWindow();
      return [window, window];
    },
  ],
  [
    "redis",
    () => {
      const prefix = `hub-test-${randomBytes(4).toString("hex")}:`;
      return [
        createRedisDownloadWindow(redis, prefix, logger),
        createRedisDownloadWindow(other, prefix, logger),
      ];
    },
  ],
];

describe.each(WINDOWS)("download windows, %s", (_name, make) => {
  it("opens once per caller and repository per window, whichever handle asks", async () => {
    const [one, two] = make();
    const windowMs = 300;
    expect(await one.open("repo-1 alice", Date.now(), windowMs)).toBe(true);
    expect(await two.open("repo-1 alice", Date.now(), windowMs)).toBe(false);
    expect(await one.open("repo-1 alice", Date.now(), windowMs)).toBe(false);
    expect(await two.open("repo-1 bob", Date.now(), windowMs)).toBe(true);
    expect(await two.open("repo-2 alice", Date.now(), windowMs)).toBe(true);
    await sleep(windowMs + 50);
    expect(await two.open("repo-1 alice", Date.now(), windowMs)).toBe(true);
    expect(await one.open("repo-1 alice", Date.now(), windowMs)).toBe(false);
  });

  it("lets only one of many concurrent first fetches open the window", async () => {
    const [one, two] = make();
    const opened = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? one : two).open("repo-3 carol", Date.now(), 10_000)),
    );
    expect(opened.filter(Boolean)).toHaveLength(1);
  });
});

describe("download windows in Redis", () => {
  it("count a fetch while Redis is unreachable, rather than lose a download", async () => {
    const unreachable = openRedis("redis://127.0.0.1:1", logger);
    try {
      const window = createRedisDownloadWindow(unreachable, "unreachable:", logger);
      expect(await window.open("repo-1 alice", Date.now(), 10_000)).toBe(true);
      expect(await window.open("repo-1 alice", Date.now(), 10_000)).toBe(true);
    } finally {
      await closeRedis(unreachable);
    }
  });
});
