import type { Db } from "../../../db/database.js";
import type { NamespacedObjects } from "../../../git/lfs/object-store.js";
import { unpackTerms } from "./xet-packing.js";

/** What one pass of the Xet collector freed. */
export type XetCollection = {
  /** Registered files forgotten: no repository links their LFS object any more. */
  files: number;
  /** Xorbs removed from storage. */
  xorbs: number;
  freedBytes: number;
};

export interface XetCollectorDeps {
  db: Db;
  xorbs: NamespacedObjects;
  clock: () => Date;
  /** How long an upload may wait for what makes it used (a xorb for its shard, a file for its commit). */
  graceSeconds: number;
}

/**
 * The Xet collector, run after each LFS collector pass (which unlinks the LFS
 * objects no history points to). Older than the grace period:
 * - a registered file whose LFS object no repository links is forgotten;
 * - a repository's link to a xorb that no file of that repository uses is
 *   dropped (the xorb stops counting in its storage and being offered to
 *   its readers for deduplication);
 * - a xorb no remaining file uses and no repository links is removed.
 * Anything younger (a xorb uploaded for a shard still to come, a file for a
 * commit still to come) is kept. A file registered while a pass runs makes
 * it remove no xorb: the next pass, which sees that file, does.
 */
export function createXetCollector({ db, xorbs, clock, graceSeconds }: XetCollectorDeps) {
  return async function collect(): Promise<XetCollection> {
    const started = clock().toISOString();
    const cutoff = new Date(clock().getTime() - graceSeconds * 1000).toISOString();
    const files = await db
      .selectFrom("xet_files")
      .select(["file_hash", "sha256", "terms", "created_at"])
      .execute();
    const links = await db
      .selectFrom("lfs_objects")
      .innerJoin("xet_files", "xet_files.sha256", "lfs_objects.oid")
      .select(["lfs_objects.oid", "lfs_objects.repository_id"])
      .execute();
    const reposOf = new Map<string, Set<string>>();
    for (const link of links) {
      const repos = reposOf.get(link.oid) ?? new Set<string>();
      repos.add(link.repository_id);
      reposOf.set(link.oid, repos);
    }

    // Files kept (linked somewhere, or young), and the repositories each xorb is used in.
    const forgotten: string[] = [];
    const usedBy = new Map<string, Set<string>>();
    for (const file of files) {
      const repos = reposOf.get(file.sha256);
      if (!repos && file.created_at < cutoff) {
        forgotten.push(file.file_hash);
        continue;
      }
      for (const { xorbHash } of unpackTerms(file.terms)) {
        const users = usedBy.get(xorbHash) ?? new Set<string>();
        for (const repo of repos ?? []) users.add(repo);
        usedBy.set(xorbHash, users);
      }
    }
    const xorbLinks = await db
      .selectFrom("xet_xorb_links")
      .select(["xorb_hash", "repository_id"])
      .where("created_at", "<", cutoff)
      .execute();
    const unused = xorbLinks.filter((link) => !usedBy.get(link.xorb_hash)?.has(link.repository_id));
    const candidates = await db
      .selectFrom("xet_xorbs")
      .select("hash")
      .where("created_at", "<", cutoff)
      .execute();
    const doomed = candidates.map((row) => row.hash).filter((hash) => !usedBy.has(hash));

    const removed = await db.transaction().execute(async (tx) => {
      for (const hash of forgotten) {
        await tx
          .deleteFrom("xet_files")
          .where("file_hash", "=", hash)
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom("lfs_objects").select("oid").whereRef("lfs_objects.oid", "=", "xet_files.sha256"),
              ),
            ),
          )
          .execute();
      }
      for (const link of unused) {
        await tx
          .deleteFrom("xet_xorb_links")
          .where("xorb_hash", "=", link.xorb_hash)
          .where("repository_id", "=", link.repository_id)
          .where("created_at", "<", cutoff)
          .execute();
      }
      // A file registered since the pass began may use any of them: leave them to the next pass.
      const registered = await tx
        .selectFrom("xet_files")
        .select("file_hash")
        .where("created_at", ">=", started)
        .executeTakeFirst();
      if (registered) return [];
      const gone: Array<{ hash: string; size: number }> = [];
      for (const hash of doomed) {
        // Still linked (uploaded again, or used by a repository): kept. Its links and dedup entries cascade.
        const row = await tx
          .deleteFrom("xet_xorbs")
          .where("hash", "=", hash)
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom("xet_xorb_links")
                  .select("xorb_hash")
                  .whereRef("xet_xorb_links.xorb_hash", "=", "xet_xorbs.hash"),
              ),
            ),
          )
          .returning(["hash", "size"])
          .executeTakeFirst();
        if (row) gone.push({ hash: row.hash, size: Number(row.size) });
      }
      return gone;
    });
    for (const { hash } of removed) await xorbs.remove(hash);
    return {
      files: forgotten.length,
      xorbs: removed.length,
      freedBytes: removed.reduce((sum, xorb) => sum + xorb.size, 0),
    };
  };
}

export type XetCollect = ReturnType<typeof createXetCollector>;
