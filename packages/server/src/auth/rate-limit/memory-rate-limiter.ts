import type { RateLimitConfig } from "../../config.js";
import { stateOf, windowAt, type RateLimiter } from "./rate-limiter.js";

/** Buckets in this process's memory: the default when no Redis is configured. */
export function createMemoryRateLimiter(config: RateLimitConfig, now: () => number = Date.now): RateLimiter {
  let currentWindow = -1;
  let counts = new Map<string, number>();
  return {
    async hit(bucket) {
      const { index, resetSeconds } = windowAt(config, now());
      if (index !== currentWindow) {
        currentWindow = index;
        counts = new Map();
      }
      const count = (counts.get(bucket) ?? 0) + 1;
      counts.set(bucket, count);
      return stateOf(config, count, resetSeconds);
    },
    async forgive(bucket) {
      const count = windowAt(config, now()).index === currentWindow ? (counts.get(bucket) ?? 0) : 0;
      if (count > 0) counts.set(bucket, count - 1);
    },
    async close() {},
  };
}
