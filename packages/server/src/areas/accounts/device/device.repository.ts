import type { DbOrTx } from "../../../db/database.js";
import type { DeviceCodeRow } from "../../../db/schema.js";

const changed = (result: { numUpdatedRows: bigint }) => result.numUpdatedRows > 0n;

/**
 * SQL for device sign-ins. Every state change is a conditional update on the
 * state it leaves, so two requests racing over one code cannot both win.
 */
export const deviceRepository = {
  insert: (db: DbOrTx, row: DeviceCodeRow) => db.insertInto("device_codes").values(row).execute(),

  findByDeviceCodeHash: (db: DbOrTx, hash: string) =>
    db.selectFrom("device_codes").selectAll().where("device_code_hash", "=", hash).executeTakeFirst(),

  findByUserCode: (db: DbOrTx, userCode: string) =>
    db.selectFrom("device_codes").selectAll().where("user_code", "=", userCode).executeTakeFirst(),

  /** Removes codes that expired before `before`. */
  deleteExpired: (db: DbOrTx, before: string) =>
    db.deleteFrom("device_codes").where("expires_at", "<", before).execute(),

  /** Notes a poll of a pending code, unless the previous one came after `earliest`. */
  notePoll: async (db: DbOrTx, id: string, now: string, earliest: string) =>
    changed(
      await db
        .updateTable("device_codes")
        .set({ last_polled_at: now })
        .where("id", "=", id)
        .where("status", "=", "pending")
        .where((eb) => eb.or([eb("last_polled_at", "is", null), eb("last_polled_at", "<=", earliest)]))
        .executeTakeFirst(),
    ),

  /** A poll came too soon: the client must wait 5 seconds longer from now on (RFC 8628 §3.5). */
  slowDown: (db: DbOrTx, id: string, now: string) =>
    db
      .updateTable("device_codes")
      .set((eb) => ({ last_polled_at: now, interval_seconds: eb("interval_seconds", "+", 5) }))
      .where("id", "=", id)
      .where("status", "=", "pending")
      .execute(),

  /** Records the person's decision on a pending, unexpired code. */
  decide: async (
    db: DbOrTx,
    id: string,
    now: string,
    decision: Pick<DeviceCodeRow, "status" | "user_id" | "granted_scopes">,
  ) =>
    changed(
      await db
        .updateTable("device_codes")
        .set(decision)
        .where("id", "=", id)
        .where("status", "=", "pending")
        .where("expires_at", ">", now)
        .executeTakeFirst(),
    ),

  /** Marks an approved code as used; only one caller gets true. */
  consume: async (db: DbOrTx, id: string) =>
    changed(
      await db
        .updateTable("device_codes")
        .set({ status: "consumed" })
        .where("id", "=", id)
        .where("status", "=", "approved")
        .executeTakeFirst(),
    ),
};
