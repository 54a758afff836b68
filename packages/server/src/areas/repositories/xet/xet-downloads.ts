import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Db } from "../../../db/database.js";
import { HubError } from "../../../errors.js";
import { lfsObjectsRepository } from "../../../git/lfs/lfs-objects.repository.js";
import { storedBody, type NamespacedObjects } from "../../../git/lfs/object-store.js";
import type { RangedBody } from "../../../http/ranged-response.js";
import { hashFromHex, isGlobalDedupEligible, isHashHex } from "../../../xet/hashing.js";
import {
  planReconstruction,
  reconstructionResponse,
  resolveRangeHeader,
  type FileByteRange,
  type QueryReconstructionResponse,
  type ReconstructionFetch,
} from "../../../xet/reconstruction.js";
import {
  CHUNK_FLAG_GLOBAL_DEDUP,
  protectChunkHashes,
  serializeShard,
  type ShardXorb,
} from "../../../xet/shard.js";
import { XetFormatError } from "../../../xet/xet-format-error.js";
import type { CasCaller } from "./xet-access.js";
import { unpackChunks, unpackTerms } from "./xet-packing.js";
import type { XorbCatalog } from "./xet-xorbs.js";
import { xetRepository } from "./xet.repository.js";

/** How long a reconstruction's fetch URL works: hf_xet asks for the reconstruction again when one has expired. */
export const FETCH_URL_TTL_SECONDS = 600;
/** How long a client may deduplicate against a global deduplication answer. */
const DEDUP_KEY_TTL_SECONDS = 86_400;
/** The most xorbs one global deduplication answer describes. */
const DEDUP_MAX_XORBS = 8;

/** What a fetch URL grants: bytes `[start, end]` (inclusive) of one stored xorb, until it expires. */
interface FetchGrant {
  xorbHash: string;
  start: number;
  end: number;
  expires: number;
}

function fetchSignature(key: Buffer, grant: FetchGrant): Buffer {
  return createHmac("sha256", key)
    .update(`xet-fetch\n${grant.xorbHash}\n${grant.start}\n${grant.end}\n${grant.expires}`)
    .digest();
}

const invalidFetchUrl = (why: string) =>
  new HubError(403, "xet_fetch_url_invalid", `${why}; ask /v1/reconstructions for the file again.`);

export interface XetDownloadsDeps {
  db: Db;
  xorbs: NamespacedObjects;
  catalog: XorbCatalog;
  serverKey: Buffer;
  clock: () => Date;
  casUrl: string;
}

/**
 * The CAS's reads (https://huggingface.co/docs/xet/download-protocol and .../deduplication): the global
 * deduplication answer for a chunk, which describes only xorbs the caller may read; a file's reconstruction, for
 * files the token's repository holds, with signed short-lived URLs to the byte ranges of the xorbs it needs; and
 * those byte ranges.
 */
