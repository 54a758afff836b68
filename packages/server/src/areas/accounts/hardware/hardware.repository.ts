import type { DbOrTx } from "../../../db/database.js";
import type { UserHardwareRow } from "../../../db/schema.js";

/** SQL for declared hardware; every function takes the database or a transaction first. */
export const hardwareRepository = {
  find: (db: DbOrTx, userId: string) =>
    db.selectFrom("user_hardware").selectAll().where("user_id", "=", userId).executeTakeFirst(),

  async save(db: DbOrTx, row: UserHardwareRow) {
    const { user_id: _key, ...rest } = row;
    await db
      .insertInto("user_hardware")
      .values(row)
      .onConflict((oc) => oc.column("user_id").doUpdateSet(rest))
      .execute();
  },
};
