import type { Kysely, Migration } from "kysely";

/**
 * The Router's control plane and ledger. Money is integer nano-USD (bigint),
 * so sums are exact on both dialects. An owner is a user or an organization.
 */
export const inference: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("inference_owners")
      .addColumn("owner_id", "text", (c) => c.primaryKey())
      .addColumn("owner_type", "text", (c) => c.notNull())
      .addColumn("provider_order", "text", (c) => c.notNull().defaultTo("[]"))
      .addColumn("disabled_providers", "text", (c) => c.notNull().defaultTo("[]"))
      .addColumn("default_policy", "text")
      .addColumn("monthly_limit_nanousd", "bigint")
      .addColumn("balance_nanousd", "bigint", (c) => c.notNull().defaultTo(0))
      .addColumn("period", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("period_spend_nanousd", "bigint", (c) => c.notNull().defaultTo(0))
      .addColumn("restricted", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("inference_provider_keys")
      .addColumn("owner_id", "text", (c) => c.notNull())
      .addColumn("provider", "text", (c) => c.notNull())
      .addColumn("sealed_key", "text", (c) => c.notNull())
      .addColumn("key_hint", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("inference_provider_keys_pk", ["owner_id", "provider"])
      .execute();
    await db.schema
      .createTable("inference_usage")
      .addColumn("inference_id", "text", (c) => c.primaryKey())
      .addColumn("owner_id", "text", (c) => c.notNull())
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("provider", "text", (c) => c.notNull())
      .addColumn("model", "text", (c) => c.notNull())
      .addColumn("task", "text", (c) => c.notNull())
      .addColumn("billing", "text", (c) => c.notNull())
      .addColumn("stream", "integer", (c) => c.notNull())
      .addColumn("status", "integer", (c) => c.notNull())
      .addColumn("input_tokens", "integer", (c) => c.notNull())
      .addColumn("output_tokens", "integer", (c) => c.notNull())
      .addColumn("cost_nanousd", "bigint", (c) => c.notNull())
      .addColumn("latency_ms", "integer", (c) => c.notNull())
      .addColumn("ttft_ms", "integer")
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("inference_usage_owner_idx")
      .on("inference_usage")
      .columns(["owner_id", "created_at"])
      .execute();
    await db.schema
      .createTable("credit_grants")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("owner_id", "text", (c) => c.notNull())
      .addColumn("amount_nanousd", "bigint", (c) => c.notNull())
      .addColumn("note", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    for (const table of ["credit_grants", "inference_usage", "inference_provider_keys", "inference_owners"]) {
      await db.schema.dropTable(table).execute();
    }
  },
};
