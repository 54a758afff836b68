import type { Kysely, Migration } from "kysely";

/**
 * Webhook routes, what each watches, and the durable outbox: one delivery row
 * per event and route, written when the event happens, and one attempt row per
 * try (the delivery receipts). Deliveries are claimed with a lease, so several
 * hub processes can work one outbox without sending a delivery twice at once.
 */
export const webhooks: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("webhooks")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("owner_id", "text", (c) => c.notNull())
      .addColumn("owner_type", "text", (c) => c.notNull())
      .addColumn("url", "text", (c) => c.notNull())
      .addColumn("domains", "text", (c) => c.notNull())
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("sealed_secret", "text", (c) => c.notNull())
      .addColumn("disabled", "integer", (c) => c.notNull())
      .addColumn("disabled_reason", "text")
      .addColumn("disabled_at", "text")
      .addColumn("consecutive_failures", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("failing_since", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("webhooks_owner_idx").on("webhooks").column("owner_id").execute();
    await db.schema
      .createTable("webhook_watches")
      .addColumn("webhook_id", "text", (c) => c.notNull().references("webhooks.id").onDelete("cascade"))
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("target_id", "text", (c) => c.notNull())
      .addColumn("position", "integer", (c) => c.notNull())
      .addPrimaryKeyConstraint("webhook_watches_pk", ["webhook_id", "kind", "target_id"])
      .execute();
    await db.schema
      .createIndex("webhook_watches_target_idx")
      .on("webhook_watches")
      .columns(["target_id", "kind"])
      .execute();
    await db.schema
      .createTable("webhook_deliveries")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("webhook_id", "text", (c) => c.notNull().references("webhooks.id").onDelete("cascade"))
      .addColumn("event_id", "text", (c) => c.notNull())
      .addColumn("scope", "text", (c) => c.notNull())
      .addColumn("action", "text", (c) => c.notNull())
      .addColumn("payload", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("attempts_left", "integer", (c) => c.notNull())
      .addColumn("next_attempt_at", "text")
      .addColumn("lease_until", "text")
      .addColumn("redelivery", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("delivered_at", "text")
      .execute();
    await db.schema
      .createIndex("webhook_deliveries_due_idx")
      .on("webhook_deliveries")
      .columns(["status", "next_attempt_at"])
      .execute();
    await db.schema
      .createIndex("webhook_deliveries_route_idx")
      .on("webhook_deliveries")
      .columns(["webhook_id", "created_at"])
      .execute();
    await db.schema
      .createTable("webhook_attempts")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("delivery_id", "text", (c) =>
        c.notNull().references("webhook_deliveries.id").onDelete("cascade"),
      )
      .addColumn("attempted_at", "text", (c) => c.notNull())
      .addColumn("duration_ms", "integer", (c) => c.notNull())
      .addColumn("outcome", "text", (c) => c.notNull())
      .addColumn("status_code", "integer")
      .addColumn("response_excerpt", "text")
      .addColumn("error", "text")
      .addColumn("redelivery", "integer", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("webhook_attempts_delivery_idx")
      .on("webhook_attempts")
      .columns(["delivery_id", "attempted_at"])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    for (const table of ["webhook_attempts", "webhook_deliveries", "webhook_watches", "webhooks"]) {
      await db.schema.dropTable(table).execute();
    }
  },
};
