import { sql } from "kysely";
import type { DbOrTx } from "../../../db/database.js";

const count = (row: { n: number | string | bigint }) => Number(row.n);

/** SQL for deleting accounts; every function takes the database or a transaction first. */
export const accountDeletionRepository = {
  /** The repositories of these owners (users or organizations), in a stable order. */
  repositoriesOf: (db: DbOrTx, ownerIds: string[]) =>
    db
      .selectFrom("repositories")
      .selectAll()
      .where("owner_id", "in", ownerIds)
      .orderBy("owner_id")
      .orderBy("type")
      .orderBy("name")
      .execute(),

  /** The Git LFS objects linked to these repositories. */
  lfsOidsOf: async (db: DbOrTx, repositoryIds: string[]) =>
    repositoryIds.length === 0
      ? []
      : (
          await db
            .selectFrom("lfs_objects")
            .select("oid")
            .distinct()
            .where("repository_id", "in", repositoryIds)
            .execute()
        ).map((row) => row.oid),

  /** The account's tokens, sessions and keys by type. */
  async credentials(db: DbOrTx, userId: string) {
    const [tokens, sessions, keys] = await Promise.all([
      db
        .selectFrom("access_tokens")
        .select((eb) => eb.fn.countAll<number | string>().as("n"))
        .where("user_id", "=", userId)
        .executeTakeFirstOrThrow(),
      db
        .selectFrom("sessions")
        .select((eb) => eb.fn.countAll<number | string>().as("n"))
        .where("user_id", "=", userId)
        .executeTakeFirstOrThrow(),
      db
        .selectFrom("account_keys")
        .select(["type", (eb) => eb.fn.countAll<number | string>().as("n")])
        .where("user_id", "=", userId)
        .groupBy("type")
        .execute(),
    ]);
    const keysOf = (type: string) => count(keys.find((k) => k.type === type) ?? { n: 0 });
    return {
      tokens: count(tokens),
      sessions: count(sessions),
      sshKeys: keysOf("ssh"),
      gpgKeys: keysOf("gpg"),
    };
  },

  /** Rows of a table whose column holds the id (a table and column read from the schema's catalog). */
  rowsReferencing: async (db: DbOrTx, table: string, column: string, id: string) =>
    count(
      (
        await sql<{
          n: number | string;
        }>`select count(*) as n from ${sql.table(table)} where ${sql.ref(column)} = ${id}`.execute(db)
      ).rows[0] ?? { n: 0 },
    ),

  deleteOrganization: (db: DbOrTx, id: string) =>
    db.deleteFrom("organizations").where("id", "=", id).execute(),

  deleteUser: (db: DbOrTx, id: string) => db.deleteFrom("users").where("id", "=", id).execute(),
};
