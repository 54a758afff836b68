import type { DbOrTx } from "../../../db/database.js";
import type { HandleReservationRow } from "../../../db/schema.js";

/** SQL for renaming accounts; every function takes the database or a transaction first. */
export const usernameRepository = {
  /** Every repository the account owns, in a stable order. */
  repositoriesOf: (db: DbOrTx, userId: string) =>
    db
      .selectFrom("repositories")
      .selectAll()
      .where("owner_id", "=", userId)
      .where("owner_type", "=", "user")
      .orderBy("type")
      .orderBy("name")
      .execute(),

  rename: (db: DbOrTx, userId: string, handle: string) =>
    db.updateTable("users").set({ handle }).where("id", "=", userId).execute(),

  async reserve(db: DbOrTx, row: HandleReservationRow) {
    await db
      .insertInto("handle_reservations")
      .values(row)
      .onConflict((oc) =>
        oc.column("handle").doUpdateSet({
          user_id: row.user_id,
          reserved_until: row.reserved_until,
          created_at: row.created_at,
        }),
      )
      .execute();
  },

  /** The handles the account gave up whose reservation still runs. */
  reservationsOf: (db: DbOrTx, userId: string, now: string) =>
    db
      .selectFrom("handle_reservations")
      .select(["handle", "reserved_until"])
      .where("user_id", "=", userId)
      .where("reserved_until", ">", now)
      .orderBy("created_at", "desc")
      .execute(),

  /** The current handle of the account that gave up `handle`, while no one else has claimed it. */
  successorOf: async (db: DbOrTx, handle: string) =>
    (
      await db
        .selectFrom("handle_reservations")
        .innerJoin("users", "users.id", "handle_reservations.user_id")
        .select("users.handle")
        .where("handle_reservations.handle", "=", handle)
        .executeTakeFirst()
    )?.handle ?? null,

  /** Tokens (of any account) whose repository grants name a repository under the handle. */
  tokensGrantingUnder: (db: DbOrTx, handle: string) =>
    db
      .selectFrom("access_tokens")
      .select(["id", "repositories"])
      .where("repositories", "like", `%"${handle}/%`)
      .execute(),

  setTokenRepositories: (db: DbOrTx, tokenId: string, repositories: string) =>
    db.updateTable("access_tokens").set({ repositories }).where("id", "=", tokenId).execute(),
};
