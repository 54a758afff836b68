import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { closeRedis, openRedis } from "../db/redis.js";
import { createLiveStats, type LiveStats } from "./live-stats.js";
import { createRedisLiveStats } from "./redis-live-stats.js";
import { createRedisSessionAffinity } from "./redis-session-affinity.js";
import { createSessionAffinity, SESSION_TTL_MS, type SessionAffinity } from "./session-affinity.js";

const logger = pino({ level: "silent" });
const cooldown = { failuresBeforeCooldown: 3, cooldownMs: 400 };
const connections: Redis[] = [];
const connect = () => {
  const redis = openRedis("redis://127.0.0.1:6379", logger);
  connections.push(redis);
  return redis;
};
afterAll(async () => {
  await Promise.all(connections.map(closeRedis));
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mappings = [
  { provider: "alpha", model: "acme/chat-1" },
  { provider: "beta", model: "acme/chat-1" },
];

/** Two handles on one store: two hub processes on one Redis, or the same memory twice. */
const IMPLEMENTATIONS: Array<
  [string, () => { stats: [LiveStats, LiveStats]; affinity: [SessionAffinity, SessionAffinity] }]
> = [
  [
    "memory",
    () => {
      const stats = createLiveStats({ clock: Date.now, ...cooldown });
      const affinity = createSessionAffinity(Date.now);
      return { stats: [stats, stats], affinity: [affinity, affinity] };
    },
  ],
  [
    "redis",
    () => {
      const prefix = `hub-test-${randomBytes(4).toString("hex")}:`;
      const [one, two] = [connect(), connect()];
      return {
        stats: [
          createRedisLiveStats({ redis: one, prefix, logger, ...cooldown }),
          createRedisLiveStats({ redis: two, prefix, logger, ...cooldown }),
        ],
        affinity: [
          createRedisSessionAffinity({ redis: one, prefix, logger }),
          createRedisSessionAffinity({ redis: two, prefix, logger }),
        ],
      };
    },
  ],
];

describe.each(IMPLEMENTATIONS)("the Router's shared state, %s", (_name, make) => {
  it("cools a provider down after consecutive failures seen by either handle, for the cooldown only", async () => {
    const {
      stats: [one, two],
    } = make();
    await one.recordFailure("alpha");
    await two.recordFailure("alpha");
    expect((await one.view(mappings)).isCooling("alpha")).toBe(false);
    await one.recordFailure("alpha");
    const cooling = await two.view(mappings);
    expect(cooling.isCooling("alpha")).toBe(true);
    expect(cooling.isCooling("beta")).toBe(false);
    await sleep(cooldown.cooldownMs + 50);
    expect((await two.view(mappings)).isCooling("alpha")).toBe(false);
  });

  it("ends a failure run and a cooldown with a success, and averages the speeds all handles measured", async () => {
    const {
      stats: [one, two],
    } = make();
    for (let i = 0; i < 3; i++) await one.recordFailure("beta");
    expect((await two.view(mappings)).isCooling("beta")).toBe(true);
    await two.recordSuccess("beta", "acme/chat-1", { ttftMs: 100, outputTokens: 50, generationMs: 1000 });
    expect((await one.view(mappings)).isCooling("beta")).toBe(false);
    await one.recordSuccess("beta", "acme/chat-1", { ttftMs: 200, outputTokens: null, generationMs: 10 });
    const view = await two.view(mappings);
    // 100 then 200 at weight 0.2; the second response named no output, so the speed stays 50 tokens/s.
    expect(view.stats("beta", "acme/chat-1")).toEqual({ ttftMs: 120, tokensPerSecond: 50, samples: 2 });
    expect(view.stats("alpha", "acme/chat-1")).toEqual({ ttftMs: null, tokensPerSecond: null, samples: 0 });
    // Two failures after a success are not yet three in a row.
    await one.recordFailure("beta");
    await two.recordFailure("beta");
    expect((await one.view(mappings)).isCooling("beta")).toBe(false);
  });

  it("keeps a conversation's provider for the other handle, and forgets nothing it was not told", async () => {
    const {
      affinity: [one, two],
    } = make();
    expect(await two.providerOf("owner\u0000acme/chat-1\u0000s-1")).toBeNull();
    await one.remember("owner\u0000acme/chat-1\u0000s-1", "beta");
    expect(await two.providerOf("owner\u0000acme/chat-1\u0000s-1")).toBe("beta");
    expect(await two.providerOf("owner\u0000acme/chat-1\u0000s-2")).toBeNull();
    await two.remember("owner\u0000acme/chat-1\u0000s-1", "alpha");
    expect(await one.providerOf("owner\u0000acme/chat-1\u0000s-1")).toBe("alpha");
  });
});

describe("the Router's shared state in Redis", () => {
  it("lets an affinity lapse an hour after its last turn", async () => {
    const redis = connect();
    const prefix = `hub-test-${randomBytes(4).toString("hex")}:`;
    const affinity = createRedisSessionAffinity({ redis, prefix, logger });
    await affinity.remember("a session", "alpha");
    const [key] = await redis.keys(`${prefix}router:session:*`);
    expect(key).toBeDefined();
    const ttl = await redis.pttl(key ?? "");
    expect(ttl).toBeGreaterThan(SESSION_TTL_MS - 5_000);
    expect(ttl).toBeLessThanOrEqual(SESSION_TTL_MS);
  });

  it("routes as if nothing were measured or cooling while Redis is unreachable, and records nothing", async () => {
    const redis = openRedis("redis://127.0.0.1:1", logger);
    connections.push(redis);
    const prefix = "unreachable:";
    const stats = createRedisLiveStats({ redis, prefix, logger, ...cooldown });
    const affinity = createRedisSessionAffinity({ redis, prefix, logger });
    for (let i = 0; i < 3; i++) await stats.recordFailure("alpha");
    const view = await stats.view(mappings);
    expect(view.isCooling("alpha")).toBe(false);
    expect(view.stats("alpha", "acme/chat-1").samples).toBe(0);
    await affinity.remember("s", "alpha");
    expect(await affinity.providerOf("s")).toBeNull();
  });
});
