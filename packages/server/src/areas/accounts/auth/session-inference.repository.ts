import type { DbOrTx } from "../../../db/database.js";
import type { SessionInferenceTokenRow } from "../../../db/schema.js";
import { cachedRead } from "../../../db/cached-read.js";

/** SQL for the Router credentials browser sessions mint; only the secret's digest is stored. */
export const sessionInferenceRepository = {
  insert: (db: DbOrTx, row: SessionInferenceTokenRow) =>
    db.insertInto("session_inference_tokens").values(row).execute(),

  /**
   * The credential, its session's expiry and the account, by the secret's digest. The inner join on the
   * session means a credential whose session is gone is never found, even before the cascade runs.
   */
  findBySecretHash: cachedRead("session inference token by secret", (db: DbOrTx, secretHash: string) =>
    db
      .selectFrom("session_inference_tokens")
      .innerJoin("sessions", "sessions.id", "session_inference_tokens.session_id")
      .innerJoin("users", "users.id", "sessions.user_id")
      .selectAll("session_inference_tokens")
      .select([
        "sessions.expires_at as session_expires_at",
        "users.id as user_id",
        "users.handle",
        "users.fullname",
        "users.is_admin",
      ])
      .where("session_inference_tokens.secret_hash", "=", secretHash)
      .executeTakeFirst(),
  ),

  deleteExpired: (db: DbOrTx, now: string) =>
    db.deleteFrom("session_inference_tokens").where("expires_at", "<=", now).execute(),
};
