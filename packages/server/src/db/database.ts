import fs from "node:fs";
import path from "node:path";
import Sqlite from "better-sqlite3";
import {
  type Dialect,
  Kysely,
  Migrator,
  type MigrationProvider,
  PostgresDialect,
  SqliteDialect,
  type SqliteDatabase,
  type Transaction,
} from "kysely";
import pg from "pg";
import type { DatabaseConfig } from "../config.js";
import { migrationProvider } from "./migrations/index.js";
import type { Database } from "./schema.js";
import { countingWrites, type WriteCount } from "./write-counting-driver.js";

export type Db = Kysely<Database>;
export type DbOrTx = Kysely<Database> | Transaction<Database>;

const writeCounts = new WeakMap<Db, WriteCount>();

/** This process's count of completed writes to a database `openDatabase` opened (`db/change-epoch.ts` reads it). */
export function writeCountOf(db: Db): WriteCount {
  const writes = writeCounts.get(db);
  if (!writes) throw new Error("Only a database opened by openDatabase counts its writes.");
  return writes;
}

/** Opens the configured database: SQLite (WAL, foreign keys, busy timeout) or PostgreSQL. */
export function openDatabase(config: DatabaseConfig): Db {
  const writes: WriteCount = { count: 0 };
  const db = new Kysely<Database>({ dialect: countingWrites(dialectOf(config), writes) });
  writeCounts.set(db, writes);
  return db;
}

function dialectOf(config: DatabaseConfig): Dialect {
  if (config.dialect === "postgres") {
    return new PostgresDialect({ pool: new pg.Pool({ connectionString: config.url, max: 10 }) });
  }
  fs.mkdirSync(path.dirname(config.file), { recursive: true });
  const sqlite = new Sqlite(config.file);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("busy_timeout = 5000");
  sqlite.pragma("synchronous = NORMAL");
  return new SqliteDialect({ database: withStatementCache(sqlite) });
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely prepares every query anew, and preparing is most of SQLite's cost for
 * small queries. The hub issues a bounded set of distinct SQL strings, so
 * prepared statements are kept and reused (least recently used are dropped).
 * Reuse is safe because better-sqlite3 runs each statement to completion synchronously.
 */
function withStatementCache(sqlite: Sqlite.Database): SqliteDatabase {
  const statements = new Map<string, Sqlite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sqlText: string) {
      let statement = statements.get(sqlText);
      if (statement) {
        statements.delete(sqlText);
      } else {
        statement = sqlite.prepare(sqlText);
        if (statements.size >= STATEMENT_CACHE_SIZE) {
          const oldest = statements.keys().next();
          if (!oldest.done) statements.delete(oldest.value);
        }
      }
      statements.set(sqlText, statement);
      return statement;
    },
  };
}

/**
 * Brings the schema to the newest migration; safe to run from several processes
 * at start. PostgreSQL serializes them with Kysely's advisory lock; SQLite has
 * no such lock, so the processes take turns on a lock database beside the file.
 * The provider is the server's own migrations; tests may give others.
 */
export async function migrateToLatest(
  db: Db,
  config: DatabaseConfig,
  provider: MigrationProvider = migrationProvider,
): Promise<void> {
  if (config.dialect === "postgres") return migrate(db, provider);
  const lock = new Sqlite(`${config.file}.migration-lock`);
  try {
    lock.pragma("busy_timeout = 60000");
    lock.exec("BEGIN IMMEDIATE");
    await migrate(db, provider);
  } finally {
    if (lock.inTransaction) lock.exec("COMMIT");
    lock.close();
  }
}

async function migrate(db: Db, provider: MigrationProvider): Promise<void> {
  // Branches add migrations in parallel: one merged after a higher-numbered one must still run.
  const migrator = new Migrator({ db, provider, allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === "Error");
  if (error || failed) {
    const cause = error instanceof Error ? error.message : String(error ?? "");
    throw new Error(`Database migration ${failed?.migrationName ?? ""} failed: ${cause}`);
  }
}
