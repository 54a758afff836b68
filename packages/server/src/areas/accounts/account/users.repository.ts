import type { DbOrTx } from "../../../db/database.js";
import type { UserRow } from "../../../db/schema.js";

/** SQL for accounts; every function takes the database or a transaction first. */
export const usersRepository = {
  insert: (db: DbOrTx, row: UserRow) => db.insertInto("users").values(row).execute(),

  findById: (db: DbOrTx, id: string) =>
    db.selectFrom("users").selectAll().where("id", "=", id).executeTakeFirst(),

  findByHandle: (db: DbOrTx, handle: string) =>
    db.selectFrom("users").selectAll().where("handle", "=", handle).executeTakeFirst(),

  /** A login name is a handle or an email address; emails are stored lower-cased. */
  findByLogin: (db: DbOrTx, login: string) =>
    db
      .selectFrom("users")
      .selectAll()
      .where((eb) => eb.or([eb("handle", "=", login), eb("email", "=", login.toLowerCase())]))
      .executeTakeFirst(),

  setEmailVerified: (db: DbOrTx, id: string, verified: boolean) =>
    db
      .updateTable("users")
      .set({ email_verified: verified ? 1 : 0 })
      .where("id", "=", id)
      .execute(),

  setFullname: (db: DbOrTx, id: string, fullname: string) =>
    db.updateTable("users").set({ fullname }).where("id", "=", id).execute(),

  emailTaken: async (db: DbOrTx, email: string) =>
    (await db.selectFrom("users").select("id").where("email", "=", email).executeTakeFirst()) !== undefined,

  /** Repositories per kind, for the account context. */
  repositoryCounts: (db: DbOrTx, ownerId: string) =>
    db
      .selectFrom("repositories")
      .select(["type", (eb) => eb.fn.countAll<string | number>().as("count")])
      .where("owner_id", "=", ownerId)
      .groupBy("type")
      .execute(),
};
