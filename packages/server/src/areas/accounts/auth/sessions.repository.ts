import type { DbOrTx } from "../../../db/database.js";
import type { SessionRow } from "../../../db/schema.js";
import { cachedRead } from "../../../db/cached-read.js";

/** SQL for browser sessions; like tokens, only the digest of the cookie secret is stored. */
export const sessionsRepository = {
  insert: (db: DbOrTx, row: SessionRow) => db.insertInto("sessions").values(row).execute(),

  /** The session and its account by the cookie digest, cached until sessions or accounts change. */
  findBySecretHash: cachedRead("session by secret", (db: DbOrTx, secretHash: string) =>
    db
      .selectFrom("sessions")
      .innerJoin("users", "users.id", "sessions.user_id")
      .selectAll("sessions")
      .select(["users.handle", "users.fullname", "users.is_admin"])
      .where("sessions.secret_hash", "=", secretHash)
      .executeTakeFirst(),
  ),

  findById: cachedRead("session by id", (db: DbOrTx, id: string) =>
    db
      .selectFrom("sessions")
      .innerJoin("users", "users.id", "sessions.user_id")
      .selectAll("sessions")
      .select(["users.handle", "users.fullname", "users.is_admin"])
      .where("sessions.id", "=", id)
      .executeTakeFirst(),
  ),

  delete: (db: DbOrTx, id: string) => db.deleteFrom("sessions").where("id", "=", id).execute(),

  deleteExpired: (db: DbOrTx, now: string) =>
    db.deleteFrom("sessions").where("expires_at", "<=", now).execute(),

  markReauthenticated: (db: DbOrTx, id: string, at: string) =>
    db.updateTable("sessions").set({ reauthenticated_at: at }).where("id", "=", id).execute(),
};
