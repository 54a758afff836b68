import type { Kysely, Migration } from "kysely";
import { readKey } from "openpgp";

/**
 * The key ids of every registered GPG key, its primary key and its subkeys: an
 * OpenPGP signature names the key that made it by id, often a signing subkey.
 * Keys registered before this migration get theirs here.
 */
export const gpgKeyIdsTable: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("gpg_key_ids")
      .addColumn("key_id", "text", (c) => c.notNull())
      .addColumn("account_key_id", "text", (c) =>
        c.notNull().references("account_keys.id").onDelete("cascade"),
      )
      .addPrimaryKeyConstraint("gpg_key_ids_pk", ["key_id", "account_key_id"])
      .execute();
    const tables = db.withTables<{
      account_keys: { id: string; type: string; public_key: string };
      gpg_key_ids: { key_id: string; account_key_id: string };
    }>();
    const keys = await tables
      .selectFrom("account_keys")
      .select(["id", "public_key"])
      .where("type", "=", "gpg")
      .execute();
    for (const key of keys) {
      const parsed = await readKey({ armoredKey: key.public_key });
      // The primary key's and subkeys' ids, as the keys area stored them in 2026 (frozen here: a migration never imports live code).
      const ids = [...new Set(parsed.getKeyIDs().map((id) => id.toHex().toUpperCase()))];
      await tables
        .insertInto("gpg_key_ids")
        .values(ids.map((id) => ({ key_id: id, account_key_id: key.id })))
        .execute();
    }
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("gpg_key_ids").execute();
  },
};
