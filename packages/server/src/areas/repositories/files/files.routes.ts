import { Readable } from "node:stream";
import type { DownloadCounter } from "../metadata/download-counter.js";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  ApiErrorRef,
  CommitResponse,
  PreuploadRequest,
  PreuploadResponse,
  REPO_TYPES,
  TreeEntry,
  type RepoType,
} from "@hub/api";
import { Type } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { parseDocument } from "yaml";
import { storedBody, type ObjectStore } from "../../../git/lfs/object-store.js";
import { TRANSFER_URL_TTL_SECONDS } from "../../../git/lfs/transfer-url.js";
import type { RepoFiles, TreeEntry as TreeEntryRow } from "../../../git/repo-files.js";
import { HubError, badRequest, entryNotFound } from "../../../errors.js";
import { principalOf } from "../../../http/access.js";
import { sendRanged } from "../../../http/ranged-response.js";
import {
  cursorOffset,
  nextPageUrl,
  repoAccess,
  repoPathAccess,
  repositoryOf,
} from "../../../http/repo-access.js";
import { type ReposService } from "../repos/repos.service.js";
import { URL_PREFIX, type FoundRepo } from "../../../domain/repositories.js";
import { pullRequestNumber } from "../../../git/pull-requests.js";
import { isRepositoryPath, type FilesService } from "./files.service.js";

const TREE_PAGE_SIZE = 1000;
/** Entries per page with `expand=true`: each one costs a history walk. */
const EXPANDED_TREE_PAGE_SIZE = 50;

const flag = (value: unknown) => typeof value === "string" && /^(1|true)$/i.test(value);

/** `create_pr`, which the clients add to preupload and commit when asked for a pull request. */
export const CreatePrQuery = Type.Object(
  {
    create_pr: Type.Optional(
      Type.String({
        description: "1 or true: the commit opens a pull request against the branch instead of moving it.",
      }),
    ),
  },
  { additionalProperties: true },
);

/** Whether a write goes to a pull request (a new one, or `refs/pr/{num}`): `community:write` may then do it. */
export function writesPullRequest(request: FastifyRequest): boolean {
  const { create_pr: createPr } = request.query as { create_pr?: string };
  return flag(createPr) || pullRequestNumber((request.params as { rev?: string }).rev ?? "") !== null;
}

/** The largest NDJSON commit body accepted: regular files travel base64-encoded inside it. */
const COMMIT_BODY_LIMIT = 100 * 1024 * 1024;

/** Problems with a card's `---` YAML header: it must parse and be a mapping. */
function cardMetadataErrors(card: string): Array<{ message: string }> {
  const match = /^---\r?\n([\s\S]*?)\r?\n---(\r?\n|$)/.exec(card);
  if (!match) return [];
  const document = parseDocument(match[1] ?? "");
  if (document.errors.length > 0)
    return document.errors.map((error) => ({ message: `Invalid YAML in the card header: ${error.message}` }));
  const value: unknown = document.toJS();
  if (value !== null && (typeof value !== "object" || Array.isArray(value))) {
    return [{ message: "The card header must be a YAML mapping of keys to values." }];
  }
  return [];
}

/** `expand` on trees and paths-info: a yes or no (the Python client sends True, the JavaScript one true). */
function expandFlag(value: unknown): boolean {
  if (value === undefined || value === null || typeof value === "boolean") return value === true;
  if (typeof value === "string" && /^(1|true|0|false)?$/i.test(value)) return flag(value);
  throw badRequest(
    "unsupported_parameter",
    "expand must be true (add each entry's last commit) or false.",
    "expand",
  );
}

/** What downloads and listings say of the LFS files a repository's Xet CAS can rebuild (areas/repositories/xet). */
export interface XetAnnouncer {
  /** The Xet hash of each of the objects the repository's CAS can rebuild. */
  fileHashesOf(repo: FoundRepo, oids: string[]): Promise<Map<string, string>>;
  /** The route a client gets (and refreshes) its Xet read token at. */
  readTokenUrl(repo: FoundRepo, revision: string): string;
  casUrl: string;
}

