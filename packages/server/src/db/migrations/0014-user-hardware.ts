import type { Kysely, Migration } from "kysely";

/** The local hardware an account declared: accelerators (JSON list of catalog ids, counts and memory), CPU and RAM. */
export const userHardware: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("user_hardware")
      .addColumn("user_id", "text", (c) => c.primaryKey().references("users.id").onDelete("cascade"))
      .addColumn("accelerators", "text", (c) => c.notNull())
      .addColumn("cpu", "text")
      .addColumn("system_memory_gib", "double precision")
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("user_hardware").execute();
  },
};
