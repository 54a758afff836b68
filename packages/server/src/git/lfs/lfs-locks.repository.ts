import type { DbOrTx } from "../../db/database.js";
import type { LfsLockRow } from "../../db/schema.js";

/** SQL for Git LFS locks, with the handle of each lock's owner. */
export const lfsLocksRepository = {
  insert: (db: DbOrTx, row: LfsLockRow) => db.insertInto("lfs_locks").values(row).execute(),

  list: (
    db: DbOrTx,
    repositoryId: string,
    filter: { id?: string; path?: string },
    offset: number,
    limit: number,
  ) => {
    let query = db
      .selectFrom("lfs_locks")
      .innerJoin("users", "users.id", "lfs_locks.owner_id")
      .selectAll("lfs_locks")
      .select("users.handle as owner_handle")
      .where("lfs_locks.repository_id", "=", repositoryId);
    if (filter.id) query = query.where("lfs_locks.id", "=", filter.id);
    if (filter.path) query = query.where("lfs_locks.path", "=", filter.path);
    return query
      .orderBy("lfs_locks.created_at")
      .orderBy("lfs_locks.id")
      .offset(offset)
      .limit(limit)
      .execute();
  },

  delete: (db: DbOrTx, repositoryId: string, id: string) =>
    db.deleteFrom("lfs_locks").where("repository_id", "=", repositoryId).where("id", "=", id).execute(),
};

export type LfsLockWithOwner = LfsLockRow & { owner_handle: string };
