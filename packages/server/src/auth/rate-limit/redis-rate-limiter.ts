import { Redis, type Result } from "ioredis";
import type { Logger } from "pino";
import type { RateLimitConfig } from "../../config.js";
import { stateOf, windowAt, type RateLimiter } from "./rate-limiter.js";

declare module "ioredis" {
  interface RedisCommander<Context> {
    hubRateLimitHit(key: string, ttlMs: number, count: number): Result<number, Context>;
    hubRateLimitForgive(key: string): Result<number, Context>;
  }
}

/**
 * Counts ARGV[2] requests in one round trip and answers the new count; the key
 * names its window, so expiry only cleans up.
 */
const HIT_SCRIPT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
if count == tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count`;

/** Takes one count back, never below zero and never creating the key. */
const FORGIVE_SCRIPT = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count > 0 then return redis.call('DECR', KEYS[1]) end
return 0`;

/**
 * Buckets in Redis, shared by every hub process that points at it. If Redis is
 * unreachable the request is let through and the failure logged: an outage of
 * the limiter must not become an outage of the hub. A limit that guards
 * guessing (`failClosed`) refuses instead, so an outage cannot lift it.
 */
export function createRedisRateLimiter(
  config: RateLimitConfig,
  url: string,
  prefix: string,
  logger: Logger,
  { failClosed = false }: { failClosed?: boolean } = {},
): RateLimiter {
  const redis = new Redis(url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    lazyConnect: false,
    // The counts of one turn of the event loop go to Redis in one write.
    enableAutoPipelining: true,
  });
  redis.on("error", (err: Error) => logger.warn({ err: err.message }, "rate limiter cannot reach Redis"));
  redis.defineCommand("hubRateLimitHit", { numberOfKeys: 1, lua: HIT_SCRIPT });
  redis.defineCommand("hubRateLimitForgive", { numberOfKeys: 1, lua: FORGIVE_SCRIPT });
  /** Runs a count against the bucket's key in the current window; on a Redis failure, counts nothing (or everything). */
  async function counted(bucket: string, count: (key: string) => Promise<number | string | null>) {
    const { index, resetSeconds } = windowAt(config, Date.now());
    try {
      const value = await count(`${prefix}ratelimit:${index}:${bucket}`);
      return stateOf(config, Number(value ?? 0), resetSeconds);
    } catch (err) {
      logger.error(
        { err: (err as Error).message },
        failClosed ? "rate limit refuses: Redis failed" : "rate limit not applied: Redis failed",
      );
      return stateOf(config, failClosed ? config.limit + 1 : 0, resetSeconds);
    }
  }
  /**
   * The hits of one tick on one key, counted together: one script adds them
   * all, and each hit gets the count it would have got on its own, in turn
   * (the last the new total, the one before it one less), as if each had been
   * counted by itself. A burst from one client costs Redis one command.
   */
  const pending = new Map<string, Array<(count: Promise<number>) => void>>();
  const ttlMs = config.windowSeconds * 1000 + 1000;
  const flush = () => {
    const batches = [...pending];
    pending.clear();
    for (const [key, waiting] of batches) {
      // A command that throws as it is sent fails its hits, as a refused one would.
      const total = new Promise<number>((resolve) =>
        resolve(redis.hubRateLimitHit(key, ttlMs, waiting.length)),
      );
      waiting.forEach((give, i) => give(total.then((count) => Number(count) - (waiting.length - 1 - i))));
    }
  };
  const hitOnce = (key: string) =>
    new Promise<number>((resolve) => {
      if (pending.size === 0) process.nextTick(flush);
      let waiting = pending.get(key);
      if (!waiting) pending.set(key, (waiting = []));
      waiting.push(resolve);
    });
  return {
    hit: (bucket) => counted(bucket, hitOnce),
    async forgive(bucket) {
      await counted(bucket, (key) => redis.hubRateLimitForgive(key));
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
