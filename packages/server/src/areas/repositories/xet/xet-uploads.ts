import { Readable } from "node:stream";
import type { Logger } from "pino";
import type { Db } from "../../../db/database.js";
import { HubError } from "../../../errors.js";
import { uploadHash } from "../../../git/lfs/hash-workers.js";
import { lfsObjectsRepository } from "../../../git/lfs/lfs-objects.repository.js";
import {
  ObjectMismatchError,
  type NamespacedObjects,
  type ObjectStore,
} from "../../../git/lfs/object-store.js";
import { removeUnheldObjects } from "../../../git/lfs/unheld-objects.js";
import { hashToHex, isGlobalDedupEligible, isHashHex } from "../../../xet/hashing.js";
import { missingXorbs, parseShard, verifyUploadedShard, type ShardFile } from "../../../xet/shard.js";
import { XetFormatError } from "../../../xet/xet-format-error.js";
import { verifyXorb } from "../../../xet/xorb-workers.js";
import { decodeChunkRecords, XORB_MAX_SERIALIZED_BYTES } from "../../../xet/xorb.js";
import type { CasCaller } from "./xet-access.js";
import { packChunks, packTerms } from "./xet-packing.js";
import type { UsableXorb, XorbCatalog } from "./xet-xorbs.js";
import { xetRepository } from "./xet.repository.js";

/** The largest xorb the CAS takes: 64 MiB of chunk data with its chunk headers (and a footer, if sent). */
export const XORB_BODY_LIMIT = XORB_MAX_SERIALIZED_BYTES;
/** The largest shard the CAS takes: hf_xet cuts its shards well under this. */
export const SHARD_BODY_LIMIT = 64 * 1024 * 1024;

/** A client's Xet object that does not follow the specification: 400 with what is wrong and where. */
function refuseFormat<T>(code: "xet_xorb_invalid" | "xet_shard_invalid", run: () => T): T {
  try {
    return run();
  } catch (err) {
    throw asFormatRefusal(code, err);
  }
}

function asFormatRefusal(code: "xet_xorb_invalid" | "xet_shard_invalid", err: unknown): unknown {
  return err instanceof XetFormatError ? new HubError(400, code, err.message, { cause: err }) : err;
}

