import type { DbOrTx } from "../../../db/database.js";

/** SQL for what repositories store: their rows by owner, and their links to LFS objects. */
export const storageRepository = {
  /** The repositories of an account or organization, most recently changed first. */
  reposOfOwner: (db: DbOrTx, ownerId: string) =>
    db
      .selectFrom("repositories")
      .selectAll()
      .where("owner_id", "=", ownerId)
      .orderBy("updated_at", "desc")
      .orderBy("name")
      .execute(),

  /** The LFS objects linked to each of the repositories, with their sizes. */
  async lfsObjectsOf(
    db: DbOrTx,
    repositoryIds: string[],
  ): Promise<Array<{ repository_id: string; oid: string; size: number }>> {
    if (repositoryIds.length === 0) return [];
    const rows = await db
      .selectFrom("lfs_objects")
      .select(["repository_id", "oid", "size"])
      .where("repository_id", "in", repositoryIds)
      .execute();
    return rows.map((row) => ({ ...row, size: Number(row.size) }));
  },

  unlink: (db: DbOrTx, repositoryId: string, oids: string[]) =>
    oids.length === 0
      ? Promise.resolve()
      : db
          .deleteFrom("lfs_objects")
          .where("repository_id", "=", repositoryId)
          .where("oid", "in", oids)
          .execute()
          .then(() => undefined),

  /** Repositories holding LFS links made before `cutoff`: the ones a collection may free something in. */
  async reposWithLinksBefore(db: DbOrTx, cutoff: string): Promise<string[]> {
    const rows = await db
      .selectFrom("lfs_objects")
      .select("repository_id")
      .distinct()
      .where("created_at", "<", cutoff)
      .execute();
    return rows.map((row) => row.repository_id);
  },
};
