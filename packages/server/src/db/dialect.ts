import { PostgresAdapter, type Kysely } from "kysely";

/** Whether a Kysely instance talks to PostgreSQL (otherwise SQLite), for the few statements the dialects spell apart. */
export function isPostgres(
  db: Pick<Kysely<unknown>, "getExecutor"> | { getExecutor(): { adapter: unknown } },
): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
