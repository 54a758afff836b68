import type { DbOrTx } from "../../../db/database.js";
import type { PaymentMethodRow } from "../../../db/schema.js";

/** SQL for accounts' plans and payment methods; every function takes the database or a transaction first. */
export const billingRepository = {
  /** The account's plan, `free` when the operator never set one. */
  plan: async (db: DbOrTx, userId: string) =>
    (await db.selectFrom("billing_accounts").select("plan").where("user_id", "=", userId).executeTakeFirst())
      ?.plan ?? "free",

  setPlan: (db: DbOrTx, userId: string, plan: string, now: string) =>
    db
      .insertInto("billing_accounts")
      .values({ user_id: userId, plan, updated_at: now })
      .onConflict((oc) => oc.column("user_id").doUpdateSet({ plan, updated_at: now }))
      .execute(),

  paymentMethod: (db: DbOrTx, userId: string) =>
    db.selectFrom("payment_methods").selectAll().where("user_id", "=", userId).executeTakeFirst(),

  /** Records the method on file, replacing any earlier one (which keeps its `created_at`). */
  async savePaymentMethod(db: DbOrTx, row: PaymentMethodRow) {
    const { user_id: _key, created_at: _created, ...changes } = row;
    await db
      .insertInto("payment_methods")
      .values(row)
      .onConflict((oc) => oc.column("user_id").doUpdateSet(changes))
      .execute();
  },

  removePaymentMethod: async (db: DbOrTx, userId: string) =>
    Number(
      (await db.deleteFrom("payment_methods").where("user_id", "=", userId).executeTakeFirst())
        .numDeletedRows,
    ),
};
