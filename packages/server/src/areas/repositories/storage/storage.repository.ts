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

  /** The bytes of LFS objects linked to each of the repositories. */
  async lfsBytes(db: DbOrTx, repositoryIds: string[]): Promise<Map<string, number>> {
    if (repositoryIds.length === 0) return new Map();
    const rows = await db
      .selectFrom("lfs_objects")
      .select((eb) => ["repository_id", eb.fn.sum<string | number>("size").as("bytes")])
      .where("repository_id", "in", repositoryIds)
      .groupBy("repository_id")
      .execute();
    return new Map(rows.map((row) => [row.repository_id, Number(row.bytes)]));
  },

  /**
   * The bytes of the Xet xorbs uploaded for each of the repositories. A file uploaded through Xet is kept twice,
   * as its xorbs and as the LFS object made from them (docs/xet.md), and both count; a xorb uploaded for
   * several repositories counts in each.
   */
  async xorbBytes(db: DbOrTx, repositoryIds: string[]): Promise<Map<string, number>> {
    if (repositoryIds.length === 0) return new Map();
    const rows = await db
      .selectFrom("xet_xorb_links")
      .innerJoin("xet_xorbs", "xet_xorbs.hash", "xet_xorb_links.xorb_hash")
      .select((eb) => [
        "xet_xorb_links.repository_id",
        eb.fn.sum<string | number>("xet_xorbs.size").as("bytes"),
      ])
      .where("xet_xorb_links.repository_id", "in", repositoryIds)
      .groupBy("xet_xorb_links.repository_id")
      .execute();
    return new Map(rows.map((row) => [row.repository_id, Number(row.bytes)]));
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
