import type { Redis, Result } from "ioredis";
import type { Logger } from "pino";
import {
  EWMA_WEIGHT,
  UNMEASURED,
  speedOf,
  type LiveMapping,
  type LiveStats,
  type LiveView,
  type MappingStats,
} from "./live-stats.js";

declare module "ioredis" {
  interface RedisCommander<Context> {
    hubRouterFailure(
      failures: string,
      cooling: string,
      threshold: number,
      cooldownMs: number,
    ): Result<number, Context>;
    hubRouterSuccess(
      failures: string,
      cooling: string,
      speed: string,
      weight: number,
      ttftMs: number,
      tokensPerSecond: string,
      ttlSeconds: number,
    ): Result<number, Context>;
  }
}

/** Counts a failure; the one that reaches the threshold starts the cooldown and clears the count. */
const FAILURE_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count >= tonumber(ARGV[1]) then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
  redis.call('DEL', KEYS[1])
end
return count`;

/** Ends the failure run and any cooldown, and moves the mapping's averages by the sample. */
const SUCCESS_SCRIPT = `
redis.call('DEL', KEYS[1], KEYS[2])
local weight = tonumber(ARGV[1])
local ttft = tonumber(redis.call('HGET', KEYS[3], 'ttft'))
local sample = tonumber(ARGV[2])
if ttft then ttft = ttft + weight * (sample - ttft) else ttft = sample end
redis.call('HSET', KEYS[3], 'ttft', tostring(ttft))
if ARGV[3] ~= '' then
  local speed = tonumber(ARGV[3])
  local tps = tonumber(redis.call('HGET', KEYS[3], 'tps'))
  if tps then tps = tps + weight * (speed - tps) else tps = speed end
  redis.call('HSET', KEYS[3], 'tps', tostring(tps))
end
redis.call('HINCRBY', KEYS[3], 'n', 1)
redis.call('EXPIRE', KEYS[3], ARGV[4])
return 1`;

/** A mapping unmeasured for a week is forgotten (a provider removed from the catalog leaves nothing behind). */
const SPEED_TTL_SECONDS = 7 * 24 * 3600;

const numberOrNull = (value: string | null | undefined) =>
  value === null || value === undefined || value === "" ? null : Number(value);

/**
 * Live figures in Redis, shared by every hub process pointing at it: a
 * provider that fails through one process cools down on all of them, and
 * `:fastest` ranks by what all of them measured. Each update is one atomic
 * script; a request reads its candidates' figures in one round trip. If Redis
 * is unreachable the request is routed as if nothing were measured or cooling,
 * and the failure logged: an outage of shared figures must not stop routing.
 */
export function createRedisLiveStats({
  redis,
  prefix,
  logger,
  failuresBeforeCooldown,
  cooldownMs,
}: {
  redis: Redis;
  prefix: string;
  logger: Logger;
  failuresBeforeCooldown: number;
  cooldownMs: number;
}): LiveStats {
  redis.defineCommand("hubRouterFailure", { numberOfKeys: 2, lua: FAILURE_SCRIPT });
  redis.defineCommand("hubRouterSuccess", { numberOfKeys: 3, lua: SUCCESS_SCRIPT });
  const failuresKey = (provider: string) => `${prefix}router:failures:${provider}`;
  const coolingKey = (provider: string) => `${prefix}router:cooling:${provider}`;
  const speedKey = (provider: string, model: string) => `${prefix}router:speed:${provider}\u0000${model}`;
  const mappingKey = (provider: string, model: string) => `${provider}\u0000${model}`;
  const unreachable = (err: unknown, what: string) =>
    logger.error({ err: (err as Error).message }, `Router live figures not ${what}: Redis failed`);
  const blank: LiveView = { isCooling: () => false, stats: () => UNMEASURED };

  return {
    async view(mappings: readonly LiveMapping[]) {
      const providers = [...new Set(mappings.map((m) => m.provider))];
      const pipeline = redis.pipeline();
      for (const provider of providers) pipeline.exists(coolingKey(provider));
      for (const { provider, model } of mappings)
        pipeline.hmget(speedKey(provider, model), "ttft", "tps", "n");
      let replies: Array<[Error | null, unknown]> | null;
      try {
        replies = await pipeline.exec();
      } catch (err) {
        unreachable(err, "read");
        return blank;
      }
      const failed = replies?.find(([err]) => err !== null);
      if (!replies || failed) {
        unreachable(failed?.[0] ?? new Error("no reply"), "read");
        return blank;
      }
      const cooling = new Set(providers.filter((_, i) => replies[i]?.[1] === 1));
      const stats = new Map<string, MappingStats>();
      mappings.forEach(({ provider, model }, i) => {
        const [ttft, tps, n] = (replies[providers.length + i]?.[1] ?? []) as Array<string | null>;
        if (n)
          stats.set(mappingKey(provider, model), {
            ttftMs: numberOrNull(ttft),
            tokensPerSecond: numberOrNull(tps),
            samples: Number(n),
          });
      });
      return {
        isCooling: (provider) => cooling.has(provider),
        stats: (provider, model) => stats.get(mappingKey(provider, model)) ?? UNMEASURED,
      };
    },
    async recordFailure(provider) {
      try {
        await redis.hubRouterFailure(
          failuresKey(provider),
          coolingKey(provider),
          failuresBeforeCooldown,
          cooldownMs,
        );
      } catch (err) {
        unreachable(err, "recorded");
      }
    },
    async recordSuccess(provider, model, sample) {
      const speed = speedOf(sample);
      try {
        await redis.hubRouterSuccess(
          failuresKey(provider),
          coolingKey(provider),
          speedKey(provider, model),
          EWMA_WEIGHT,
          sample.ttftMs,
          speed === null ? "" : String(speed),
          SPEED_TTL_SECONDS,
        );
      } catch (err) {
        unreachable(err, "recorded");
      }
    },
  };
}
