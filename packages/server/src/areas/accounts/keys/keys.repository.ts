import type { DbOrTx } from "../../../db/database.js";
import type { AccountKeyRow } from "../../../db/schema.js";

/** What judging a commit signature needs of a registered key: the key and its account's email. */
const SIGNING_KEY_COLUMNS = [
  "account_keys.id",
  "account_keys.type",
  "account_keys.fingerprint",
  "account_keys.public_key",
  "users.handle",
  "users.email",
  "users.email_verified",
] as const;

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

  /** The SSH key with this fingerprint, with its account. */
  findSshSigningKey: (db: DbOrTx, fingerprint: string) =>
    db
      .selectFrom("account_keys")
      .innerJoin("users", "users.id", "account_keys.user_id")
      .select(SIGNING_KEY_COLUMNS)
      .where("account_keys.type", "=", "ssh")
      .where("account_keys.fingerprint", "=", fingerprint)
      .executeTakeFirst(),

  /** The GPG keys holding a primary key or subkey with one of these ids, with their accounts. */
  findGpgSigningKeys: (db: DbOrTx, keyIds: string[]) =>
    db
      .selectFrom("gpg_key_ids")
      .innerJoin("account_keys", "account_keys.id", "gpg_key_ids.account_key_id")
      .innerJoin("users", "users.id", "account_keys.user_id")
      .select(SIGNING_KEY_COLUMNS)
      .distinct()
      .where("gpg_key_ids.key_id", "in", keyIds)
      .execute(),

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
