import type { DbOrTx } from "../../../db/database.js";
import type { XetFileRow, XetXorbRow } from "../../../db/schema.js";

/** Rows inserted per statement, well under either dialect's limit on bound parameters. */
const BATCH = 500;

/** SQL for the Xet CAS: stored xorbs and the repositories they were uploaded for, registered files, dedup chunks. */
export const xetRepository = {
  /** Records a stored xorb; one already recorded is kept. */
  insertXorb: (db: DbOrTx, row: XetXorbRow) =>
    db
      .insertInto("xet_xorbs")
      .values(row)
      .onConflict((oc) => oc.column("hash").doNothing())
      .execute(),

  /** Notes that a xorb was uploaded for a repository. */
  linkXorb: (db: DbOrTx, xorbHash: string, repositoryId: string, at: string) =>
    db
      .insertInto("xet_xorb_links")
      .values({ xorb_hash: xorbHash, repository_id: repositoryId, created_at: at })
      .onConflict((oc) => oc.columns(["xorb_hash", "repository_id"]).doNothing())
      .execute(),

  /** The recorded xorbs among `hashes`. */
  async xorbs(db: DbOrTx, hashes: string[]): Promise<XetXorbRow[]> {
    const rows: XetXorbRow[] = [];
    for (let i = 0; i < hashes.length; i += BATCH) {
      const found = await db
        .selectFrom("xet_xorbs")
        .selectAll()
        .where("hash", "in", hashes.slice(i, i + BATCH))
        .execute();
      // PostgreSQL returns bigint as a string.
      rows.push(
        ...found.map((row) => ({ ...row, size: Number(row.size), unpacked_size: Number(row.unpacked_size) })),
      );
    }
    return rows;
  },

  /** The repositories each of the xorbs was uploaded for. */
  async linksOf(db: DbOrTx, hashes: string[]): Promise<Map<string, string[]>> {
    const links = new Map<string, string[]>();
    for (let i = 0; i < hashes.length; i += BATCH) {
      const rows = await db
        .selectFrom("xet_xorb_links")
        .select(["xorb_hash", "repository_id"])
        .where("xorb_hash", "in", hashes.slice(i, i + BATCH))
        .execute();
      for (const row of rows)
        links.set(row.xorb_hash, [...(links.get(row.xorb_hash) ?? []), row.repository_id]);
    }
    return links;
  },

  /** Indexes chunks for the global deduplication API; pairs already indexed are kept. */
  async indexChunks(db: DbOrTx, pairs: Array<{ chunk_hash: string; xorb_hash: string }>): Promise<void> {
    for (let i = 0; i < pairs.length; i += BATCH) {
      await db
        .insertInto("xet_dedup_chunks")
        .values(pairs.slice(i, i + BATCH))
        .onConflict((oc) => oc.columns(["chunk_hash", "xorb_hash"]).doNothing())
        .execute();
    }
  },

  /**
   * The xorbs an indexed chunk leads to, oldest first, at most `limit`: those holding it, and for the first
   * chunk of a registered file every xorb of that file.
   */
  async xorbsWithChunk(db: DbOrTx, chunkHash: string, limit: number): Promise<string[]> {
    const rows = await db
      .selectFrom("xet_dedup_chunks")
      .innerJoin("xet_xorbs", "xet_xorbs.hash", "xet_dedup_chunks.xorb_hash")
      .select("xet_dedup_chunks.xorb_hash")
      .where("xet_dedup_chunks.chunk_hash", "=", chunkHash)
      .orderBy("xet_xorbs.created_at")
      .orderBy("xet_xorbs.hash")
      .limit(limit)
      .execute();
    return rows.map((row) => row.xorb_hash);
  },

  /** Registers a file; one already registered (the same content) is kept. */
  insertFile: (db: DbOrTx, row: XetFileRow) =>
    db
      .insertInto("xet_files")
      .values(row)
      .onConflict((oc) => oc.column("file_hash").doNothing())
      .execute(),

  /** The Xet hash of each of the SHA-256s a registered file has (any one, when several chunkings registered it). */
  async fileHashesOf(db: DbOrTx, sha256s: string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    for (let i = 0; i < sha256s.length; i += BATCH) {
      const rows = await db
        .selectFrom("xet_files")
        .select(["sha256", "file_hash"])
        .where("sha256", "in", sha256s.slice(i, i + BATCH))
        .orderBy("file_hash")
        .execute();
      for (const row of rows) if (!found.has(row.sha256)) found.set(row.sha256, row.file_hash);
    }
    return found;
  },

  /** A registered file by its Xet hash. */
  async file(db: DbOrTx, fileHash: string): Promise<XetFileRow | undefined> {
    const row = await db
      .selectFrom("xet_files")
      .selectAll()
      .where("file_hash", "=", fileHash)
      .executeTakeFirst();
    return row && { ...row, size: Number(row.size) };
  },
};
