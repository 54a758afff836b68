import type { DbOrTx } from "../../../db/database.js";
import type { UserMfaRecoveryCodeRow } from "../../../db/schema.js";

/** SQL for two-factor authentication; every function takes the database or a transaction first. */
export const mfaRepository = {
  find: (db: DbOrTx, userId: string) =>
    db.selectFrom("user_mfa").selectAll().where("user_id", "=", userId).executeTakeFirst(),

  /** Starts (or restarts) an enrollment: a new pending secret, the active one untouched. */
  async savePending(db: DbOrTx, userId: string, pendingSecret: string, at: string) {
    const pending = { pending_secret: pendingSecret, pending_since: at };
    await db
      .insertInto("user_mfa")
      .values({ user_id: userId, totp_secret: null, enrolled_at: null, last_used_step: null, ...pending })
      .onConflict((oc) => oc.column("user_id").doUpdateSet(pending))
      .execute();
  },

  /** Makes the pending secret the active one, if it is still the one the code was checked against. */
  async activate(db: DbOrTx, userId: string, pendingSecret: string, at: string, step: number) {
    const result = await db
      .updateTable("user_mfa")
      .set({
        totp_secret: pendingSecret,
        enrolled_at: at,
        last_used_step: step,
        pending_secret: null,
        pending_since: null,
      })
      .where("user_id", "=", userId)
      .where("pending_secret", "=", pendingSecret)
      .where("totp_secret", "is", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  /** Records an accepted step, only if it is later than every step accepted before (one winner per code). */
  async useStep(db: DbOrTx, userId: string, step: number) {
    const result = await db
      .updateTable("user_mfa")
      .set({ last_used_step: step })
      .where("user_id", "=", userId)
      .where((eb) => eb.or([eb("last_used_step", "is", null), eb("last_used_step", "<", step)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  async remove(db: DbOrTx, userId: string) {
    await db.deleteFrom("user_mfa_recovery_codes").where("user_id", "=", userId).execute();
    const result = await db.deleteFrom("user_mfa").where("user_id", "=", userId).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  },

  async replaceRecoveryCodes(db: DbOrTx, userId: string, rows: UserMfaRecoveryCodeRow[]) {
    await db.deleteFrom("user_mfa_recovery_codes").where("user_id", "=", userId).execute();
    await db.insertInto("user_mfa_recovery_codes").values(rows).execute();
  },

  unusedRecoveryCodes: (db: DbOrTx, userId: string) =>
    db
      .selectFrom("user_mfa_recovery_codes")
      .select(["id", "code_hash"])
      .where("user_id", "=", userId)
      .where("used_at", "is", null)
      .execute(),

  /** Spends a recovery code; false when a concurrent request spent it first. */
  async spendRecoveryCode(db: DbOrTx, id: string, at: string) {
    const result = await db
      .updateTable("user_mfa_recovery_codes")
      .set({ used_at: at })
      .where("id", "=", id)
      .where("used_at", "is", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },
};
