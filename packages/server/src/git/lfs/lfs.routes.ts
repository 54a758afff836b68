import { randomBytes, randomUUID } from "node:crypto";
import type { Readable } from "node:stream";
import { REPO_TYPES, type LfsBatchResponse, type RepoType } from "@hub/api";
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { credentialKey, type Authenticate, type ResolveCredentialKey } from "../../auth/authenticate.js";
import type { Authorize } from "../../auth/authorizer.js";
import type { Db } from "../../db/database.js";
import { HubError } from "../../errors.js";
import { URL_PREFIX, repoResource, type RepoLookup } from "../../domain/repositories.js";
import { lfsLocksRepository, type LfsLockWithOwner } from "./lfs-locks.repository.js";
import { lfsObjectsRepository } from "./lfs-objects.repository.js";
import { repoGate, withoutGitSuffix } from "../repo-gate.js";
import type { MultipartStaging } from "./multipart-staging.js";
import { OID_PATTERN, ObjectMismatchError, type ObjectStore } from "./object-store.js";
import { signTransferUrl, verifyTransferUrl } from "./transfer-url.js";
import { sendRanged } from "../../http/ranged-response.js";
import { installJsonBodyParser } from "../../http/json-body.js";

const LFS_JSON = "application/vnd.git-lfs+json";
/** How long an action href stays valid; long enough to start a large transfer, short enough to limit a leaked URL. */
const HREF_TTL_SECONDS = 3600;
const MAX_OBJECTS_PER_BATCH = 1000;
/** Objects over this size go in parts when the client offers the Hugging Face multipart transfer. */
export const MULTIPART_CHUNK_SIZE = 64 * 1024 * 1024;

interface BatchObject {
  oid?: unknown;
  size?: unknown;
}
interface BatchRequest {
  operation?: unknown;
  transfers?: unknown;
  objects?: unknown;
}

export interface LfsDeps {
  db: Db;
  repos: RepoLookup;
  store: ObjectStore;
  authenticate: Authenticate;
  authorize: Authorize;
  resolveCredentialKey: ResolveCredentialKey;
  serverKey: Buffer;
  staging: MultipartStaging;
  /** The base URL of this listener as clients see it; action hrefs point back at it. */
  baseUrl: string;
  clock: () => Date;
}

/**
 * Git LFS: the batch API (https://github.com/git-lfs/git-lfs/blob/main/docs/api/batch.md)
 * under each repository's `info/lfs`, and the basic transfer's object URLs.
 * Objects are stored once by content but served only through repositories
 * they were uploaded and verified through.
 */
