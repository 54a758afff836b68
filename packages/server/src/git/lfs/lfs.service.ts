import { randomBytes } from "node:crypto";
import type { Readable } from "node:stream";
import type { LfsBatchObject, LfsBatchRequest, LfsBatchResponse } from "@hub/api";
import { credentialKey, type ResolveCredentialKey } from "../../auth/authenticate.js";
import type { Authorize } from "../../auth/authorizer.js";
import type { Principal } from "../../auth/credential.js";
import type { Db } from "../../db/database.js";
import { repoResource, type FoundRepo, type RepoLookup } from "../../domain/repositories.js";
import type { XetUploadAction } from "../../domain/xet-offer.js";
import { HubError } from "../../errors.js";
import type { RangedBody } from "../../http/ranged-response.js";
import { lfsObjectsRepository } from "./lfs-objects.repository.js";
import type { MultipartStaging } from "./multipart-staging.js";
import { OID_PATTERN, ObjectMismatchError, storedBody, type ObjectStore } from "./object-store.js";
import {
  signTransferUrl,
  TRANSFER_URL_TTL_SECONDS,
  verifyTransferUrl,
  type TransferGrant,
} from "./transfer-url.js";

/** Objects over this size go in parts when the client offers the Hugging Face multipart transfer. */
export const MULTIPART_CHUNK_SIZE = 64 * 1024 * 1024;

const partCount = (size: number) => Math.ceil(size / MULTIPART_CHUNK_SIZE);
const partSize = (size: number, part: number) =>
  Math.min(MULTIPART_CHUNK_SIZE, size - (part - 1) * MULTIPART_CHUNK_SIZE);
const isValidObject = ({ oid, size }: { oid: string; size: number }) =>
  OID_PATTERN.test(oid) && Number.isSafeInteger(size) && size >= 0;

/** Signs one action's href: the endpoint, the object, and for a multipart upload its session and part. */
type SignHref = (
  endpoint: "objects" | "verify" | "parts" | "complete",
  oid: string,
  size: number,
  multipart?: { session: string; part?: number },
) => string;

/** Waits for a write of uploaded bytes; bytes that are not what was announced become a 422 saying what to redo. */
async function refuseMismatch<T>(write: Promise<T>, retry: string): Promise<T> {
  try {
    return await write;
  } catch (err) {
    if (err instanceof ObjectMismatchError)
      throw new HubError(422, "lfs_object_mismatch", `${err.message} ${retry}`, { cause: err });
    throw err;
  }
}

/** What an action href allows, once checked again at use: the grant it carries and the repository it is for. */
export interface Transfer {
  grant: TransferGrant;
  repo: FoundRepo;
}

export interface LfsServiceDeps {
  db: Db;
  repos: RepoLookup;
  store: ObjectStore;
  authorize: Authorize;
  resolveCredentialKey: ResolveCredentialKey;
  serverKey: Buffer;
  staging: MultipartStaging;
  clock: () => Date;
}

/**
 * Git LFS objects: the batch API's decisions and signed action hrefs
 * (https://github.com/git-lfs/git-lfs/blob/main/docs/api/batch.md), and the basic
 * (https://github.com/git-lfs/git-lfs/blob/main/docs/api/basic-transfers.md) and Hugging Face
 * multipart transfers those hrefs lead to. Objects are stored once by content but served
 * only through repositories they were uploaded and verified through.
 */
