import { sql, type Kysely, type Migration } from "kysely";
import { isPostgres } from "../dialect.js";

/**
 * PostgreSQL notes changes in counters a reader can ask for, as SQLite has
 * since migration 0023: a notification reaches each process a moment after
 * the commit, and a request another process sends right after the writer
 * answered may come first, so the read cache asks the counters instead
 * (`db/change-epoch.ts`). Each server process (backend) counts in a row of its
 * own, so writers never wait on each other's counter or deadlock over it; the
 * epoch is the sum, which any committed change moves. Rows of backends that
 * ended are folded into row 0 now and then, which keeps the sum. The
 * notification stays, so processes of the previous release, which listen for
 * it, keep their caches right through a rolling upgrade.
 */
export const changeCounters: Migration = {
  async up(db: Kysely<unknown>) {
    if (!isPostgres(db)) return;
    await db.schema
      .createTable("change_epoch")
      .addColumn("backend", "integer", (c) => c.primaryKey())
      .addColumn("value", "bigint", (c) => c.notNull())
      .execute();
    await sql`insert into change_epoch (backend, value) values (0, 0)`.execute(db);
    await sql`create or replace function hub_note_change() returns trigger language plpgsql as $$
      begin
        insert into change_epoch (backend, value) values (pg_backend_pid(), 1)
          on conflict (backend) do update set value = change_epoch.value + 1;
        perform pg_notify('hub_changes', '');
        return null;
      end $$`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    if (!isPostgres(db)) return;
    await sql`create or replace function hub_note_change() returns trigger language plpgsql as $$
      begin perform pg_notify('hub_changes', ''); return null; end $$`.execute(db);
    await db.schema.dropTable("change_epoch").execute();
  },
};
