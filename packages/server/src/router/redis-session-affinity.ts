import { hash } from "node:crypto";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { SESSION_TTL_MS, type SessionAffinity } from "./session-affinity.js";

/**
 * Affinity in Redis, shared by every hub process pointing at it: one key per
 * conversation (its digest, so a long session id makes a short key), living an
 * hour past the last answered turn. If Redis is unreachable the request is
 * routed without affinity and the failure logged.
 */
export function createRedisSessionAffinity({
  redis,
  prefix,
  logger,
}: {
  redis: Redis;
  prefix: string;
  logger: Logger;
}): SessionAffinity {
  const keyOf = (key: string) => `${prefix}router:session:${hash("sha256", key, "base64url")}`;
  const unreachable = (err: unknown, what: string) =>
    logger.error({ err: (err as Error).message }, `session affinity not ${what}: Redis failed`);
  return {
    async providerOf(key) {
      try {
        return await redis.get(keyOf(key));
      } catch (err) {
        unreachable(err, "read");
        return null;
      }
    },
    async remember(key, provider) {
      try {
        await redis.set(keyOf(key), provider, "PX", SESSION_TTL_MS);
      } catch (err) {
        unreachable(err, "kept");
      }
    },
  };
}
