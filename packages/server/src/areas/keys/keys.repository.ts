import type { DbOrTx } from "../../db/database.js";
import type { AccountKeyRow } from "../../db/schema.js";

/** SQL for the public keys of accounts. */
export const keysRepository = {
  insert: (db: DbOrTx, row: AccountKeyRow) => db.insertInto("account_keys").values(row).execute(),

  insertGpgKeyIds: (db: DbOrTx, accountKeyId: string, keyIds: string[]) =>
    db
      .insertInto("gpg_key_ids")
      .values(keyIds.map((keyId) => ({ key_id: keyId, account_key_id: accountKeyId })))
      .execute(),

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

  /** An SSH key and its account, by fingerprint or by id: what SSH authentication looks up on every attempt. */
  findSshKey: (db: DbOrTx, by: { fingerprint: string } | { id: string }) =>
    db
      .selectFrom("account_keys")
      .innerJoin("users", "users.id", "account_keys.user_id")
      .select([
        "account_keys.id",
        "account_keys.public_key",
        "account_keys.user_id",
        "users.handle",
        "users.fullname",
        "users.is_admin",
      ])
      .where("account_keys.type", "=", "ssh")
      .where(
        "fingerprint" in by ? "account_keys.fingerprint" : "account_keys.id",
        "=",
        "fingerprint" in by ? by.fingerprint : by.id,
      )
      .executeTakeFirst(),

  touch: (db: DbOrTx, id: string, at: string) =>
    db.updateTable("account_keys").set({ last_used_at: at }).where("id", "=", id).execute(),

  delete: async (db: DbOrTx, userId: string, id: string) =>
    (
      await db
        .deleteFrom("account_keys")
        .where("id", "=", id)
        .where("user_id", "=", userId)
        .executeTakeFirst()
    ).numDeletedRows > 0n,
};
