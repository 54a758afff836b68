import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { RepoInfo } from "@hub/api";
import {
  ApiErrorRef,
  CreateRepoRequest,
  DuplicateRepoRequest,
  GatedSetting,
  HfCreateRepoRequest,
  HfCreateRepoResponse,
  HfDeleteRepoRequest,
  REPO_ID_PATTERN,
  REPO_TYPES,
  RepoTypeSchema,
  RepoConflict,
  RepoInfoFields,
  RepoSummary,
  type RepoType,
} from "@hub/api";
import { Type } from "@sinclair/typebox";
import type { FastifyReply } from "fastify";
import type { Authorize } from "../../../auth/authorizer.js";
import type { Principal } from "../../../auth/credential.js";
import { HubError, badRequest } from "../../../errors.js";
import { principalOf } from "../../../http/access.js";
import type { RepoDuplication } from "./duplicate.js";
import type { ReposService } from "./repos.service.js";
import { infoQuery, listingQuery } from "./listing-query.js";
import type { FoundRepo } from "../../../domain/repositories.js";
import {
  cursorOffset,
  nextPageUrl,
  repoAccess,
  repoPathAccess,
  repoPathAction,
  repositoryOf,
} from "../../../http/repo-access.js";

/** `_id`, `id` and the fields `expand` names, of a repository's info. */
function expandedFields(info: RepoInfo, expand: string[]): RepoInfoFields {
  const picked: Record<string, unknown> = { _id: info._id, id: info.id };
  for (const field of expand) {
    if (field in info) picked[field] = info[field as keyof RepoInfo];
  }
  return picked as RepoInfoFields;
}

/** Answers a create that meets an existing repository: 409 with its URL, which the Python client reads. */
async function createOrConflict(
  reply: FastifyReply,
  repos: ReposService,
  type: RepoType,
  fullName: string,
  create: () => Promise<FoundRepo>,
) {
  try {
    return await create();
  } catch (err) {
    if (err instanceof HubError && err.code === "repo_exists") {
      await reply.status(409).send({ error: err.message, code: err.code, url: repos.webUrl(type, fullName) });
      return null;
    }
    throw err;
  }
}

/** What `duplicate_repo` may send for a Space's runtime, which the hub does not run. */
const SPACE_RUNTIME_FIELDS = [
  "hardware",
  "storageTier",
  "sleepTimeSeconds",
  "secrets",
  "variables",
  "volumes",
];

/** The namespace a Hugging Face-shaped body names: its organization, else the caller. */
function namespaceOf(body: { organization?: string | null }, principal: Principal | null): string {
  return body.organization || principal?.handle || "";
}

