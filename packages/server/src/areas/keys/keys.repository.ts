import type { DbOrTx } from "../../db/database.js";
import type { AccountKeyRow } from "../../db/schema.js";

/** SQL for the public keys of accounts. */
export const keysRepository = {
  insert: (db: DbOrTx, row: AccountKeyRow) => db.insertInto("account_keys").values(row).execute(),

  listForUser: (db: DbOrTx, userId: string) =>
    db
      .selectFrom("account_keys")
      .selectAll()
      .where("user_id", "=", userId)
      .orderBy("created_at")
      .orderBy("id")
      .execute(),

  findByFingerprint: (db: DbOrTx, fingerprint: string) =>
    db
      .selectFrom("account_keys")
      .select(["id", "user_id"])
      .where("fingerprint", "=", fingerprint)
      .executeTakeFirst(),

  delete: async (db: DbOrTx, userId: string, id: string) =>
    (
      await db
        .deleteFrom("account_keys")
        .where("id", "=", id)
        .where("user_id", "=", userId)
        .executeTakeFirst()
    ).numDeletedRows > 0n,
};
