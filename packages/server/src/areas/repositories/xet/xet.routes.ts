import type { Readable } from "node:stream";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  ApiErrorRef,
  REPO_TYPES,
  XetReconstruction,
  XetShardUploaded,
  XetToken,
  XetXorbUploaded,
} from "@hub/api";
import { Type } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { RepoLookup } from "../../../domain/repositories.js";
import { HubError } from "../../../errors.js";
import { sendRanged } from "../../../http/ranged-response.js";
import { repoPathAction, repositoryOf } from "../../../http/repo-access.js";
import { CreatePrQuery, writesPullRequest } from "../files/files.routes.js";
import type { CasCaller } from "./xet-access.js";
import { SHARD_BODY_LIMIT, XORB_BODY_LIMIT } from "./xet-uploads.js";
import { XET_CAS_PREFIX, type XetService } from "./xet.service.js";

/** A CAS request body, read whole up to the limit of what it carries; more is refused before it is stored. */
async function readBody(request: FastifyRequest, payload: Readable): Promise<Buffer> {
  const what = request.url.includes("/shards") ? "shard" : "xorb";
  const limit = what === "shard" ? SHARD_BODY_LIMIT : XORB_BODY_LIMIT;
  const code = what === "shard" ? "xet_shard_invalid" : "xet_xorb_invalid";
  const tooLarge = () =>
    new HubError(400, code, `The ${what} is larger than the ${limit}-byte limit; nothing was stored.`);
  if (Number(request.headers["content-length"] ?? 0) > limit) throw tooLarge();
  const parts: Buffer[] = [];
  let received = 0;
  for await (const part of payload) {
    received += (part as Buffer).length;
    if (received > limit) throw tooLarge();
    parts.push(part as Buffer);
  }
  return Buffer.concat(parts);
}

const HashParams = Type.Object({ hash: Type.String() });
const OCTETS = { type: "string", format: "binary", description: "A stored-form shard." } as const;

/**
 * A Xet token in the body (hf_xet and the JavaScript client read it there) and in the X-Xet-Cas-Url,
 * X-Xet-Access-Token and X-Xet-Token-Expiration headers, where huggingface_hub 1.19 and 2.x read the token
 * they refresh for a download, as Hugging Face answers.
 */
function sendToken(reply: FastifyReply, token: XetToken): XetToken {
  reply.header("X-Xet-Cas-Url", token.casUrl);
  reply.header("X-Xet-Access-Token", token.accessToken);
  reply.header("X-Xet-Token-Expiration", String(token.exp));
  return token;
}

/**
 * The Xet token routes of each repository, and the CAS API (V1, https://huggingface.co/docs/xet/api) under
 * `/xet-cas` on the Hub listener. The token routes declare their access as every Hub route does; the CAS
 * routes are public to the pipeline and admit each request by its Xet token (`XetService.admit`), which asks
 * `decide()` again. CAS requests are not metered: the token route that granted them is.
 */
export function xetRoutes({ xet, repos }: { xet: XetService; repos: RepoLookup }): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const type of REPO_TYPES) {
      const api = `/api/${type}s/:owner/:name`;
      const tags = ["Repositories"];
      app.get(
        `${api}/xet-read-token/:rev`,
        {
          schema: {
            operationId: `xet_read_token_${type}`,
            tags,
            summary:
              "A short-lived token to download this repository's files from its Xet CAS (404 when xetEnabled is off).",
            response: { 200: XetToken, 404: ApiErrorRef },
          },
          config: { access: repoPathAction(repos, type, "repo:download") },
        },
        async (request, reply) =>
          sendToken(reply, xet.mint(request.principal, repositoryOf(request), "read")),
      );
      app.get(
        `${api}/xet-write-token/:rev`,
        {
          schema: {
            operationId: `xet_write_token_${type}`,
            tags,
            summary:
              "A short-lived token to upload files to this repository's Xet CAS; with create_pr=1 (or for refs/pr/N), for a pull request (404 when xetEnabled is off).",
            querystring: CreatePrQuery,
            response: { 200: XetToken, 404: ApiErrorRef },
          },
          config: {
            access: {
              ...repoPathAction(repos, type, "repo:write"),
              orAction: { action: "community:write", when: writesPullRequest },
            },
          },
        },
        async (request, reply) =>
          sendToken(
            reply,
            xet.mint(
              request.principal,
              repositoryOf(request),
              writesPullRequest(request) ? "pull-request" : "write",
            ),
          ),
      );
    }
    // hf_xet reports its transfers to /v1/telemetry at the CAS's origin: nothing is kept.
    app.post(
      "/v1/telemetry",
      { schema: { hide: true }, config: { access: "public", unmetered: true } },
      async (_request, reply) => reply.status(204).send(),
    );
    await app.register(casRoutes(xet), { prefix: XET_CAS_PREFIX });
  };
}

