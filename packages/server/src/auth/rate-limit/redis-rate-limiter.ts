import { Redis, type Result } from "ioredis";
import type { Logger } from "pino";
import type { RateLimitConfig } from "../../config.js";
import { stateOf, windowAt, type RateLimiter } from "./rate-limiter.js";

declare module "ioredis" {
  interface RedisCommander<Context> {
    hubRateLimitHit(key: string, ttlMs: number): Result<number, Context>;
    hubRateLimitForgive(key: string): Result<number, Context>;
  }
}

/** Counts in one round trip; the key names its window, so expiry only cleans up. */
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
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
  return {
    hit: (bucket) => counted(bucket, (key) => redis.hubRateLimitHit(key, config.windowSeconds * 1000 + 1000)),
    async forgive(bucket) {
      await counted(bucket, (key) => redis.hubRateLimitForgive(key));
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
