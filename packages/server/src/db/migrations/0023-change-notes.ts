import { sql, type Kysely, type Migration } from "kysely";
import { isPostgres } from "../dialect.js";

/**
 * The tables whose rows the hot paths read through the cache (`db/cached-read.ts`),
 * and for two of them the columns that matter: a token's or key's `last_used_at`
 * is written as it is used and changes nothing a request decides on.
 */
const NOTED: ReadonlyArray<{ table: string; columns?: string[] }> = [
  { table: "users" },
  {
    table: "access_tokens",
    columns: [
      "id",
      "user_id",
      "name",
      "secret_hash",
      "role",
      "scopes",
      "organization_id",
      "repositories",
      "expires_at",
      "reauthenticated_at",
    ],
  },
  { table: "sessions" },
  {
    table: "account_keys",
    columns: ["id", "user_id", "title", "type", "algorithm", "fingerprint", "public_key"],
  },
  { table: "organizations" },
  { table: "memberships" },
  { table: "organization_sso" },
  { table: "sso_authorizations" },
  { table: "repositories" },
  { table: "repo_redirects" },
  { table: "repo_access_requests" },
  { table: "inference_owners" },
  { table: "inference_provider_keys" },
  { table: "billing_accounts" },
];

/**
 * Makes every insert, update and delete of a noted table note a change, from
 * whatever process or tool writes it. SQLite counts changes in a one-row table
 * that readers compare; PostgreSQL notifies the `hub_changes` channel at
 * commit (migration 0027 turns that into counters). A later migration that rebuilds one of these tables calls this again
 * for it (SQLite drops a table's triggers with the table).
 */
export async function noteChangesOn(db: Kysely<unknown>, table: string, columns?: string[]): Promise<void> {
  const events = ["insert", "delete", columns ? `update of ${columns.join(", ")}` : "update"];
  for (const [index, event] of events.entries()) {
    const name = sql.id(`${table}_notes_change_${index}`);
    if (isPostgres(db)) {
      await sql`create trigger ${name} after ${sql.raw(event)} on ${sql.table(table)}
        for each statement execute function hub_note_change()`.execute(db);
    } else {
      await sql`create trigger ${name} after ${sql.raw(event)} on ${sql.table(table)}
        begin update change_epoch set value = value + 1; end`.execute(db);
    }
  }
}

export const changeNotes: Migration = {
  async up(db: Kysely<unknown>) {
    if (isPostgres(db)) {
      await sql`create function hub_note_change() returns trigger language plpgsql as $$
        begin perform pg_notify('hub_changes', ''); return null; end $$`.execute(db);
    } else {
      await db.schema
        .createTable("change_epoch")
        .addColumn("id", "integer", (c) => c.primaryKey())
        .addColumn("value", "integer", (c) => c.notNull())
        .execute();
      await sql`insert into change_epoch (id, value) values (1, 0)`.execute(db);
    }
    for (const { table, columns } of NOTED) await noteChangesOn(db, table, columns);
  },
  async down(db: Kysely<unknown>) {
    for (const { table } of NOTED) {
      for (const index of [0, 1, 2]) {
        await sql`drop trigger if exists ${sql.id(`${table}_notes_change_${index}`)}${sql.raw(
          isPostgres(db) ? ` on ${table}` : "",
        )}`.execute(db);
      }
    }
    if (isPostgres(db)) await sql`drop function hub_note_change()`.execute(db);
    else await db.schema.dropTable("change_epoch").execute();
  },
};
