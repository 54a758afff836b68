import type { Readable } from "node:stream";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  LFS_MAX_OBJECTS_PER_BATCH,
  LfsBatchRequest,
  LfsBatchResponse,
  LfsCompleteRequest,
  LfsCreateLockRequest,
  LfsError,
  LfsListLocksQuery,
  LfsLockAnswer,
  LfsLockList,
  LfsLockVerifyList,
  LfsMessage,
  LfsUnlockRequest,
  LfsVerifyLocksRequest,
  LfsVerifyRequest,
  REPO_TYPES,
  type RepoType,
} from "@hub/api";
import { Type } from "@sinclair/typebox";
import type { FastifyError, FastifyReply, FastifyRequest, FastifySchemaValidationError } from "fastify";
import type { Authenticate } from "../../auth/authenticate.js";
import type { Authorize } from "../../auth/authorizer.js";
import type { PullRequests } from "../../domain/pull-requests.js";
import type { OfferXetUpload } from "../../domain/xet-offer.js";
import { URL_PREFIX, type RepoLookup } from "../../domain/repositories.js";
import { HubError } from "../../errors.js";
import { toHubError } from "../../http/error-handler.js";
import { installJsonBodyParser } from "../../http/json-body.js";
import { sendRanged } from "../../http/ranged-response.js";
import { describeValidationError, fieldOf } from "../../http/validation.js";
import { pullRequestOnlyRefusal, type PushRights } from "../push-rights.js";
import { pushGate, repoGate, requirePushable, withoutGitSuffix } from "../repo-gate.js";
import type { LfsLocksService } from "./lfs-locks.service.js";
import type { LfsService } from "./lfs.service.js";

const LFS_JSON = "application/vnd.git-lfs+json";

const RepoParams = Type.Object({ owner: Type.String(), repo: Type.String() });
const LockParams = Type.Object({ owner: Type.String(), repo: Type.String(), id: Type.String() });
const OidParams = Type.Object({ oid: Type.String() });

/**
 * The errors the access pipeline documents on every route (in the Hub's error
 * schema unless a route names its own); here they come in the LFS error body.
 */
const ERRORS = { 400: LfsError, 429: LfsError };

/**
 * A schema failure as the LFS refusal git-lfs prints: `status` (422 where the
 * batch API's validation errors are due), with the message given for the field
 * at fault, or one naming the field and the rule it broke.
 */
function refuseInvalid(status: 400 | 422, messages: Record<string, string> = {}) {
  return (errors: FastifySchemaValidationError[], context: string): Error => {
    const [first] = errors;
    const field = first ? fieldOf(first) : "";
    const message =
      messages[field] ?? (first ? describeValidationError(first, context) : `The ${context} is not valid.`);
    return new HubError(status, "validation_failed", message, { field: field || undefined });
  };
}

const invalidBatch = refuseInvalid(422, {
  operation: 'The batch "operation" must be "upload" or "download".',
  transfers: 'This hub offers the "basic" and "multipart" transfers (and "xet" beside them).',
  objects: `"objects" must be a list of at most ${LFS_MAX_OBJECTS_PER_BATCH} objects.`,
});

export interface LfsRoutesDeps {
  lfs: LfsService;
  locks: LfsLocksService;
  repos: RepoLookup;
  authenticate: Authenticate;
  authorize: Authorize;
  pullRequests: Pick<PullRequests, "pushable">;
  /** Answers an upload batch that offers the "xet" transfer through the Xet CAS, where the repository takes it. */
  offerXet: OfferXetUpload;
  /** The base URL of this listener as clients see it; action hrefs and redirects point back at it. */
  baseUrl: string;
}

/**
 * Git LFS over HTTP: the batch API (https://github.com/git-lfs/git-lfs/blob/main/docs/api/batch.md)
 * and the locking API (https://github.com/git-lfs/git-lfs/blob/main/docs/api/locking.md) under each
 * repository's `info/lfs`, and the object URLs the batch API signs. Every error, whatever raised it,
 * is answered in the LFS error body, with `LFS-Authenticate` on a 401 so git asks for credentials.
 */
