import pg from "pg";
import type { DatabaseConfig } from "../config.js";

/** The lock connections' name in `pg_stat_activity`, for operators (and tests) to find them. */
export const WRITE_LOCK_CONNECTION_NAME = "hub-write-locks";

/** At most this many keys are held or awaited in PostgreSQL at once by one process; more wait in the process. */
const LOCK_CONNECTIONS = 8;

/**
 * Exclusive locks keyed by a string (a repository's id), held across every
 * process of a deployment: on PostgreSQL a session advisory lock
 * (https://www.postgresql.org/docs/current/explicit-locking.html#ADVISORY-LOCKS),
 * on SQLite, which one process serves, a queue in the process. Within a process
 * the callers of one key queue in memory first, so a key holds at most one
 * PostgreSQL connection per process. The connections are a pool of their own:
 * a holder's work may need the hub's database pool, which lock waiters never
 * occupy. A process that dies loses its connection, and PostgreSQL releases
 * its locks at once.
 */
export interface WriteLocks {
  /** Runs `work` while holding the lock of `key`, and releases it however `work` ends. */
  withLock<T>(key: string, work: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The write locks for the configured database. */
export function createWriteLocks(config: DatabaseConfig): WriteLocks {
  const queues = new Map<string, Promise<unknown>>();
  const pool =
    config.dialect === "postgres"
      ? new pg.Pool({
          connectionString: config.url,
          max: LOCK_CONNECTIONS,
          application_name: WRITE_LOCK_CONNECTION_NAME,
        })
      : null;
  // An idle lock connection that breaks is dropped from the pool; it held no lock.
  pool?.on("error", () => {});

  async function holdInDatabase<T>(database: pg.Pool, key: string, work: () => Promise<T>): Promise<T> {
    const client = await database.connect();
    // A connection lost while held (PostgreSQL restarted, the session ended) fails the unlock below, not the process.
    const lost = () => {};
    client.on("error", lost);
    const release = (error?: unknown) => {
      client.off("error", lost);
      client.release(error === undefined ? undefined : error instanceof Error ? error : true);
    };
    try {
      await client.query("select pg_advisory_lock(hashtext('hub-write'), hashtext($1))", [key]);
    } catch (error) {
      release(error);
      throw error;
    }
    try {
      return await work();
    } finally {
      // A failed unlock ends the session instead, which releases the lock too.
      await client
        .query("select pg_advisory_unlock(hashtext('hub-write'), hashtext($1))", [key])
        .then(() => release(), release);
    }
  }

  return {
    withLock<T>(key: string, work: () => Promise<T>): Promise<T> {
      const before = queues.get(key) ?? Promise.resolve();
      const run = before.then(() => (pool ? holdInDatabase(pool, key, work) : work()));
      const settled = run.then(
        () => undefined,
        () => undefined,
      );
      queues.set(key, settled);
      void settled.then(() => {
        if (queues.get(key) === settled) queues.delete(key);
      });
      return run;
    },
    async close() {
      await pool?.end();
    },
  };
}
