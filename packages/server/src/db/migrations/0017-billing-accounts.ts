import type { Kysely, Migration } from "kysely";

/**
 * What billing knows of an account beyond the Router's ledger: its plan (a row
 * made when the operator first sets one; `free` without), and the payment
 * method on file, masked (brand, last four digits, expiry, holder, billing
 * email and country). No card number is ever stored.
 */
export const billingAccounts: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("billing_accounts")
      .addColumn("user_id", "text", (c) => c.primaryKey().references("users.id").onDelete("cascade"))
      .addColumn("plan", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("payment_methods")
      .addColumn("user_id", "text", (c) => c.primaryKey().references("users.id").onDelete("cascade"))
      .addColumn("brand", "text", (c) => c.notNull())
      .addColumn("last4", "text", (c) => c.notNull())
      .addColumn("exp_month", "integer", (c) => c.notNull())
      .addColumn("exp_year", "integer", (c) => c.notNull())
      .addColumn("holder", "text")
      .addColumn("billing_email", "text")
      .addColumn("country", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("payment_methods").execute();
    await db.schema.dropTable("billing_accounts").execute();
  },
};
