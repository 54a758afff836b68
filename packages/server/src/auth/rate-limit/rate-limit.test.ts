import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHub, type TestHub } from "../../test-support/hub-process.js";
import pino from "pino";
import { createMemoryRateLimiter } from "./memory-rate-limiter.js";
import { rateLimitHeaders, type RateLimiter } from "./rate-limiter.js";
import { createRedisRateLimiter } from "./redis-rate-limiter.js";

const remainingOf = (response: Response) =>
  Number(/r=(\d+)/.exec(response.headers.get("ratelimit") ?? "")?.[1]);

describe("one quota shared by two hub processes through Redis", () => {
  let first: TestHub;
  let second: TestHub;
  let token: string;

  beforeAll(async () => {
    const env = {
      HUB_REDIS_URL: "redis://127.0.0.1:6379",
      HUB_REDIS_PREFIX: `hub-test-${randomBytes(4).toString("hex")}:`,
      HUB_RATE_LIMIT: "10",
      HUB_RATE_LIMIT_WINDOW: "3600",
    };
    first = await startHub({ dialect: "postgres", env });
    second = await startHub({ sharing: first });
    await first.createUser("alice");
    token = await first.createToken("alice");
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  it("counts requests to either process against the same bucket", async () => {
    const seen: number[] = [];
    for (let i = 0; i < 10; i++) {
      const response = await (i % 2 === 0 ? first : second).request("/api/whoami", { token });
      expect(response.status).toBe(200);
      seen.push(remainingOf(response));
    }
    expect(seen).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    for (const hub of [first, second]) {
      const response = await hub.request("/api/whoami", { token });
      expect(response.status).toBe(429);
      expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
  });
});

describe("file downloads in a bucket of their own", () => {
  let hub: TestHub;
  let token: string;

  beforeAll(async () => {
    hub = await startHub({
      env: { HUB_RATE_LIMIT: "5", HUB_DOWNLOAD_RATE_LIMIT: "4", HUB_DOWNLOAD_RATE_LIMIT_WINDOW: "3600" },
    });
    await hub.createUser("alice");
    token = await hub.createToken("alice");
  });
  afterAll(() => hub?.stop());

  it("counts resolve and raw apart from the API, each with its own quota", async () => {
    const created = await hub.request("/api/repos", {
      method: "POST",
      token,
      json: { repo_id: "alice/files" },
    });
    expect(created.status).toBe(201);
    expect(remainingOf(created)).toBe(4);
    const seen: number[] = [];
    for (const mode of ["resolve", "raw", "resolve", "raw"]) {
      const response = await hub.request(`/alice/files/${mode}/main/.gitattributes`, { token });
      expect(response.status).toBe(200);
      seen.push(remainingOf(response));
    }
    expect(seen).toEqual([3, 2, 1, 0]);
    const refused = await hub.request("/alice/files/resolve/main/.gitattributes", { token, method: "HEAD" });
    expect(refused.status).toBe(429);
    // The API's quota is untouched by the downloads.
    const api = await hub.request("/api/whoami", { token });
    expect(api.status).toBe(200);
    expect(remainingOf(api)).toBe(3);
  });
});

describe("the in-memory limiter", () => {
  it("starts a new window on the clock's window boundary", async () => {
    let now = 1_000_000_000_000;
    const config = { limit: 2, windowSeconds: 60 };
    const limiter = createMemoryRateLimiter(config, () => now);
    expect((await limiter.hit("a")).allowed).toBe(true);
    expect((await limiter.hit("a")).allowed).toBe(true);
    const third = await limiter.hit("a");
    expect(third.allowed).toBe(false);
    expect(rateLimitHeaders(config, third)["retry-after"]).toBe(String(third.resetSeconds));
    expect((await limiter.hit("b")).allowed).toBe(true);
    now += third.resetSeconds * 1000;
    const fresh = await limiter.hit("a");
    expect(fresh).toMatchObject({ allowed: true, remaining: 1 });
  });
});

describe.each([
  ["in memory", () => createMemoryRateLimiter({ limit: 3, windowSeconds: 3600 })],
  [
    "in Redis",
    () =>
      createRedisRateLimiter(
        { limit: 3, windowSeconds: 3600 },
        "redis://127.0.0.1:6379",
        `hub-test-${randomBytes(4).toString("hex")}:`,
        pino({ level: "silent" }),
      ),
  ],
] as Array<[string, () => RateLimiter]>)("a limiter %s", (_where, create) => {
  it("takes back one count of the window, never below zero (limits that count only failures)", async () => {
    const limiter = create();
    try {
      await limiter.forgive("a");
      expect(await limiter.hit("a")).toMatchObject({ remaining: 2, allowed: true });
      expect(await limiter.hit("a")).toMatchObject({ remaining: 1, allowed: true });
      await limiter.forgive("a");
      expect(await limiter.hit("a")).toMatchObject({ remaining: 1, allowed: true });
      expect(await limiter.hit("b")).toMatchObject({ remaining: 2 });
      expect(await limiter.hit("a")).toMatchObject({ remaining: 0, allowed: true });
      expect(await limiter.hit("a")).toMatchObject({ allowed: false });
    } finally {
      await limiter.close();
    }
  });

  it("counts a burst of hits at once as one by one: each its own count, exactly the limit let through", async () => {
    const limiter = create();
    try {
      // Five hits in one tick on one bucket (Redis adds them with one command), and one on another.
      const burst = await Promise.all([..."aaaaa", "b"].map((bucket) => limiter.hit(bucket)));
      expect(burst.slice(0, 5).map((state) => state.remaining)).toEqual([2, 1, 0, 0, 0]);
      expect(burst.slice(0, 5).map((state) => state.allowed)).toEqual([true, true, true, false, false]);
      expect(burst[5]).toMatchObject({ remaining: 2, allowed: true });
      // The window holds all five: the next hit is the sixth.
      await limiter.forgive("a");
      await limiter.forgive("a");
      expect(await limiter.hit("a")).toMatchObject({ allowed: false });
      await limiter.forgive("a");
      await limiter.forgive("a");
      expect(await limiter.hit("a")).toMatchObject({ remaining: 0, allowed: true });
    } finally {
      await limiter.close();
    }
  });
});

describe("a Redis limiter that cannot reach Redis", () => {
  const unreachable = (failClosed: boolean) =>
    createRedisRateLimiter(
      { limit: 3, windowSeconds: 3600 },
      "redis://127.0.0.1:1",
      "hub-test-unreachable:",
      pino({ level: "silent" }),
      { failClosed },
    );

  it("lets requests through, unless it guards guessing (failClosed): then it refuses", async () => {
    const open = unreachable(false);
    const closed = unreachable(true);
    try {
      expect((await open.hit("a")).allowed).toBe(true);
      expect((await closed.hit("a")).allowed).toBe(false);
    } finally {
      await open.close();
      await closed.close();
    }
  });
});