export function createLfsService(deps: LfsServiceDeps) {
  const { db, repos, store, authorize, resolveCredentialKey, serverKey, staging, clock } = deps;
  const now = () => Math.floor(clock().getTime() / 1000);

  /**
   * One object's answer: what the hub already holds, or the signed hrefs to transfer it; with `xet`, an
   * upload goes to the Xet CAS instead (the shard that registers the file makes it an object of the repository).
   */
  function answerFor(
    request: LfsBatchRequest,
    linked: Map<string, number>,
    href: SignHref,
    xet: XetUploadAction | null,
  ) {
    const multipart = request.transfers?.includes("multipart") ?? false;
    return async ({ oid, size }: { oid: string; size: number }): Promise<LfsBatchObject> => {
      if (!isValidObject({ oid, size })) {
        const message = "The oid must be 64 lower-case hex characters and the size a whole number of bytes.";
        return { oid, size, error: { code: 422, message } };
      }
      const linkedSize = linked.get(oid);
      if (request.operation === "download") {
        if (linkedSize === undefined)
          return { oid, size, error: { code: 404, message: "Object does not exist in this repository." } };
        // A store clients reach gives a presigned URL: the bytes go straight from it, and the access the batch
        // just checked is the grant, until the URL expires. Otherwise the hub's own href, checked again at use.
        const download = {
          href: store.signedDownloadUrl
            ? await store.signedDownloadUrl(oid, { expiresInSeconds: TRANSFER_URL_TTL_SECONDS })
            : href("objects", oid, linkedSize),
          expires_in: TRANSFER_URL_TTL_SECONDS,
        };
        return { oid, size: linkedSize, authenticated: true, actions: { download } };
      }
      if (linkedSize === size && (await store.size(oid)) === size) return { oid, size, authenticated: true };
      if (xet) return { oid, size, authenticated: true, actions: { upload: xet } };
      const verify = { href: href("verify", oid, size), expires_in: TRANSFER_URL_TTL_SECONDS };
      if (multipart && size > MULTIPART_CHUNK_SIZE) {
        const session = randomBytes(8).toString("hex");
        const header: Record<string, string> = { chunk_size: String(MULTIPART_CHUNK_SIZE) };
        for (let part = 1; part <= partCount(size); part++)
          header[String(part).padStart(5, "0")] = href("parts", oid, size, { session, part });
        const upload = {
          href: href("complete", oid, size, { session }),
          header,
          expires_in: TRANSFER_URL_TTL_SECONDS,
        };
        return { oid, size, authenticated: true, actions: { upload, verify } };
      }
      const upload = { href: href("objects", oid, size), expires_in: TRANSFER_URL_TTL_SECONDS };
      return { oid, size, authenticated: true, actions: { upload, verify } };
    };
  }

  /**
   * Answers a batch request for a repository the caller was admitted to for its operation;
   * the hrefs point back at `baseUrl`, the listener the client reached. `xet` is the upload
   * action of an upload the client and the repository take through Xet.
   */
  async function batch(
    principal: Principal | null,
    repo: FoundRepo,
    request: LfsBatchRequest,
    baseUrl: string,
    xet: XetUploadAction | null = null,
  ): Promise<LfsBatchResponse> {
    const oids = new Set(request.objects.filter(isValidObject).map((object) => object.oid));
    const linked = await lfsObjectsRepository.linked(db, repo.row.id, [...oids]);
    const expires = now() + TRANSFER_URL_TTL_SECONDS;
    const href: SignHref = (endpoint, oid, size, multipart) =>
      signTransferUrl(serverKey, `${baseUrl}/lfs/${endpoint}`, {
        ...(multipart?.part !== undefined ? { part: multipart.part } : {}),
        ...(multipart ? { session: multipart.session } : {}),
        operation: request.operation,
        repositoryId: repo.row.id,
        oid,
        size,
        expires,
        credential: credentialKey(principal),
      });
    const objects = await Promise.all(request.objects.map(answerFor(request, linked, href, xet)));
    if (xet) return { transfer: "xet", objects, hash_algo: "sha256" };
    const inParts = objects.some((object) => object.actions?.upload?.header !== undefined);
    return { transfer: inParts ? "multipart" : "basic", objects, hash_algo: "sha256" };
  }

  /**
   * An upload href is used by a writer, or by a caller the batch admitted to
   * upload for their own pull request (or for one a commit will open): one who
   * may still take part in the repository's discussions (`community:write`).
   * The batch decided the ref; this checks that the credential still counts.
   */
  async function authorizeUpload(principal: Principal | null, repo: FoundRepo): Promise<void> {
    try {
      await authorize(principal, "repo:write", repoResource(repo));
    } catch (err) {
      if (!principal) throw err;
      await authorize(principal, "community:write", repoResource(repo)).catch(() => {
        throw err;
      });
    }
  }

  /** The grant of a signed href, checked again now: revoked credentials and lost access stop it. */
  async function admitTransfer(
    oid: string,
    query: Record<string, unknown>,
    operation: "upload" | "download",
  ): Promise<Transfer> {
    const grant = OID_PATTERN.test(oid) ? verifyTransferUrl(serverKey, oid, query, now()) : null;
    if (!grant || grant.operation !== operation) {
      throw new HubError(
        403,
        "lfs_transfer_url_invalid",
        "This transfer URL is invalid or has expired; ask the batch API for a new one.",
      );
    }
    const principal = await resolveCredentialKey(grant.credential);
    if (principal === undefined) {
      throw new HubError(
        401,
        "invalid_token",
        "The credential this transfer URL was issued to is no longer valid.",
      );
    }
    const repo = await repos.findById(grant.repositoryId);
    if (!repo) throw new HubError(404, "repo_not_found", "The repository of this transfer no longer exists.");
    if (operation === "download") await authorize(principal, "repo:download", repoResource(repo));
    else await authorizeUpload(principal, repo);
    return { grant, repo };
  }

  /** The basic transfer's upload: the whole object in one body, linked to the repository once verified. */
  async function uploadObject({ grant, repo }: Transfer, body: Readable): Promise<void> {
    await refuseMismatch(store.write(grant.oid, grant.size, body), "Nothing was stored.");
    await lfsObjectsRepository.link(db, repo.row.id, grant.oid, grant.size, clock().toISOString());
  }

  /** One part of a multipart upload, staged until completion; answers its ETag. */
  async function uploadPart({ grant, repo }: Transfer, body: Readable): Promise<string> {
    const { part, session } = grant;
    if (part === undefined || session === undefined || part > partCount(grant.size))
      throw new HubError(403, "lfs_transfer_url_invalid", "This URL is not for a part of this upload.");
    return refuseMismatch(
      staging.writePart(repo.row.id, grant.oid, session, part, partSize(grant.size, part), body),
      "Upload the part again.",
    );
  }

  /** Assembles the staged parts, when every one is there with the ETag the client reports, into the object. */
  async function completeUpload(
    { grant, repo }: Transfer,
    parts: Array<{ partNumber: number; etag: string }>,
  ): Promise<void> {
    const { session } = grant;
    if (session === undefined)
      throw new HubError(403, "lfs_transfer_url_invalid", "This URL does not complete a multipart upload.");
    const count = partCount(grant.size);
    if (!(await staging.complete(repo.row.id, grant.oid, session, parts, count))) {
      throw new HubError(
        422,
        "lfs_parts_incomplete",
        "Some parts are missing or do not match their ETags; upload them again.",
      );
    }
    try {
      const whole = staging.read(repo.row.id, grant.oid, session, count);
      await refuseMismatch(store.write(grant.oid, grant.size, whole), "Nothing was stored.");
    } finally {
      await staging.discard(repo.row.id, grant.oid, session);
    }
    await lfsObjectsRepository.link(db, repo.row.id, grant.oid, grant.size, clock().toISOString());
  }

  /** The verify action: the object is linked to the repository, whole. */
  async function verifyObject({ grant, repo }: Transfer): Promise<void> {
    const size = (await lfsObjectsRepository.linked(db, repo.row.id, [grant.oid])).get(grant.oid);
    if (size !== grant.size)
      throw new HubError(
        404,
        "lfs_object_not_found",
        "The object was not uploaded, or not whole; upload it again.",
      );
  }

  /** The object a download grant names, as something to send whole or by range. */
  async function download({ grant, repo }: Transfer): Promise<RangedBody> {
    const size = (await lfsObjectsRepository.linked(db, repo.row.id, [grant.oid])).get(grant.oid);
    if (size === undefined || (await store.size(grant.oid)) !== size)
      throw new HubError(404, "lfs_object_not_found", "Object does not exist in this repository.");
    return storedBody(store, grant.oid, size);
  }

  return { batch, admitTransfer, uploadObject, uploadPart, completeUpload, verifyObject, download };
}

export type LfsService = ReturnType<typeof createLfsService>;
