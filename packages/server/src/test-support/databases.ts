import { randomBytes } from "node:crypto";
import pg from "pg";

/** Every storage-touching suite runs once per dialect. */
export const DIALECTS = ["sqlite", "postgres"] as const;
export type Dialect = (typeof DIALECTS)[number];

/** The PostgreSQL server the tests use; CI and developers run one on loopback with trust auth. */
const ADMIN_URL = process.env.HUB_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export interface TestDatabase {
  /** The value for HUB_DATABASE_URL, or undefined for the embedded SQLite default in the data dir. */
  url: string | undefined;
  drop(): Promise<void>;
}

/** A fresh, empty database: a new PostgreSQL database, or (for SQLite) the hub's default file in a new data dir. */
export async function createTestDatabase(dialect: Dialect): Promise<TestDatabase> {
  if (dialect === "sqlite") return { url: undefined, drop: async () => {} };
  const name = `hub_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    async drop() {
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      // A pool's end() resolves before its connections have closed: give them a moment, so FORCE does not
      // cut one off mid-goodbye (an in-process hub's pool would report that as an uncaught error).
      for (let i = 0; i < 100; i++) {
        const { rows } = await client.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1",
          [name],
        );
        if (rows[0]?.n === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