export function createXetDownloads({ db, xorbs, catalog, serverKey, clock, casUrl }: XetDownloadsDeps) {
  const now = () => Math.floor(clock().getTime() / 1000);

  /** A stored-form shard describing the usable xorbs that hold the chunk, chunk hashes keyed; null when none. */
  async function dedupShard(caller: CasCaller, chunkHash: string): Promise<Uint8Array | null> {
    if (!isHashHex(chunkHash)) return null;
    // Xorbs of repositories the caller may not read are skipped, so a few more are looked at than answered.
    const holding = await xetRepository.xorbsWithChunk(db, chunkHash, DEDUP_MAX_XORBS * 4);
    const usable = [...(await catalog.usable(caller, holding)).values()].slice(0, DEDUP_MAX_XORBS);
    if (usable.length === 0) return null;
    const described: ShardXorb[] = usable.map(({ row, chunks }) => ({
      hash: hashFromHex(row.hash),
      flags: 0,
      unpackedLength: row.unpacked_size,
      serializedLength: row.size,
      chunks: chunks.map((chunk) => ({
        hash: chunk.hash,
        unpackedOffset: chunk.unpackedOffset,
        unpackedLength: chunk.length,
        flags: isGlobalDedupEligible(chunk.hash) ? CHUNK_FLAG_GLOBAL_DEDUP : 0,
      })),
    }));
    const key = randomBytes(32);
    return serializeShard(
      { files: [], xorbs: protectChunkHashes(described, key) },
      { footer: { chunkHashKey: key, keyExpiry: BigInt(now() + DEDUP_KEY_TTL_SECONDS) } },
    );
  }

  /** A URL for bytes `[byteStart, byteEnd]` of a xorb, signed for a few minutes. */
  function fetchUrl(fetch: ReconstructionFetch, expires: number): string {
    const grant = { xorbHash: fetch.xorbHash, start: fetch.byteStart, end: fetch.byteEnd, expires };
    const query = new URLSearchParams({
      range: `${grant.start}-${grant.end}`,
      exp: String(expires),
      sig: fetchSignature(serverKey, grant).toString("base64url"),
    });
    return `${casUrl}/fetch/${fetch.xorbHash}?${query.toString()}`;
  }

  /**
   * The reconstruction of a file the token's repository holds (its LFS object is linked there), or of the byte
   * range the `Range` header asks for. Any other file, known or not, is a 404.
   */
  async function reconstruction(
    caller: CasCaller,
    fileHash: string,
    rangeHeader: string | undefined,
  ): Promise<QueryReconstructionResponse> {
    const file = isHashHex(fileHash) ? await xetRepository.file(db, fileHash) : undefined;
    const linked =
      file && (await lfsObjectsRepository.linked(db, caller.repo.row.id, [file.sha256])).get(file.sha256);
    if (!file || linked !== file.size) {
      throw new HubError(
        404,
        "not_found",
        `File ${fileHash.slice(0, 64)} is not stored for ${caller.repo.fullName}.`,
      );
    }
    let range: FileByteRange | undefined;
    try {
      range = resolveRangeHeader(rangeHeader, file.size);
    } catch (err) {
      if (!(err instanceof XetFormatError)) throw err;
      throw new HubError(416, "xet_range_not_satisfiable", err.message, {
        headers: { "content-range": `bytes */${file.size}` },
      });
    }
    const terms = unpackTerms(file.terms);
    // The file is the repository's, so every xorb its terms name serves it, whoever uploaded that xorb.
    const rows = await xetRepository.xorbs(db, [...new Set(terms.map((term) => term.xorbHash))]);
    const layouts = new Map(rows.map((row) => [row.hash, { chunks: unpackChunks(row.chunks) }]));
    const plan = planReconstruction(terms, (hash) => layouts.get(hash), range);
    const expires = now() + FETCH_URL_TTL_SECONDS;
    return reconstructionResponse(plan, (fetch) => fetchUrl(fetch, expires));
  }

  /**
   * The bytes a signed fetch URL grants, as a body `sendRanged` serves; the `Range` the client sends must lie in
   * the signed window (without one, the window is sent).
   */
  async function fetchRange(
    xorbHash: string,
    query: Record<string, unknown>,
    rangeHeader: string | undefined,
  ): Promise<{ body: RangedBody; range: string }> {
    const { range, exp, sig } = query;
    const window = typeof range === "string" ? /^(\d+)-(\d+)$/.exec(range) : null;
    if (!isHashHex(xorbHash) || !window || typeof exp !== "string" || typeof sig !== "string")
      throw invalidFetchUrl("This fetch URL is malformed");
    const grant = { xorbHash, start: Number(window[1]), end: Number(window[2]), expires: Number(exp) };
    const expected = fetchSignature(serverKey, grant);
    const presented = Buffer.from(sig, "base64url");
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected))
      throw invalidFetchUrl("This fetch URL's signature does not match");
    if (grant.expires < now()) throw invalidFetchUrl("This fetch URL has expired");
    const asked = rangeHeader === undefined ? null : /^bytes=(\d+)-(\d+)$/.exec(rangeHeader.trim());
    if (rangeHeader !== undefined && !asked)
      throw invalidFetchUrl(`This URL serves one range, bytes=${range}`);
    const start = asked ? Number(asked[1]) : grant.start;
    const end = asked ? Number(asked[2]) : grant.end;
    if (start < grant.start || end > grant.end || start > end)
      throw invalidFetchUrl(`This URL grants bytes ${grant.start}-${grant.end} only`);
    const size = await xorbs.size(xorbHash);
    if (size === null || end >= size)
      throw new HubError(404, "not_found", `Xorb ${xorbHash} is not stored, or not whole.`);
    return { body: storedBody(xorbs, xorbHash, size), range: `bytes=${start}-${end}` };
  }

  return { dedupShard, reconstruction, fetchRange };
}

export type XetDownloads = ReturnType<typeof createXetDownloads>;
