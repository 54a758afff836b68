import type { DbOrTx } from "../../../db/database.js";
import { unpackTerms } from "./xet-packing.js";

/** What a repository stores through Xet: the bytes of its xorbs, and the LFS objects they stand for. */
export interface XetStorage {
  /** The distinct xorbs its Xet files use and the xorbs uploaded for it, each once. */
  xorbBytes: number;
  /** The LFS objects of the repository that are Xet files: their bytes are the xorbs'. */
  xetOids: ReadonlySet<string>;
}

/**
 * The Xet storage of each repository: a chunk two of its files share (in one xorb) counts once, and the LFS
 * copy the hub keeps of a Xet file (docs/xet.md) not at all. A xorb used by several repositories counts in each.
 */
export async function xetStorageOf(db: DbOrTx, repositoryIds: string[]): Promise<Map<string, XetStorage>> {
  const result = new Map<string, { xorbs: Set<string>; xetOids: Set<string> }>();
  if (repositoryIds.length === 0) return new Map();
  for (const id of repositoryIds) result.set(id, { xorbs: new Set(), xetOids: new Set() });
  const files = await db
    .selectFrom("lfs_objects")
    .innerJoin("xet_files", "xet_files.sha256", "lfs_objects.oid")
    .select(["lfs_objects.repository_id", "lfs_objects.oid", "xet_files.terms"])
    .where("lfs_objects.repository_id", "in", repositoryIds)
    .execute();
  for (const file of files) {
    const entry = result.get(file.repository_id);
    entry?.xetOids.add(file.oid);
    for (const term of unpackTerms(file.terms)) entry?.xorbs.add(term.xorbHash);
  }
  const links = await db
    .selectFrom("xet_xorb_links")
    .select(["repository_id", "xorb_hash"])
    .where("repository_id", "in", repositoryIds)
    .execute();
  for (const link of links) result.get(link.repository_id)?.xorbs.add(link.xorb_hash);
  const hashes = [...new Set([...result.values()].flatMap((entry) => [...entry.xorbs]))];
  const sizes = new Map<string, number>();
  for (let i = 0; i < hashes.length; i += 500) {
    const rows = await db
      .selectFrom("xet_xorbs")
      .select(["hash", "size"])
      .where("hash", "in", hashes.slice(i, i + 500))
      .execute();
    for (const row of rows) sizes.set(row.hash, Number(row.size));
  }
  return new Map(
    [...result].map(([id, entry]) => [
      id,
      {
        xorbBytes: [...entry.xorbs].reduce((sum, hash) => sum + (sizes.get(hash) ?? 0), 0),
        xetOids: entry.xetOids,
      },
    ]),
  );
}
