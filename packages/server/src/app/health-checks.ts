import type { Health, HealthCheck } from "@hub/api";
import type { Redis } from "ioredis";
import { sql } from "kysely";
import type { Db } from "../db/database.js";
import type { ObjectStore } from "../git/lfs/object-store.js";

/** How long each dependency of a deep check may take to answer before it counts as unreachable. */
export const HEALTH_CHECK_TIMEOUT_MS = 2000;

export interface HealthChecksDeps {
  db: Db;
  objectStore: ObjectStore;
  /** The connection to the Redis the deployment shares state through (`db/redis.ts`), when it does. */
  redis: Redis | null;
  timeoutMs?: number;
}

/**
 * What `GET /api/health?deep=1` asks of this process's dependencies: one
 * cheap call each (`select 1`, Redis `PING`, the store's `reachable`), all at
 * once, each given up after the timeout, so a load balancer's probe is
 * answered within it however a dependency hangs. Redis is asked through the
 * connection the process's shared state uses, so the check says whether that
 * one answers.
 */
export function createHealthChecks({
  db,
  objectStore,
  redis,
  timeoutMs = HEALTH_CHECK_TIMEOUT_MS,
}: HealthChecksDeps) {
  async function timed(call: (signal: AbortSignal) => Promise<unknown>): Promise<HealthCheck> {
    const started = performance.now();
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        abort.abort();
        reject(new Error(`no answer within ${timeoutMs} ms`));
      }, timeoutMs);
    });
    try {
      await Promise.race([call(abort.signal), timeout]);
      return { ok: true, ms: Math.round(performance.now() - started) };
    } catch (error) {
      const message = error instanceof Error && error.message ? error.message : String(error);
      return { ok: false, ms: Math.round(performance.now() - started), error: message };
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    /** Reaches every dependency; `ok` only when all answered. */
    async run(): Promise<{ ok: boolean; checks: NonNullable<Health["checks"]> }> {
      const [database, objectStoreCheck, redisCheck] = await Promise.all([
        timed(() => sql`select 1`.execute(db)),
        timed((signal) => objectStore.reachable(signal)),
        redis === null ? Promise.resolve(undefined) : timed(() => redis.ping()),
      ]);
      const checks = {
        database,
        ...(redisCheck ? { redis: redisCheck } : {}),
        objectStore: objectStoreCheck,
      };
      return { ok: Object.values(checks).every((check) => check.ok), checks };
    },
  };
}

export type HealthChecks = ReturnType<typeof createHealthChecks>;
