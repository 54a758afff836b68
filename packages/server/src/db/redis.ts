import { Redis } from "ioredis";
import type { Logger } from "pino";

/**
 * One connection to the Redis every hub process of a deployment shares
 * (`HUB_REDIS_URL`), for the state they keep together: the Router's live
 * figures and session affinity, and discovery's download windows. A command
 * fails fast rather than queueing while Redis is away, so callers can fall
 * back and log instead of holding requests. It connects at its first command,
 * so the admin commands, which build the same services, never do.
 */
export function openRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: true, lazyConnect: true });
  redis.on("error", (err: Error) => logger.warn({ err: err.message }, "shared state cannot reach Redis"));
  return redis;
}

/** Closes a connection opened by `openRedis`, cutting it off when Redis does not answer. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === "wait") redis.disconnect();
  else await redis.quit().catch(() => redis.disconnect());
}
