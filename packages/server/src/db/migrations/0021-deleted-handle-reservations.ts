import { sql, type Kysely, type Migration } from "kysely";

/** Rebuilds `handle_reservations` with the given rule for its account reference (SQLite cannot alter one). */
async function rebuild(db: Kysely<unknown>, onDelete: "set null" | "cascade"): Promise<void> {
  await db.schema
    .createTable("handle_reservations_next")
    .addColumn("handle", "text", (c) => c.primaryKey())
    .addColumn("user_id", "text", (c) => {
      const column = c.references("users.id").onDelete(onDelete);
      return onDelete === "cascade" ? column.notNull() : column;
    })
    .addColumn("reserved_until", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  const kept = onDelete === "cascade" ? sql`where user_id is not null` : sql``;
  await sql`insert into handle_reservations_next (handle, user_id, reserved_until, created_at)
    select handle, user_id, reserved_until, created_at from handle_reservations ${kept}`.execute(db);
  await db.schema.dropTable("handle_reservations").execute();
  await db.schema.alterTable("handle_reservations_next").renameTo("handle_reservations").execute();
  await db.schema
    .createIndex("handle_reservations_user_idx")
    .on("handle_reservations")
    .column("user_id")
    .execute();
}

/**
 * A reservation outlives the account that held the handle: when an account
 * (or an organization deleted with it) goes, its handles stay reserved, with
 * no account, so nobody can impersonate it right away. The account reference
 * becomes nullable and is cleared, not cascaded, when the account is deleted.
 */
export const deletedHandleReservations: Migration = {
  up: (db: Kysely<unknown>) => rebuild(db, "set null"),
  down: (db: Kysely<unknown>) => rebuild(db, "cascade"),
};
