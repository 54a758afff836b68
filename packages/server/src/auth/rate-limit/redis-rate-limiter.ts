import { Redis, type Result } from "ioredis";
import type { Logger } from "pino";
import type { RateLimitConfig } from "../../config.js";
import { stateOf, windowAt, type RateLimiter } from "./rate-limiter.js";

declare module "ioredis" {
  interface RedisCommander<Context> {
    hubRateLimitHit(key: string, ttlMs: number): Result<number, Context>;
  }
}

/** Counts in one round trip; the key names its window, so expiry only cleans up. */
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count`;

/**
 * Buckets in Redis, shared by every hub process that points at it. If Redis is
 * unreachable the request is let through and the failure logged: an outage of
 * the limiter must not become an outage of the hub.
 */
export function createRedisRateLimiter(
  config: RateLimitConfig,
  url: string,
  prefix: string,
  logger: Logger,
): RateLimiter {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: true, lazyConnect: false });
  redis.on("error", (err: Error) => logger.warn({ err: err.message }, "rate limiter cannot reach Redis"));
  redis.defineCommand("hubRateLimitHit", { numberOfKeys: 1, lua: HIT_SCRIPT });
  /** Runs a count against the bucket's key in the current window; on a Redis failure, counts nothing. */
  async function counted(bucket: string, count: (key: string) => Promise<number | string | null>) {
    const { index, resetSeconds } = windowAt(config, Date.now());
    try {
      const value = await count(`${prefix}ratelimit:${index}:${bucket}`);
      return stateOf(config, Number(value ?? 0), resetSeconds);
    } catch (err) {
      logger.error({ err: (err as Error).message }, "rate limit not applied: Redis failed");
      return stateOf(config, 0, resetSeconds);
    }
  }
  return {
    hit: (bucket) => counted(bucket, (key) => redis.hubRateLimitHit(key, config.windowSeconds * 1000 + 1000)),
    peek: (bucket) => counted(bucket, (key) => redis.get(key)),
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