/** The CAS routes take a token of the xet-read-token and xet-write-token routes, not a Hub credential. */
const XET_SECURITY = [{ xetToken: [] }];

function casRoutes(xet: XetService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addContentTypeParser("*", readBody);
    const config = { access: "public" as const, unmetered: true };
    const tags = ["Xet CAS"];

    /** Admission by Xet token, before the body is read. */
    const callers = new WeakMap<FastifyRequest, CasCaller>();
    const admit = (operation: "read" | "write") => async (request: FastifyRequest) => {
      callers.set(request, await xet.admit(request.headers.authorization, operation));
    };
    const callerOf = (request: FastifyRequest) => {
      const caller = callers.get(request);
      if (!caller) throw new Error("The CAS route admitted no caller before its handler.");
      return caller;
    };

    app.post(
      "/v1/xorbs/default/:hash",
      {
        schema: {
          operationId: "xet_upload_xorb",
          tags,
          security: XET_SECURITY,
          summary: "Upload a xorb (its chunk records) under its hash; verified before it is stored.",
          params: HashParams,
          response: { 200: XetXorbUploaded, 401: ApiErrorRef, 403: ApiErrorRef },
        },
        config,
        onRequest: admit("write"),
      },
      async (request) => xet.uploadXorb(callerOf(request), request.params.hash, request.body as Buffer),
    );

    app.post(
      "/v1/shards",
      {
        schema: {
          operationId: "xet_upload_shard",
          tags,
          security: XET_SECURITY,
          summary:
            "Upload a shard: its files are verified against the stored xorbs and become LFS objects of the repository.",
          response: { 200: XetShardUploaded, 401: ApiErrorRef, 403: ApiErrorRef },
        },
        config,
        onRequest: admit("write"),
      },
      async (request) => xet.uploadShard(callerOf(request), request.body as Buffer),
    );

    app.get(
      "/v1/chunks/:prefix/:hash",
      {
        schema: {
          operationId: "xet_dedup_chunk",
          tags,
          security: XET_SECURITY,
          summary:
            "Global deduplication: a shard describing the stored xorbs holding the chunk that you may read (chunk hashes keyed), or 404.",
          params: Type.Object({
            // The specification names the prefix default-merkledb; hf_xet 1.8.0 sends default.
            prefix: Type.Union([Type.Literal("default"), Type.Literal("default-merkledb")]),
            hash: Type.String(),
          }),
          response: { 200: OCTETS, 401: ApiErrorRef, 404: ApiErrorRef },
        },
        config,
        onRequest: admit("read"),
      },
      async (request, reply) => {
        const shard = await xet.dedupShard(callerOf(request), request.params.hash);
        if (!shard) throw new HubError(404, "not_found", "No xorb you may read holds this chunk.");
        return reply.type("application/octet-stream").send(Buffer.from(shard));
      },
    );

    app.get(
      "/v1/reconstructions/:hash",
      {
        schema: {
          operationId: "xet_reconstruction",
          tags,
          security: XET_SECURITY,
          summary:
            "How to rebuild a file of the token's repository (or the byte range a Range header asks for) from xorb byte ranges.",
          params: HashParams,
          response: { 200: XetReconstruction, 401: ApiErrorRef, 404: ApiErrorRef, 416: ApiErrorRef },
        },
        config,
        onRequest: admit("read"),
      },
      async (request) => xet.reconstruction(callerOf(request), request.params.hash, request.headers.range),
    );

    app.get(
      "/fetch/:hash",
      {
        schema: {
          operationId: "xet_fetch_range",
          tags,
          summary:
            "Bytes of a stored xorb, by a signed URL a reconstruction answered (send its url_range as Range).",
          params: HashParams,
          response: { 403: ApiErrorRef, 404: ApiErrorRef },
        },
        config,
      },
      async (request, reply) => {
        const { body, range } = await xet.fetchRange(
          request.params.hash,
          request.query as Record<string, unknown>,
          request.headers.range,
        );
        reply.header("content-type", "application/octet-stream");
        return sendRanged(reply, body, range);
      },
    );

    // Newer APIs hf_xet tries first and falls back from on a 404: the V2 reconstruction and shard upload,
    // upload grants (a 404 makes it post xorbs to /v1/xorbs for the rest of the session), file chunk hashes.
    for (const [method, url] of [
      ["GET", "/v2/reconstructions/:hash"],
      ["POST", "/v2/shards"],
      ["POST", "/v1/xorb-grants/*"],
      ["POST", "/v1/xorb-commits/*"],
      ["GET", "/v2/file-chunk-hashes/*"],
    ] as const) {
      app.route({
        method,
        url,
        schema: { hide: true },
        config,
        onRequest: async () => {
          throw new HubError(404, "not_found", `This CAS speaks the V1 API only; ${url} is not offered.`);
        },
        handler: async () => undefined,
      });
    }
  };
}