export function lfsRoutes(deps: LfsDeps): FastifyPluginAsync {
  const {
    db,
    repos,
    store,
    authenticate,
    authorize,
    resolveCredentialKey,
    serverKey,
    staging,
    baseUrl,
    clock,
  } = deps;
  const gate = repoGate(repos, authorize);
  const partCount = (size: number) => Math.ceil(size / MULTIPART_CHUNK_SIZE);
  const partSize = (size: number, part: number) =>
    Math.min(MULTIPART_CHUNK_SIZE, size - (part - 1) * MULTIPART_CHUNK_SIZE);
  const now = () => Math.floor(clock().getTime() / 1000);

  /** LFS errors are JSON `{message}`; a 401 names the Basic scheme so git asks for credentials. */
  function refuse(reply: FastifyReply, status: number, message: string): FastifyReply {
    const headers: Record<string, string> = { "content-type": LFS_JSON };
    if (status === 401) headers["lfs-authenticate"] = 'Basic realm="Hub"';
    return reply.status(status).headers(headers).send({ message, request_id: reply.request.id });
  }

  function refuseHubError(reply: FastifyReply, err: unknown): FastifyReply {
    if (!(err instanceof HubError)) throw err;
    // A moved or renamed repository: git-lfs follows only an absolute Location (a relative one it loops on).
    const location = err.headers.location;
    if (location) reply.header("location", location.startsWith("/") ? `${baseUrl}${location}` : location);
    return refuse(reply, err.status, err.message);
  }

  /** The caller and the repository a request names, if it may do `action` there; otherwise the refusal is sent. */
  async function admitRepo(
    request: FastifyRequest,
    reply: FastifyReply,
    type: RepoType,
    action: "repo:read" | "repo:download" | "repo:write",
  ) {
    const { owner, repo } = request.params as { owner: string; repo: string };
    try {
      const principal = await authenticate(request.headers);
      return {
        principal,
        repo: await gate(principal, { type, owner, name: withoutGitSuffix(repo) }, action, request.url),
      };
    } catch (err) {
      refuseHubError(reply, err);
      return null;
    }
  }

  async function batch(request: FastifyRequest, reply: FastifyReply, type: RepoType) {
    const body = (request.body ?? {}) as BatchRequest;
    if (body.operation !== "upload" && body.operation !== "download") {
      return refuse(reply, 422, 'The batch "operation" must be "upload" or "download".');
    }
    const multipart = Array.isArray(body.transfers) && body.transfers.includes("multipart");
    if (
      Array.isArray(body.transfers) &&
      body.transfers.length > 0 &&
      !body.transfers.includes("basic") &&
      !multipart
    ) {
      return refuse(reply, 422, 'This hub offers the "basic" transfer only.');
    }
    if (!Array.isArray(body.objects) || body.objects.length > MAX_OBJECTS_PER_BATCH) {
      return refuse(reply, 422, `"objects" must be a list of at most ${MAX_OBJECTS_PER_BATCH} objects.`);
    }
    const operation = body.operation;
    const admitted = await admitRepo(
      request,
      reply,
      type,
      operation === "upload" ? "repo:write" : "repo:download",
    );
    if (!admitted) return reply;
    const { principal, repo: found } = admitted;

    const objects = (body.objects as BatchObject[]).map((object) => ({
      oid: typeof object?.oid === "string" ? object.oid : "",
      size: typeof object?.size === "number" ? object.size : -1,
    }));
    const valid = objects.filter(
      (o) => OID_PATTERN.test(o.oid) && Number.isSafeInteger(o.size) && o.size >= 0,
    );
    const linked = await lfsObjectsRepository.linked(db, found.row.id, [...new Set(valid.map((o) => o.oid))]);
    const expires = now() + HREF_TTL_SECONDS;
    const href = (
      endpoint: "objects" | "verify" | "parts" | "complete",
      oid: string,
      size: number,
      op: "upload" | "download",
      multipart?: { session: string; part?: number },
    ) =>
      signTransferUrl(serverKey, `${baseUrl}/lfs/${endpoint}`, {
        ...(multipart?.part !== undefined ? { part: multipart.part } : {}),
        ...(multipart ? { session: multipart.session } : {}),
        operation: op,
        repositoryId: found.row.id,
        oid,
        size,
        expires,
        credential: credentialKey(principal),
      });

    let inParts = false;
    const answers = await Promise.all(
      objects.map(async ({ oid, size }) => {
        if (!OID_PATTERN.test(oid) || !Number.isSafeInteger(size) || size < 0) {
          return {
            oid,
            size,
            error: {
              code: 422,
              message: "The oid must be 64 lower-case hex characters and the size a whole number of bytes.",
            },
          };
        }
        const linkedSize = linked.get(oid);
        if (operation === "download") {
          if (linkedSize === undefined)
            return { oid, size, error: { code: 404, message: "Object does not exist in this repository." } };
          return {
            oid,
            size: linkedSize,
            authenticated: true,
            actions: {
              download: { href: href("objects", oid, linkedSize, "download"), expires_in: HREF_TTL_SECONDS },
            },
          };
        }
        if (linkedSize === size && (await store.size(oid)) === size)
          return { oid, size, authenticated: true };
        if (multipart && size > MULTIPART_CHUNK_SIZE) {
          inParts = true;
          const session = randomBytes(8).toString("hex");
          const header: Record<string, string> = { chunk_size: String(MULTIPART_CHUNK_SIZE) };
          for (let part = 1; part <= partCount(size); part++)
            header[String(part).padStart(5, "0")] = href("parts", oid, size, "upload", { session, part });
          return {
            oid,
            size,
            authenticated: true,
            actions: {
              upload: {
                href: href("complete", oid, size, "upload", { session }),
                header,
                expires_in: HREF_TTL_SECONDS,
              },
              verify: { href: href("verify", oid, size, "upload"), expires_in: HREF_TTL_SECONDS },
            },
          };
        }
        return {
          oid,
          size,
          authenticated: true,
          actions: {
            upload: { href: href("objects", oid, size, "upload"), expires_in: HREF_TTL_SECONDS },
            verify: { href: href("verify", oid, size, "upload"), expires_in: HREF_TTL_SECONDS },
          },
        };
      }),
    );
    return reply.header("content-type", LFS_JSON).send({
      transfer: inParts ? "multipart" : "basic",
      objects: answers,
      hash_algo: "sha256",
    } satisfies LfsBatchResponse);
  }

  /** A lock as the git-lfs locking API shows it (https://github.com/git-lfs/git-lfs/blob/main/docs/api/locking.md). */
  const presentLock = (lock: LfsLockWithOwner) => ({
    id: lock.id,
    path: lock.path,
    locked_at: lock.created_at,
    owner: { name: lock.owner_handle },
  });
  const pageOf = (body: { cursor?: unknown; limit?: unknown }) => ({
    offset: typeof body.cursor === "string" && /^\d+$/.test(body.cursor) ? Number(body.cursor) : 0,
    limit:
      typeof body.limit === "number" || typeof body.limit === "string"
        ? Math.min(Math.max(Number(body.limit) || 100, 1), 1000)
        : 100,
  });
  const sendLfs = (reply: FastifyReply, status: number, body: unknown) =>
    reply.status(status).header("content-type", LFS_JSON).send(body);

  async function createLock(request: FastifyRequest, reply: FastifyReply, type: RepoType) {
    const admitted = await admitRepo(request, reply, type, "repo:write");
    if (!admitted?.principal) return reply;
    const path = (request.body as { path?: unknown } | undefined)?.path;
    if (typeof path !== "string" || path.length === 0 || path.length > 1024 || path.includes("\0")) {
      return refuse(reply, 422, "A lock needs the path of a file.");
    }
    const [existing] = await lfsLocksRepository.list(db, admitted.repo.row.id, { path }, 0, 1);
    if (existing)
      return sendLfs(reply, 409, {
        lock: presentLock(existing),
        message: `${path} is already locked by ${existing.owner_handle}.`,
      });
    const row = {
      id: randomUUID(),
      repository_id: admitted.repo.row.id,
      path,
      owner_id: admitted.principal.userId,
      created_at: clock().toISOString(),
    };
    try {
      await lfsLocksRepository.insert(db, row);
    } catch {
      const [winner] = await lfsLocksRepository.list(db, admitted.repo.row.id, { path }, 0, 1);
      if (winner)
        return sendLfs(reply, 409, {
          lock: presentLock(winner),
          message: `${path} is already locked by ${winner.owner_handle}.`,
        });
      throw new Error(`Could not lock ${path}.`);
    }
    return sendLfs(reply, 201, { lock: presentLock({ ...row, owner_handle: admitted.principal.handle }) });
  }

  async function listLocks(request: FastifyRequest, reply: FastifyReply, type: RepoType) {
    const admitted = await admitRepo(request, reply, type, "repo:read");
    if (!admitted) return reply;
    const query = request.query as { path?: string; id?: string; cursor?: string; limit?: string };
    const { offset, limit } = pageOf(query);
    const rows = await lfsLocksRepository.list(
      db,
      admitted.repo.row.id,
      { path: query.path, id: query.id },
      offset,
      limit + 1,
    );
    const next = rows.length > limit ? { next_cursor: String(offset + limit) } : {};
    return sendLfs(reply, 200, { locks: rows.slice(0, limit).map(presentLock), ...next });
  }

  async function verifyLocks(request: FastifyRequest, reply: FastifyReply, type: RepoType) {
    const admitted = await admitRepo(request, reply, type, "repo:write");
    if (!admitted?.principal) return reply;
    const { offset, limit } = pageOf((request.body ?? {}) as { cursor?: unknown; limit?: unknown });
    const rows = await lfsLocksRepository.list(db, admitted.repo.row.id, {}, offset, limit + 1);
    const page = rows.slice(0, limit);
    const userId = admitted.principal.userId;
    return sendLfs(reply, 200, {
      ours: page.filter((lock) => lock.owner_id === userId).map(presentLock),
      theirs: page.filter((lock) => lock.owner_id !== userId).map(presentLock),
      ...(rows.length > limit ? { next_cursor: String(offset + limit) } : {}),
    });
  }

  async function unlock(request: FastifyRequest, reply: FastifyReply, type: RepoType) {
    const admitted = await admitRepo(request, reply, type, "repo:write");
    if (!admitted?.principal) return reply;
    const { id } = request.params as { id: string };
    const [lock] = await lfsLocksRepository.list(db, admitted.repo.row.id, { id }, 0, 1);
    if (!lock) return refuse(reply, 404, "No such lock in this repository.");
    if (lock.owner_id !== admitted.principal.userId) {
      const force = (request.body as { force?: unknown } | undefined)?.force === true;
      if (!force)
        return refuse(
          reply,
          403,
          `${lock.path} is locked by ${lock.owner_handle}; unlock with --force if you administer the repository.`,
        );
      try {
        // Breaking someone else's lock is an administrator's act, like deleting the repository.
        await authorize(admitted.principal, "repo:delete", repoResource(admitted.repo));
      } catch (err) {
        return refuseHubError(reply, err);
      }
    }
    await lfsLocksRepository.delete(db, admitted.repo.row.id, lock.id);
    return sendLfs(reply, 200, { lock: presentLock(lock) });
  }

  /** The repository and principal a signed URL stands for, re-checked now: revoked credentials and lost access stop it. */
  async function admitTransfer(
    request: FastifyRequest,
    reply: FastifyReply,
    operation: "upload" | "download",
  ) {
    const { oid } = request.params as { oid: string };
    const grant = OID_PATTERN.test(oid)
      ? verifyTransferUrl(serverKey, oid, request.query as Record<string, unknown>, now())
      : null;
    if (!grant || grant.operation !== operation) {
      refuse(reply, 403, "This transfer URL is invalid or has expired; ask the batch API for a new one.");
      return null;
    }
    const principal = await resolveCredentialKey(grant.credential);
    if (principal === undefined) {
      refuse(reply, 401, "The credential this transfer URL was issued to is no longer valid.");
      return null;
    }
    const found = await repos.findById(grant.repositoryId);
    if (!found) {
      refuse(reply, 404, "The repository of this transfer no longer exists.");
      return null;
    }
    try {
      await authorize(
        principal,
        operation === "upload" ? "repo:write" : "repo:download",
        repoResource(found),
      );
    } catch (err) {
      refuseHubError(reply, err);
      return null;
    }
    return { grant, repo: found };
  }

  return async (app) => {
    installJsonBodyParser(app, [LFS_JSON]);
    // Object bodies stream straight to storage, whatever content type the client declares (or none).
    app.addContentTypeParser("*", (_request, payload, done) => done(null, payload));
    const config = { access: "public" as const };
    // Object transfers are granted by a batch request, which is metered; metering each object again
    // would stop clones of repositories with many files.
    const transfer = { access: "public" as const, unmetered: true };

    for (const type of REPO_TYPES) {
      const locks = `/${URL_PREFIX[type]}:owner/:repo/info/lfs/locks`;
      app.post(locks, { schema: { hide: true }, config }, (request, reply) =>
        createLock(request, reply, type),
      );
      app.get(locks, { schema: { hide: true }, config }, (request, reply) => listLocks(request, reply, type));
      app.post(`${locks}/verify`, { schema: { hide: true }, config }, (request, reply) =>
        verifyLocks(request, reply, type),
      );
      app.post(`${locks}/:id/unlock`, { schema: { hide: true }, config }, (request, reply) =>
        unlock(request, reply, type),
      );
      app.post(
        `/${URL_PREFIX[type]}:owner/:repo/info/lfs/objects/batch`,
        { schema: { hide: true }, config },
        (request, reply) => batch(request, reply, type),
      );
    }

    app.put("/lfs/objects/:oid", { schema: { hide: true }, config: transfer }, async (request, reply) => {
      const admitted = await admitTransfer(request, reply, "upload");
      if (!admitted) return reply;
      const { grant, repo } = admitted;
      try {
        await store.write(grant.oid, grant.size, request.body as Readable);
      } catch (err) {
        if (err instanceof ObjectMismatchError)
          return refuse(reply, 422, `${err.message} Nothing was stored.`);
        throw err;
      }
      await lfsObjectsRepository.link(db, repo.row.id, grant.oid, grant.size, clock().toISOString());
      return reply.status(200).send();
    });

    app.put("/lfs/parts/:oid", { schema: { hide: true }, config: transfer }, async (request, reply) => {
      const admitted = await admitTransfer(request, reply, "upload");
      if (!admitted) return reply;
      const { grant, repo } = admitted;
      const { part, session } = grant;
      if (part === undefined || session === undefined || part > partCount(grant.size))
        return refuse(reply, 403, "This URL is not for a part of this upload.");
      try {
        const etag = await staging.writePart(
          repo.row.id,
          grant.oid,
          session,
          part,
          partSize(grant.size, part),
          request.body as Readable,
        );
        return reply.status(200).header("etag", etag).header("access-control-expose-headers", "ETag").send();
      } catch (err) {
        if (err instanceof ObjectMismatchError)
          return refuse(reply, 422, `${err.message} Upload the part again.`);
        throw err;
      }
    });

    app.post("/lfs/complete/:oid", { schema: { hide: true }, config: transfer }, async (request, reply) => {
      const admitted = await admitTransfer(request, reply, "upload");
      if (!admitted) return reply;
      const { grant, repo } = admitted;
      const { session } = grant;
      if (session === undefined) return refuse(reply, 403, "This URL does not complete a multipart upload.");
      const parts = (request.body as { parts?: unknown } | undefined)?.parts;
      const reported = Array.isArray(parts)
        ? parts.map((p: { partNumber?: unknown; etag?: unknown }) => ({
            partNumber: Number(p?.partNumber),
            etag: String(p?.etag ?? ""),
          }))
        : [];
      if (!(await staging.complete(repo.row.id, grant.oid, session, reported, partCount(grant.size)))) {
        return refuse(reply, 422, "Some parts are missing or do not match their ETags; upload them again.");
      }
      try {
        await store.write(
          grant.oid,
          grant.size,
          staging.read(repo.row.id, grant.oid, session, partCount(grant.size)),
        );
      } catch (err) {
        if (err instanceof ObjectMismatchError)
          return refuse(reply, 422, `${err.message} Nothing was stored.`);
        throw err;
      } finally {
        await staging.discard(repo.row.id, grant.oid, session);
      }
      await lfsObjectsRepository.link(db, repo.row.id, grant.oid, grant.size, clock().toISOString());
      return reply.header("content-type", LFS_JSON).send({ message: "completed" });
    });

    app.post("/lfs/verify/:oid", { schema: { hide: true }, config: transfer }, async (request, reply) => {
      const admitted = await admitTransfer(request, reply, "upload");
      if (!admitted) return reply;
      const size = (await lfsObjectsRepository.linked(db, admitted.repo.row.id, [admitted.grant.oid])).get(
        admitted.grant.oid,
      );
      if (size !== admitted.grant.size)
        return refuse(reply, 404, "The object was not uploaded, or not whole; upload it again.");
      return reply.header("content-type", LFS_JSON).send({ message: "verified" });
    });

    app.get("/lfs/objects/:oid", { schema: { hide: true }, config: transfer }, async (request, reply) => {
      const admitted = await admitTransfer(request, reply, "download");
      if (!admitted) return reply;
      const { grant, repo } = admitted;
      const size = (await lfsObjectsRepository.linked(db, repo.row.id, [grant.oid])).get(grant.oid);
      if (size === undefined || (await store.size(grant.oid)) !== size)
        return refuse(reply, 404, "Object does not exist in this repository.");
      reply.header("content-type", "application/octet-stream").header("etag", `"${grant.oid}"`);
      return sendRanged(
        reply,
        { size, open: (range) => store.read(grant.oid, range) },
        request.headers.range,
      );
    });
  };
}
