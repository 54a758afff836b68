import type { Kysely, Migration } from "kysely";

/**
 * Handles an account gave up by renaming itself. Until `reserved_until` only
 * that account may take the handle back; the row stays after that, so old
 * profile URLs keep redirecting, until someone else claims the handle.
 */
export const handleReservations: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("handle_reservations")
      .addColumn("handle", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("reserved_until", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("handle_reservations_user_idx")
      .on("handle_reservations")
      .column("user_id")
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("handle_reservations").execute();
  },
};