/** All of a stream's bytes. */
async function readAll(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/** The bytes of a file, term by term: each term's chunk records read from its stored xorb and decoded. */
export async function* fileContent(
  terms: readonly { xorbHash: string; chunkStart: number; chunkEnd: number }[],
  xorbOf: (hash: string) => UsableXorb,
  store: NamespacedObjects,
): AsyncGenerator<Buffer> {
  for (const term of terms) {
    const { chunks } = xorbOf(term.xorbHash);
    const first = chunks[term.chunkStart];
    const last = chunks[term.chunkEnd - 1];
    if (!first || !last) throw new Error(`A term names chunks outside xorb ${term.xorbHash}.`);
    const records = await readAll(
      store.read(term.xorbHash, { start: first.offset, end: last.offset + last.recordLength - 1 }),
    );
    const decoded = decodeChunkRecords(records);
    if (decoded.length !== term.chunkEnd - term.chunkStart)
      throw new Error(`Stored xorb ${term.xorbHash} does not hold the chunks its table lists.`);
    for (const data of decoded) yield Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  }
}

export interface XetUploadsDeps {
  db: Db;
  store: ObjectStore;
  xorbs: NamespacedObjects;
  catalog: XorbCatalog;
  clock: () => Date;
  logger: Logger;
}

/**
 * The CAS's uploads (https://huggingface.co/docs/xet/upload-protocol): xorbs, verified against their hash
 * before anything is stored, and shards, verified against the stored xorbs the caller may use, whose files are
 * then materialised as ordinary Git LFS objects of the repository (rebuilt from the xorbs, their SHA-256 checked
 * on the way), so the commit that follows and every download path find them as they find any LFS upload.
 */
export function createXetUploads({ db, store, xorbs, catalog, clock, logger }: XetUploadsDeps) {
  /** Stores a xorb sent for the caller's repository; answers whether the CAS did not hold it yet. */
  async function uploadXorb(
    caller: CasCaller,
    hash: string,
    body: Buffer,
  ): Promise<{ was_inserted: boolean }> {
    if (!isHashHex(hash)) {
      throw new HubError(
        400,
        "xet_xorb_invalid",
        `"${hash}" is not a xorb hash: send the xorb to /v1/xorbs/default/<its hash, 64 lower-case hex digits>.`,
      );
    }
    // Verified on a worker thread when large; the body comes back with the answer.
    const { parsed, bytes } = await verifyXorb(body, hash).catch((err: unknown) => {
      throw asFormatRefusal("xet_xorb_invalid", err);
    });
    // A stored-form footer, when a client sends one, is the chunk table again: the records are the xorb.
    const records = bytes.subarray(0, parsed.recordsLength);
    const inserted = await xorbs.put(hash, records);
    const at = clock().toISOString();
    await db.transaction().execute(async (tx) => {
      await xetRepository.insertXorb(tx, {
        hash,
        size: records.length,
        chunk_count: parsed.chunks.length,
        unpacked_size: parsed.unpackedLength,
        chunks: packChunks(
          parsed.chunks.map((c) => ({
            hash: c.hash,
            recordLength: c.recordLength,
            length: c.uncompressedLength,
          })),
        ),
        created_at: at,
      });
      await xetRepository.linkXorb(tx, hash, caller.repo.row.id, at);
      await xetRepository.indexChunks(
        tx,
        parsed.chunks
          .filter((c) => isGlobalDedupEligible(c.hash))
          .map((c) => ({ chunk_hash: hashToHex(c.hash), xorb_hash: hash })),
      );
    });
    logger.info(
      { repository: caller.repo.fullName, xorb: hash, bytes: bytes.length, inserted },
      "xet xorb received",
    );
    return { was_inserted: inserted };
  }

  /**
   * Rebuilds a file from its terms and stores it as the LFS object its SHA-256 names (or, when the store holds
   * that object already, only checks the content against it): a file whose bytes hash to anything but the SHA-256
   * the shard claims is refused. Answers whether this call wrote the object.
   */
  async function materialise(
    file: ShardFile,
    index: number,
    usable: Map<string, UsableXorb>,
  ): Promise<boolean> {
    const sha256 = file.sha256 ?? "";
    const size = file.terms.reduce((sum, term) => sum + term.unpackedLength, 0);
    const terms = file.terms.map((term) => ({ ...term, xorbHash: hashToHex(term.xorbHash) }));
    const content = () => fileContent(terms, (hash) => usable.get(hash) as UsableXorb, xorbs);
    /** The SHA-256 of the rebuilt content, hashed on a worker thread when large. */
    const rebuiltSha256 = async () => {
      const hash = uploadHash(size);
      try {
        for await (const data of content()) await hash.update(data);
        return await hash.digest();
      } finally {
        hash.close();
      }
    };
    const mismatch = (actual: string) =>
      new HubError(
        400,
        "xet_shard_invalid",
        `file ${index} (${hashToHex(file.fileHash)}): its content, rebuilt from its terms, has SHA-256 ${actual}, not ${sha256} as the shard says; nothing was recorded.`,
      );
    if ((await store.size(sha256)) === size) {
      const actual = await rebuiltSha256();
      if (actual !== sha256) throw mismatch(actual);
      return false;
    }
    try {
      // The store hashes what it writes (off the event loop when large) and refuses a mismatch.
      await store.write(sha256, size, Readable.from(content()));
      return true;
    } catch (err) {
      // Rare: the content is rebuilt once more, to say what it hashes to.
      if (err instanceof ObjectMismatchError) throw mismatch(await rebuiltSha256());
      throw err;
    }
  }

  /** Registers the files of a shard for the caller's repository: verified, materialised, then recorded. */
  async function uploadShard(caller: CasCaller, body: Buffer): Promise<{ result: 0 | 1 }> {
    const shard = refuseFormat("xet_shard_invalid", () => parseShard(body));
    const named = [
      ...shard.xorbs.map((xorb) => hashToHex(xorb.hash)),
      ...shard.files.flatMap((file) => file.terms.map((term) => hashToHex(term.xorbHash))),
    ];
    const usable = await catalog.usable(caller, named);
    const lookup = (hash: string) => usable.get(hash);
    const missing = missingXorbs(shard, lookup);
    if (missing.length > 0) {
      throw new HubError(
        400,
        "xet_shard_invalid",
        `the shard names ${missing.length} xorb(s) this hub does not hold, or that were uploaded for repositories you may not read: ${missing.join(", ")}; upload them first. Nothing was recorded.`,
      );
    }
    refuseFormat("xet_shard_invalid", () => verifyUploadedShard(shard, lookup));
    const written: Array<{ oid: string; size: number }> = [];
    try {
      for (const [index, file] of shard.files.entries()) {
        const size = file.terms.reduce((sum, term) => sum + term.unpackedLength, 0);
        if (await materialise(file, index, usable)) written.push({ oid: file.sha256 ?? "", size });
      }
      const at = clock().toISOString();
      await db.transaction().execute(async (tx) => {
        for (const file of shard.files) {
          const fileHash = hashToHex(file.fileHash);
          const size = file.terms.reduce((sum, term) => sum + term.unpackedLength, 0);
          await xetRepository.insertFile(tx, {
            file_hash: fileHash,
            sha256: file.sha256 ?? "",
            size,
            terms: packTerms(file.terms),
            created_at: at,
          });
          // A file's first chunk leads to every xorb of the file: a client that asks about it (the JavaScript
          // client asks about nothing else) learns the whole file, and sends only what changed.
          const [first] = file.terms;
          const firstChunk = first && usable.get(hashToHex(first.xorbHash))?.chunks[first.chunkStart];
          if (firstChunk) {
            const chunk_hash = hashToHex(firstChunk.hash);
            const xorbsOfFile = new Set(file.terms.map((term) => hashToHex(term.xorbHash)));
            await xetRepository.indexChunks(
              tx,
              [...xorbsOfFile].map((xorb_hash) => ({ chunk_hash, xorb_hash })),
            );
          }
          await lfsObjectsRepository.link(tx, caller.repo.row.id, file.sha256 ?? "", size, at);
        }
      });
    } catch (err) {
      // Objects this upload wrote that no repository links are nobody's: they leave with the failure.
      await removeUnheldObjects(db, store, written);
      throw err;
    }
    logger.info(
      { repository: caller.repo.fullName, files: shard.files.length, bytes: body.length },
      "xet shard registered",
    );
    return { result: 1 };
  }

  return { uploadXorb, uploadShard };
}

export type XetUploads = ReturnType<typeof createXetUploads>;