/** Repository creation, deletion and information, in the spec's shape and in the Hugging Face clients' shape. */
export function reposRoutes({
  repos,
  duplicate,
  authorize,
  usedStorage,
  publicUrl,
}: {
  repos: ReposService;
  duplicate: RepoDuplication;
  authorize: Authorize;
  /** The bytes a repository stores, for `expand=usedStorage` (the storage area counts them). */
  usedStorage: (repo: FoundRepo) => Promise<number>;
  publicUrl: string;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      "/api/repos",
      {
        schema: {
          operationId: "repos_create",
          tags: ["Repositories"],
          summary: "Create a repository with a first commit holding a default .gitattributes.",
          body: CreateRepoRequest,
          response: { 201: RepoSummary, 404: ApiErrorRef, 409: RepoConflict },
        },
        config: {
          access: {
            action: "repo:write",
            resource: (request) =>
              repos.namespace((request.body as CreateRepoRequest).repo_id.split("/")[0] ?? ""),
          },
        },
      },
      async (request, reply) => {
        const [owner = "", name = ""] = request.body.repo_id.split("/");
        const type = request.body.repo_type ?? "model";
        const repo = await createOrConflict(reply, repos, type, request.body.repo_id, () =>
          repos.create({
            owner,
            name,
            type,
            private: request.body.private ?? false,
            actor: principalOf(request).handle,
          }),
        );
        return repo ? reply.status(201).send(repos.summary(repo)) : reply;
      },
    );

    app.post(
      "/api/repos/create",
      {
        schema: {
          operationId: "repos_create_hf",
          tags: ["Repositories"],
          summary: "Create a repository (the Hugging Face clients' request shape).",
          body: HfCreateRepoRequest,
          response: { 200: HfCreateRepoResponse, 404: ApiErrorRef, 409: RepoConflict },
        },
        config: {
          access: {
            action: "repo:write",
            resource: (request, principal) =>
              repos.namespace(namespaceOf(request.body as HfCreateRepoRequest, principal)),
          },
        },
      },
      async (request, reply) => {
        const { body } = request;
        const owner = namespaceOf(body, request.principal);
        const type = body.type ?? "model";
        const isPrivate = body.visibility ? body.visibility !== "public" : body.private === true;
        const repo = await createOrConflict(reply, repos, type, `${owner}/${body.name}`, () =>
          repos.create({
            owner,
            name: body.name,
            type,
            private: isPrivate,
            spaceSdk: body.sdk,
            actor: principalOf(request).handle,
          }),
        );
        return repo
          ? { url: repos.webUrl(type, repo.fullName), id: repo.fullName, name: repo.fullName }
          : reply;
      },
    );

    app.delete(
      "/api/repos/delete",
      {
        schema: {
          operationId: "repos_delete",
          tags: ["Repositories"],
          summary: "Delete a repository permanently.",
          body: HfDeleteRepoRequest,
          response: { 204: { type: "null", description: "Deleted." }, 404: ApiErrorRef },
        },
        config: {
          access: repoAccess(repos, "repo:delete", (request, principal) => {
            const body = request.body as HfDeleteRepoRequest;
            return { type: body.type ?? "model", owner: namespaceOf(body, principal), name: body.name };
          }),
        },
      },
      async (request, reply) => {
        await repos.remove(repositoryOf(request), principalOf(request).handle);
        return reply.status(204).send();
      },
    );

    app.post(
      "/api/repos/move",
      {
        schema: {
          operationId: "repos_move",
          tags: ["Repositories"],
          summary:
            "Rename a repository or move it to another namespace; needs repo:delete on it and repo:write on the target.",
          body: Type.Object(
            {
              fromRepo: Type.String({ pattern: REPO_ID_PATTERN }),
              toRepo: Type.String({ pattern: REPO_ID_PATTERN }),
              type: Type.Optional(RepoTypeSchema),
            },
            { additionalProperties: true },
          ),
          response: { 200: { type: "null", description: "Moved." }, 404: ApiErrorRef, 409: ApiErrorRef },
        },
        config: {
          access: repoAccess(repos, "repo:delete", (request) => {
            const body = request.body as { fromRepo: string; type?: RepoType };
            const [owner = "", name = ""] = body.fromRepo.split("/");
            return { type: body.type ?? "model", owner, name };
          }),
        },
      },
      async (request, reply) => {
        const [owner = "", name = ""] = request.body.toRepo.split("/");
        const target = await repos.namespace(owner);
        await authorize(request.principal, "repo:write", target);
        await repos.move(repositoryOf(request), { owner: target.owner, name }, principalOf(request).handle);
        return reply.status(200).send();
      },
    );

    for (const type of REPO_TYPES) {
      app.post(
        `/api/${type}s/:owner/:name/duplicate`,
        {
          schema: {
            operationId: `repos_duplicate_${type}`,
            tags: ["Repositories"],
            summary:
              "Copy a repository you may download, with its branches, tags and LFS objects, to a new one in a namespace you may write to.",
            body: DuplicateRepoRequest,
            response: { 200: Type.Object({ url: Type.String() }), 404: ApiErrorRef, 409: RepoConflict },
          },
          config: { access: repoPathAction(repos, type, "repo:download") },
        },
        async (request, reply) => {
          const { body } = request;
          const unsupported = SPACE_RUNTIME_FIELDS.find((field) => field in body);
          if (unsupported !== undefined) {
            throw badRequest(
              "unsupported_parameter",
              `${unsupported}: this hub does not run Spaces, so it keeps no runtime settings; duplicate without it.`,
              unsupported,
            );
          }
          const [owner = "", name = "", ...rest] = body.repository.split("/");
          if (rest.length > 0 || !owner || !name) {
            throw badRequest(
              "invalid_repo_name",
              `"${body.repository}" is not <namespace>/<name>.`,
              "repository",
            );
          }
          await authorize(request.principal, "repo:write", await repos.namespace(owner));
          const source = repositoryOf(request);
          const isPrivate = body.visibility
            ? body.visibility !== "public"
            : (body.private ?? source.row.private === 1);
          const copy = await createOrConflict(reply, repos, type, `${owner}/${name}`, () =>
            duplicate(source, { owner, name, private: isPrivate }, principalOf(request).handle),
          );
          return copy ? { url: repos.webUrl(type, copy.fullName) } : reply;
        },
      );

      app.put(
        `/api/${type}s/:owner/:name/settings`,
        {
          schema: {
            operationId: `repos_settings_${type}`,
            tags: ["Repositories"],
            summary:
              "Change visibility (private or visibility), gating (gated: false, auto or manual), whether pushes may rewrite history (denyForcePush) and whether uploads may go through Xet storage (xetEnabled).",
            body: Type.Object(
              {
                private: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
                visibility: Type.Optional(Type.Union([Type.Literal("public"), Type.Literal("private")])),
                gated: Type.Optional(GatedSetting),
                denyForcePush: Type.Optional(Type.Boolean()),
                xetEnabled: Type.Optional(
                  Type.Boolean({
                    description:
                      "Whether the Xet CAS takes uploads for this repository (true by default); false answers the Xet token routes with 404, as a hub without Xet does.",
                  }),
                ),
              },
              { additionalProperties: true },
            ),
            response: { 200: { type: "null", description: "Saved." }, 400: ApiErrorRef, 404: ApiErrorRef },
          },
          config: { access: repoPathAccess(repos, type).write },
        },
        async (request, reply) => {
          const { body } = request;
          const isPrivate = body.visibility ? body.visibility === "private" : (body.private ?? undefined);
          await repos.updateSettings(
            repositoryOf(request),
            {
              private: isPrivate,
              gated: body.gated,
              denyForcePush: body.denyForcePush,
              xetEnabled: body.xetEnabled,
            },
            principalOf(request).handle,
          );
          return reply.status(200).send();
        },
      );

      app.get(
        `/api/${type}s`,
        {
          schema: {
            operationId: `repos_list_${type}`,
            tags: ["Repositories"],
            summary: `List the ${type} repositories you may read, paginated with an absolute Link header.`,
            // Every other parameter the clients send is refused by name (listing-query.ts), never ignored.
            querystring: Type.Object(
              {
                search: Type.Optional(
                  Type.Union([Type.String({ maxLength: 200 }), Type.Array(Type.String())]),
                ),
                author: Type.Optional(
                  Type.Union([Type.String({ maxLength: 100 }), Type.Array(Type.String())]),
                ),
                gated: Type.Optional(
                  Type.String({ description: "true: only gated repositories; false: only others." }),
                ),
                filter: Type.Optional(
                  Type.Union([Type.String(), Type.Array(Type.String())], {
                    description: "Tags every listed repository carries (repeat or separate with commas).",
                  }),
                ),
                sort: Type.Optional(
                  Type.String({
                    description:
                      "lastModified (default), createdAt, id, likes, downloads, trendingScore, num_parameters or mainSize. A search without a sort is ranked by relevance.",
                  }),
                ),
                direction: Type.Optional(Type.String({ description: "-1 (descending) or 1." })),
                limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
                cursor: Type.Optional(Type.String()),
                expand: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
              },
              { additionalProperties: true },
            ),
            response: { 200: Type.Array(RepoInfoFields) },
          },
          config: { access: "optional" },
        },
        async (request, reply) => {
          const limit = request.query.limit ?? 100;
          const offset = cursorOffset(request.query.cursor);
          const query = listingQuery(request.query as Record<string, unknown>, type);
          const page = await repos.list(request.principal, type, { ...query, limit, offset });
          if (query.expand?.includes("usedStorage")) {
            await Promise.all(
              page.items.map(async (item, index) => {
                const repo = page.repos[index];
                if (repo) (item as RepoInfoFields).usedStorage = await usedStorage(repo);
              }),
            );
          }
          if (page.next !== null) {
            reply.header("link", `<${nextPageUrl(publicUrl, request, page.next)}>; rel="next"`);
          }
          return page.items;
        },
      );

      const params = Type.Object({
        owner: Type.String(),
        name: Type.String(),
        revision: Type.Optional(Type.String()),
      });
      const access = repoPathAccess(repos, type).read;
      for (const [path, operationId] of [
        [`/api/${type}s/:owner/:name`, `repos_info_${type}`],
        [`/api/${type}s/:owner/:name/revision/:revision`, `repos_info_${type}_revision`],
      ] as const) {
        app.get(
          path,
          {
            schema: {
              operationId,
              tags: ["Repositories"],
              summary: `Information about a ${type} repository at its default branch or a revision.`,
              params,
              querystring: Type.Object(
                {
                  blobs: Type.Optional(
                    Type.String({ description: "true: each sibling with its size, blobId and lfs object." }),
                  ),
                  expand: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
                },
                { additionalProperties: true },
              ),
              response: { 200: RepoInfoFields, 404: ApiErrorRef },
            },
            config: { access },
          },
          async (request) => {
            const { blobs, expand } = infoQuery(request.query as Record<string, unknown>, type);
            const repo = repositoryOf(request);
            const info = await repos.info(repo, request.params.revision, {
              blobs,
              siblings: expand === null || expand.includes("siblings"),
              ...(expand === null ? {} : { fields: expand }),
              principal: request.principal,
            });
            if (expand?.includes("usedStorage")) info.usedStorage = await usedStorage(repo);
            return expand === null ? info : expandedFields(info, expand);
          },
        );
      }
    }
  };
}
