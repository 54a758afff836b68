import type { DbOrTx } from "../../db/database.js";

/** SQL for the links between repositories and the LFS objects they hold. */
export const lfsObjectsRepository = {
  /** The sizes of those of `oids` linked to the repository. */
  async linked(db: DbOrTx, repositoryId: string, oids: string[]): Promise<Map<string, number>> {
    if (oids.length === 0) return new Map();
    const rows = await db
      .selectFrom("lfs_objects")
      .select(["oid", "size"])
      .where("repository_id", "=", repositoryId)
      .where("oid", "in", oids)
      .execute();
    // PostgreSQL returns bigint as a string.
    return new Map(rows.map((row) => [row.oid, Number(row.size)]));
  },

  link: (db: DbOrTx, repositoryId: string, oid: string, size: number, at: string) =>
    db
      .insertInto("lfs_objects")
      .values({ repository_id: repositoryId, oid, size, created_at: at })
      .onConflict((oc) => oc.columns(["repository_id", "oid"]).doNothing())
      .execute(),

  /** The LFS objects linked to a repository, oldest link first. */
  async ofRepository(db: DbOrTx, repositoryId: string) {
    const rows = await db
      .selectFrom("lfs_objects")
      .select(["oid", "size", "created_at"])
      .where("repository_id", "=", repositoryId)
      .orderBy("created_at")
      .orderBy("oid")
      .execute();
    return rows.map((row) => ({ ...row, size: Number(row.size) }));
  },

  /** Which of the objects some repository still holds. */
  async heldAnywhere(db: DbOrTx, oids: string[]): Promise<Set<string>> {
    if (oids.length === 0) return new Set();
    const rows = await db
      .selectFrom("lfs_objects")
      .select("oid")
      .distinct()
      .where("oid", "in", oids)
      .execute();
    return new Set(rows.map((row) => row.oid));
  },
};