export function lfsRoutes({
  lfs,
  locks,
  repos,
  authenticate,
  authorize,
  pullRequests,
  offerXet,
  baseUrl,
}: LfsRoutesDeps): FastifyPluginAsyncTypebox {
  const gate = repoGate(repos, authorize);
  const admitPush = pushGate(repos, authorize, pullRequests);

  /** The caller and the repository the path names, if the caller may do `action` there. */
  async function admit(
    request: FastifyRequest,
    params: { owner: string; repo: string },
    type: RepoType,
    action: "repo:read" | "repo:download" | "repo:write",
  ) {
    const principal = await authenticate(request.headers);
    const target = { type, owner: params.owner, name: withoutGitSuffix(params.repo) };
    return { principal, repo: await gate(principal, target, action, request.url) };
  }

  /**
   * Admits a batch upload. The repository's writers upload as before, whatever
   * ref they name. A caller admitted only to their own pull requests (see
   * `pushGate`: `community:write` without `repo:write`) uploads for one of
   * them, as git-lfs names the ref it pushes (`ref: {name: "refs/pr/N"}`); or
   * with no ref at all, as the Python client does for a commit that will open
   * a pull request (`create_pr`), since anyone who may open one may send its
   * files. Uploaded objects stay unreferenced (and are collected) until a
   * commit that may be made names them.
   */
  async function admitUpload(
    request: FastifyRequest,
    params: { owner: string; repo: string },
    type: RepoType,
    ref: string | undefined,
  ) {
    const principal = await authenticate(request.headers);
    const target = { type, owner: params.owner, name: withoutGitSuffix(params.repo) };
    const admitted = await admitPush(principal, target, request.url);
    refuseRef(admitted.rights, ref);
    return admitted;
  }

  /** Refuses a caller who may not push branches a ref that is not one of their open pull requests. */
  function refuseRef(rights: PushRights, ref: string | undefined): void {
    const refusal = ref === undefined ? null : pullRequestOnlyRefusal(rights, ref);
    if (refusal !== null) throw new HubError(403, "forbidden", refusal);
  }

  /** As `admit` for a write: the gate answers an anonymous one with the 401 that makes git ask for a token. */
  async function admitWriter(
    request: FastifyRequest,
    params: { owner: string; repo: string },
    type: RepoType,
  ) {
    const { principal, repo } = await admit(request, params, type, "repo:write");
    if (!principal) throw new Error("The repository gate admitted an anonymous writer.");
    return { principal, repo };
  }

  /**
   * Admission done before the body is validated (Fastify's preValidation), so
   * a caller who may not write learns that first, never what the body should
   * look like; the handler takes what was admitted.
   */
  const admittedWriters = new WeakMap<FastifyRequest, Awaited<ReturnType<typeof admitWriter>>>();
  const admitWriterFirst = (type: RepoType) => async (request: FastifyRequest) => {
    admittedWriters.set(
      request,
      await admitWriter(request, request.params as { owner: string; repo: string }, type),
    );
  };
  function writerOf(request: FastifyRequest) {
    const admitted = admittedWriters.get(request);
    if (!admitted) throw new Error("The route admitted no writer before its handler.");
    return admitted;
  }

  /** As `admitWriterFirst` for the lock check of a push: writers, and callers with an open pull request of their own. */
  const admittedPushers = new WeakMap<FastifyRequest, Awaited<ReturnType<typeof admitPush>>>();
  const admitPusherFirst = (type: RepoType) => async (request: FastifyRequest) => {
    const params = request.params as { owner: string; repo: string };
    const principal = await authenticate(request.headers);
    const target = { type, owner: params.owner, name: withoutGitSuffix(params.repo) };
    const admitted = await admitPush(principal, target, request.url);
    requirePushable(admitted.rights);
    admittedPushers.set(request, admitted);
  };
  function pusherOf(request: FastifyRequest) {
    const admitted = admittedPushers.get(request);
    if (!admitted) throw new Error("The route admitted no pusher before its handler.");
    return admitted;
  }

  /** The LFS error body; a moved repository's Location is made absolute, as git-lfs loops on a relative one. */
  function refuse(reply: FastifyReply, error: HubError): FastifyReply {
    const location = error.headers.location;
    if (location) reply.header("location", location.startsWith("/") ? `${baseUrl}${location}` : location);
    if (error.status === 401) reply.header("lfs-authenticate", 'Basic realm="Hub"');
    return reply
      .status(error.status)
      .header("content-type", LFS_JSON)
      .send({ message: error.message, request_id: reply.request.id });
  }

  return async (app) => {
    installJsonBodyParser(app, [LFS_JSON]);
    // Object bodies stream straight to storage, whatever content type the client declares (or none).
    app.addContentTypeParser("*", (_request, payload, done) => done(null, payload));
    app.setErrorHandler((err: FastifyError, request, reply) => {
      const error = toHubError(err);
      if (error.status >= 500) request.log.error({ err }, "request failed");
      return refuse(reply, error);
    });
    const config = { access: "public" as const };
    // Object transfers are granted by a batch request, which is metered; metering each object again
    // would stop clones of repositories with many files.
    const transfer = { access: "public" as const, unmetered: true };

    for (const type of REPO_TYPES) {
      const base = `/${URL_PREFIX[type]}:owner/:repo/info/lfs`;

      app.post(
        `${base}/objects/batch`,
        {
          schema: {
            hide: true,
            params: RepoParams,
            body: LfsBatchRequest,
            response: { ...ERRORS, 200: LfsBatchResponse },
          },
          schemaErrorFormatter: invalidBatch,
          config,
        },
        async (request, reply) => {
          const { body } = request;
          if (body.operation === "download") {
            const { principal, repo } = await admit(request, request.params, type, "repo:download");
            return reply.type(LFS_JSON).send(await lfs.batch(principal, repo, body, baseUrl));
          }
          const ref = body.ref?.name;
          const { principal, repo, rights } = await admitUpload(request, request.params, type, ref);
          const xet = body.transfers?.includes("xet")
            ? offerXet(principal, repo, { ref, pullRequestOnly: !rights.branches })
            : null;
          return reply.type(LFS_JSON).send(await lfs.batch(principal, repo, body, baseUrl, xet));
        },
      );

      app.post(
        `${base}/locks`,
        {
          schema: {
            hide: true,
            params: RepoParams,
            body: LfsCreateLockRequest,
            response: { ...ERRORS, 201: LfsLockAnswer, 409: LfsLockAnswer },
          },
          schemaErrorFormatter: refuseInvalid(422, { path: "A lock needs the path of a file." }),
          config,
          preValidation: admitWriterFirst(type),
        },
        async (request, reply) => {
          const { principal, repo } = writerOf(request);
          const outcome = await locks.createLock(principal, repo, request.body.path);
          return "created" in outcome
            ? reply.status(201).type(LFS_JSON).send({ lock: outcome.created })
            : reply.status(409).type(LFS_JSON).send({ lock: outcome.held, message: outcome.message });
        },
      );

      app.get(
        `${base}/locks`,
        {
          schema: {
            hide: true,
            params: RepoParams,
            querystring: LfsListLocksQuery,
            response: { ...ERRORS, 200: LfsLockList },
          },
          config,
        },
        async (request, reply) => {
          const { repo } = await admit(request, request.params, type, "repo:read");
          const { path, id, cursor, limit } = request.query;
          return reply.type(LFS_JSON).send(await locks.listLocks(repo, { path, id }, { cursor, limit }));
        },
      );

      app.post(
        `${base}/locks/verify`,
        {
          schema: {
            hide: true,
            params: RepoParams,
            body: LfsVerifyLocksRequest,
            response: { ...ERRORS, 200: LfsLockVerifyList },
          },
          config,
          preValidation: admitPusherFirst(type),
        },
        async (request, reply) => {
          const { principal, repo, rights } = pusherOf(request);
          // git-lfs verifies locks before a push, naming its ref: a pull request's author may verify for theirs.
          refuseRef(rights, request.body.ref?.name);
          return reply.type(LFS_JSON).send(await locks.verifyLocks(principal, repo, request.body));
        },
      );

      app.post(
        `${base}/locks/:id/unlock`,
        {
          schema: {
            hide: true,
            params: LockParams,
            body: LfsUnlockRequest,
            response: { ...ERRORS, 200: LfsLockAnswer },
          },
          config,
          preValidation: admitWriterFirst(type),
        },
        async (request, reply) => {
          const { principal, repo } = writerOf(request);
          const force = request.body.force === true;
          const lock = await locks.unlock(principal, repo, request.params.id, force);
          return reply.type(LFS_JSON).send({ lock });
        },
      );
    }

    /** The grant of the signed href a transfer request came to. */
    const granted = (
      request: { params: { oid: string }; query: unknown },
      operation: "upload" | "download",
    ) => lfs.admitTransfer(request.params.oid, request.query as Record<string, unknown>, operation);
    const stored = { 200: { type: "null", description: "Stored." }, ...ERRORS } as const;
    // The signed href is checked before the body, as a credential would be.
    const grants = new WeakMap<FastifyRequest, Awaited<ReturnType<typeof granted>>>();
    const grantFirst = async (request: FastifyRequest) => {
      grants.set(request, await granted(request as FastifyRequest<{ Params: { oid: string } }>, "upload"));
    };
    const grantOf = (request: FastifyRequest) => {
      const grant = grants.get(request);
      if (!grant) throw new Error("The route checked no signed href before its handler.");
      return grant;
    };

    app.put(
      "/lfs/objects/:oid",
      { schema: { hide: true, params: OidParams, response: stored }, config: transfer },
      async (request, reply) => {
        await lfs.uploadObject(await granted(request, "upload"), request.body as Readable);
        return reply.status(200).send();
      },
    );

    app.put(
      "/lfs/parts/:oid",
      { schema: { hide: true, params: OidParams, response: stored }, config: transfer },
      async (request, reply) => {
        const etag = await lfs.uploadPart(await granted(request, "upload"), request.body as Readable);
        return reply.status(200).header("etag", etag).header("access-control-expose-headers", "ETag").send();
      },
    );

    app.post(
      "/lfs/complete/:oid",
      {
        schema: {
          hide: true,
          params: OidParams,
          body: LfsCompleteRequest,
          response: { ...ERRORS, 200: LfsMessage },
        },
        schemaErrorFormatter: refuseInvalid(422),
        config: transfer,
        preValidation: grantFirst,
      },
      async (request, reply) => {
        await lfs.completeUpload(grantOf(request), request.body.parts);
        return reply.type(LFS_JSON).send({ message: "completed" });
      },
    );

    app.post(
      "/lfs/verify/:oid",
      {
        schema: {
          hide: true,
          params: OidParams,
          body: LfsVerifyRequest,
          response: { ...ERRORS, 200: LfsMessage },
        },
        config: transfer,
        preValidation: grantFirst,
      },
      async (request, reply) => {
        await lfs.verifyObject(grantOf(request));
        return reply.type(LFS_JSON).send({ message: "verified" });
      },
    );

    app.get(
      "/lfs/objects/:oid",
      { schema: { hide: true, params: OidParams, response: ERRORS }, config: transfer },
      async (request, reply) => {
        const download = await granted(request, "download");
        const object = await lfs.download(download);
        reply.header("content-type", "application/octet-stream").header("etag", `"${download.grant.oid}"`);
        return sendRanged(reply, object, request.headers.range);
      },
    );
  };
}