export interface FilesRoutesDeps {
  repos: ReposService;
  files: FilesService;
  repoFiles: RepoFiles;
  store: ObjectStore;
  publicUrl: string;
  /** Told of every file a signed-in account downloads (`resolve`, GET), for interests learned from activity. */
  onDownload?: (userId: string, repositoryId: string) => Promise<void>;
  /** Counts downloads of repositories (discovery's `downloads`), never waiting on the database. */
  downloads?: DownloadCounter;
  /** Announces files stored through Xet, so Xet clients download them from the CAS. */
  xet?: XetAnnouncer;
}

/** The Hugging Face-compatible file API: preupload, NDJSON commits, trees, paths-info, and resolve/raw downloads. */
export function filesRoutes({
  repos,
  files,
  repoFiles,
  store,
  publicUrl,
  onDownload,
  downloads,
  xet,
}: FilesRoutesDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addContentTypeParser(
      "application/x-ndjson",
      { parseAs: "string", bodyLimit: COMMIT_BODY_LIMIT },
      (_request, body, done) => done(null, body),
    );
    // paths-info: the Python client sends a form body.
    app.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "string" },
      (_request, body, done) => {
        const form = new URLSearchParams(String(body));
        done(null, { paths: form.getAll("paths"), expand: form.get("expand") });
      },
    );

    app.post(
      "/api/validate-yaml",
      {
        schema: {
          operationId: "validate_yaml",
          tags: ["Repositories"],
          summary: "Check the YAML metadata block of a repository card (README.md) before committing it.",
          body: Type.Object(
            { content: Type.String({ maxLength: 1024 * 1024 }), repoType: Type.Optional(Type.String()) },
            { additionalProperties: true },
          ),
          response: {
            200: Type.Object({ warnings: Type.Array(Type.Object({ message: Type.String() })) }),
            // The shared error body, plus each problem of the metadata when that is what is wrong.
            400: Type.Object({
              error: Type.String(),
              code: Type.String(),
              field: Type.Optional(Type.String()),
              errors: Type.Optional(Type.Array(Type.Object({ message: Type.String() }))),
            }),
          },
        },
        config: { access: "optional" },
      },
      async (request, reply) => {
        const errors = cardMetadataErrors(request.body.content);
        if (errors.length === 0) return { warnings: [] };
        return reply.status(400).send({
          error: `The card's YAML metadata is invalid: ${errors.map((e) => e.message).join("; ")}`,
          code: "invalid_card_metadata",
          errors,
        });
      },
    );

    for (const type of REPO_TYPES) {
      const api = `/api/${type}s/:owner/:name`;
      const { read, write: writeBranch } = repoPathAccess(repos, type);
      const write = {
        ...writeBranch,
        orAction: { action: "community:write" as const, when: writesPullRequest },
      };
      const tags = ["Repositories"];

      app.post(
        `${api}/preupload/:rev`,
        {
          schema: {
            operationId: `files_preupload_${type}`,
            tags,
            summary: "Ask which files of a commit go through LFS.",
            querystring: CreatePrQuery,
            body: PreuploadRequest,
            response: { 200: PreuploadResponse, 404: ApiErrorRef },
          },
          config: { access: write },
        },
        async (request) => {
          return {
            files: await files.preupload(
              repositoryOf(request),
              (request.params as { rev: string }).rev,
              request.body.files,
              request.body.gitAttributes ?? undefined,
            ),
          };
        },
      );

      app.post(
        `${api}/commit/:rev`,
        {
          schema: {
            operationId: `files_commit_${type}`,
            tags,
            summary: "Commit files (NDJSON: header, file, lfsFile, deletedFile, deletedFolder) to a branch.",
            querystring: CreatePrQuery,
            response: {
              200: CommitResponse,
              404: ApiErrorRef,
              409: ApiErrorRef,
              412: ApiErrorRef,
              422: ApiErrorRef,
            },
          },
          config: { access: write },
        },
        async (request) => {
          if (typeof request.body !== "string") {
            throw new HubError(
              415,
              "unsupported_media_type",
              "Send the commit as Content-Type: application/x-ndjson.",
            );
          }
          return files.commit(
            repositoryOf(request),
            principalOf(request),
            (request.params as { rev: string }).rev,
            request.body,
            { createPr: flag(request.query.create_pr) },
          );
        },
      );

      app.get(
        `${api}/tree/*`,
        {
          schema: {
            operationId: `files_tree_${type}`,
            tags,
            summary: "List files and folders at a revision, paginated with a Link header.",
            querystring: Type.Object(
              {
                recursive: Type.Optional(Type.String()),
                expand: Type.Optional(Type.String()),
                cursor: Type.Optional(Type.String()),
              },
              { additionalProperties: true },
            ),
            response: { 200: Type.Array(TreeEntry), 404: ApiErrorRef },
          },
          config: { access: read },
        },
        async (request, reply) => {
          const repo = repositoryOf(request);
          const { commit, path } = await files.splitRevisionPath(
            repo,
            (request.params as { "*": string })["*"],
          );
          const entries = await repoFiles.listTree(
            repo.row.id,
            commit,
            path.replace(/\/$/, ""),
            flag(request.query.recursive),
          );
          if (!entries) throw entryNotFound(path, commit);
          const expand = expandFlag(request.query.expand);
          const size = expand ? EXPANDED_TREE_PAGE_SIZE : TREE_PAGE_SIZE;
          const offset = cursorOffset(request.query.cursor);
          const page = entries.slice(offset, offset + size);
          if (offset + size < entries.length) {
            reply.header("link", `<${nextPageUrl(publicUrl, request, offset + size)}>; rel="next"`);
          }
          const announced = await withXetHashes(repo, page);
          return expand ? withLastCommits(repo.row.id, commit, announced) : announced;
        },
      );

      app.post(
        `${api}/paths-info/:rev`,
        {
          schema: {
            operationId: `files_paths_info_${type}`,
            tags,
            summary: "Describe the given paths at a revision; missing paths are left out.",
            body: Type.Object(
              { paths: Type.Array(Type.String(), { maxItems: 1000 }), expand: Type.Optional(Type.Unknown()) },
              { additionalProperties: true },
            ),
            response: { 200: Type.Array(TreeEntry), 404: ApiErrorRef },
          },
          config: { access: read, formBody: true },
        },
        async (request) => {
          const repo = repositoryOf(request);
          const expand = expandFlag(request.body.expand);
          const commit = await files.resolve(repo, (request.params as { rev: string }).rev);
          const entries = await files.pathsInfo(
            repo,
            commit,
            // Paths that cannot name anything in a repository are simply not there.
            request.body.paths.filter(isRepositoryPath),
          );
          const announced = await withXetHashes(repo, entries);
          return expand ? withLastCommits(repo.row.id, commit, announced) : announced;
        },
      );

      const web = `/${URL_PREFIX[type]}:owner/:repo`;
      const webLocate = (request: FastifyRequest) => {
        const { owner, repo } = request.params as { owner: string; repo: string };
        return { type, owner, name: repo };
      };
      for (const mode of ["resolve", "raw"] as const) {
        app.get(
          `${web}/${mode}/*`,
          {
            schema: { hide: true },
            config: { access: repoAccess(repos, "repo:download", webLocate), meter: "downloads" },
          },
          (request, reply) => download(request, reply, type, mode),
        );
      }
    }

    /** Adds to each LFS entry the CAS can rebuild its Xet hash (`xetHash`), as the Hub lists Xet files. */
    async function withXetHashes(
      repo: FoundRepo,
      entries: TreeEntryRow[],
    ): Promise<Array<TreeEntryRow & { xetHash?: string }>> {
      if (!xet) return entries;
      const oids = entries.flatMap((entry) => (entry.lfs ? [entry.lfs.oid] : []));
      const hashes = await xet.fileHashesOf(repo, oids);
      if (hashes.size === 0) return entries;
      return entries.map((entry) => {
        const xetHash = entry.lfs && hashes.get(entry.lfs.oid);
        return xetHash ? { ...entry, xetHash } : entry;
      });
    }

    /** Adds to each entry the commit that last changed it. */
    async function withLastCommits(repositoryId: string, commit: string, entries: TreeEntryRow[]) {
      const last = await repoFiles.lastCommits(
        repositoryId,
        commit,
        entries.map((entry) => entry.path),
      );
      return entries.map((entry) => {
        const lastCommit = last.get(entry.path);
        return lastCommit ? { ...entry, lastCommit } : entry;
      });
    }

    /** Sends a file; `resolve` follows LFS pointers to their objects, `raw` sends the blob itself. Range works on both. */
    async function download(
      request: FastifyRequest,
      reply: FastifyReply,
      _type: RepoType,
      mode: "resolve" | "raw",
    ) {
      const repo = repositoryOf(request);
      const { commit, path } = await files.splitRevisionPath(repo, (request.params as { "*": string })["*"]);
      const entry = await files.entry(repo, commit, path);
      reply.header("x-repo-commit", commit).header("content-type", "application/octet-stream");
      if (mode === "resolve" && request.method === "GET" && request.principal && onDownload) {
        await onDownload(request.principal.userId, repo.row.id);
      }
      if (mode === "resolve") downloads?.record(repo, path, request.principal?.userId ?? `ip ${request.ip}`);
      if (mode === "resolve" && entry.lfs) {
        const { oid, size } = entry.lfs;
        // A pointer is only text anyone can commit: serve the object only if it was uploaded to this repository.
        if ((await files.linkedSize(repo, oid)) !== size || (await store.size(oid)) !== size)
          throw entryNotFound(path, commit);
        reply
          .header("etag", `"${oid}"`)
          .header("x-linked-etag", `"${oid}"`)
          .header("x-linked-size", String(size));
        // A file the repository's Xet CAS can rebuild is announced as the Hub announces Xet files: Xet clients
        // (the Python client with hf_xet) then read it from the CAS, others read on as before.
        const xetHash = xet && (await xet.fileHashesOf(repo, [oid])).get(oid);
        if (xet && xetHash) {
          reply
            .header("x-xet-hash", xetHash)
            .header(
              "link",
              `<${xet.readTokenUrl(repo, commit)}>; rel="xet-auth", <${xet.casUrl}/v1/reconstructions/${xetHash}>; rel="xet-reconstruction-info"`,
            );
        }
        if (store.signedDownloadUrl) {
          // As the Hub redirects to its CDN: the headers above stay on the redirect, which the Python
          // client reads without following it; the bytes (and ranges of them) come from the store.
          const noDisposition = (request.query as Record<string, unknown>).noContentDisposition !== undefined;
          const location = await store.signedDownloadUrl(oid, {
            expiresInSeconds: TRANSFER_URL_TTL_SECONDS,
            ...(noDisposition ? {} : { filename: path.slice(path.lastIndexOf("/") + 1) }),
          });
          return reply.status(302).header("location", location).send();
        }
        return sendRanged(reply, storedBody(store, oid, size), request.headers.range);
      }
      reply.header("etag", `"${entry.oid}"`);
      // HEAD reads no content; a small file's content came with its entry.
      const content = entry.content ?? (request.method === "HEAD" ? null : await files.blob(repo, entry.oid));
      return sendRanged(
        reply,
        {
          size: entry.size,
          open: (range) =>
            Readable.from([
              range && content ? content.subarray(range.start, range.end + 1) : (content ?? Buffer.alloc(0)),
            ]),
        },
        request.headers.range,
      );
    }
  };
}
