import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  AccessRequest,
  AccessRequestStatusSchema,
  ApiErrorRef,
  AskAccessRequest,
  AuthCheck,
  GatedRepositoryList,
  GatedRepositoryRequest,
  GrantAccessRequest,
  HandleAccessRequest,
  REPO_TYPES,
} from "@hub/api";
import { Type } from "@sinclair/typebox";
import { principalOf } from "../../../http/access.js";
import {
  cursorOffset,
  nextPageUrl,
  repoPathAccess,
  repoPathAction,
  repositoryOf,
} from "../../../http/repo-access.js";
import { type ReposService } from "../repos/repos.service.js";
import { gateModeOf } from "../../../domain/repositories.js";
import type { GatingService } from "./gating.service.js";

const NoContent = { type: "null", description: "Done." } as const;
const RepoParams = Type.Object({ owner: Type.String(), name: Type.String() });

/**
 * Gated repositories: asking for access (any signed-in reader), the review
 * endpoints of the repository's writers at the paths `huggingface_hub` calls
 * (`user-access-request/{pending,accepted,rejected}`, `handle`, `grant`), and
 * the caller's own requests, and `auth-check`, which `huggingface_hub` asks
 * before downloading. Gating itself is a repository setting
 * (`PUT /api/{type}s/{id}/settings`).
 */
export function gatingRoutes({
  gating,
  repos,
  publicUrl,
}: {
  gating: GatingService;
  repos: ReposService;
  publicUrl: string;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/api/me/gated-repositories",
      {
        schema: {
          operationId: "account_gated_repositories_list",
          tags: ["Account"],
          summary:
            "Your requests for access to gated repositories: the repository, its gating, the state of your request and the authors' decision.",
          response: { 200: GatedRepositoryList },
        },
        config: { access: { action: "settings:read" } },
      },
      async (request) => gating.mine(principalOf(request)),
    );

    for (const type of REPO_TYPES) {
      const api = `/api/${type}s/:owner/:name`;
      const tags = ["Repositories"];
      const { write } = repoPathAccess(repos, type);
      const asker = repoPathAction(repos, type, "repo:request-access");

      app.post(
        `${api}/ask-access`,
        {
          schema: {
            operationId: `repos_access_request_create_${type}`,
            tags,
            summary:
              "Ask for access to a gated repository: accepted at once in auto mode, pending review in manual mode. Your username, full name, email and fields are shown to its writers.",
            params: RepoParams,
            body: AskAccessRequest,
            response: { 201: GatedRepositoryRequest, 404: ApiErrorRef, 409: ApiErrorRef },
          },
          config: { access: asker },
        },
        async (request, reply) => {
          const asked = await gating.ask(repositoryOf(request), principalOf(request), request.body.fields);
          return reply.status(201).send(asked);
        },
      );

      app.delete(
        `${api}/ask-access`,
        {
          schema: {
            operationId: `repos_access_request_cancel_${type}`,
            tags,
            summary: "Withdraw your request for access while it is pending.",
            params: RepoParams,
            response: { 204: NoContent, 404: ApiErrorRef, 409: ApiErrorRef },
          },
          config: { access: asker },
        },
        async (request, reply) => {
          await gating.withdraw(repositoryOf(request), principalOf(request));
          return reply.status(204).send();
        },
      );

      for (const [suffix, action] of [
        ["", "repo:download"],
        ["/write", "repo:write"],
      ] as const) {
        app.get(
          `${api}/auth-check${suffix}`,
          {
            schema: {
              operationId: `repos_auth_check${suffix ? "_write" : ""}_${type}`,
              tags,
              summary: suffix
                ? "Whether you may write the repository (huggingface_hub's auth_check with write=True)."
                : "Whether you may download the repository's files: 401/403 with X-Error-Code GatedRepo for a gated repository you have no access to (huggingface_hub's auth_check).",
              params: RepoParams,
              response: { 200: AuthCheck, 404: ApiErrorRef },
            },
            config: { access: repoPathAction(repos, type, action) },
          },
          async (request) => {
            const repo = repositoryOf(request);
            return {
              id: repo.fullName,
              gated: gateModeOf(repo.row),
              access: suffix ? "write" : "read",
            } as const;
          },
        );
      }

      app.get(
        `${api}/user-access-request/:status`,
        {
          schema: {
            operationId: `repos_access_requests_list_${type}`,
            tags,
            summary:
              "The access requests of a gated repository in one state, oldest first, for its writers; paginated with an absolute Link header.",
            params: Type.Object({
              owner: Type.String(),
              name: Type.String(),
              status: AccessRequestStatusSchema,
            }),
            querystring: Type.Object(
              {
                limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
                cursor: Type.Optional(Type.String()),
              },
              { additionalProperties: true },
            ),
            response: { 200: Type.Array(AccessRequest), 404: ApiErrorRef },
          },
          config: { access: write },
        },
        async (request, reply) => {
          const offset = cursorOffset(request.query.cursor);
          const page = await gating.list(repositoryOf(request), request.params.status, {
            offset,
            limit: request.query.limit ?? 100,
          });
          if (page.next !== null) {
            reply.header("link", `<${nextPageUrl(publicUrl, request, page.next)}>; rel="next"`);
          }
          return page.items;
        },
      );

      app.post(
        `${api}/user-access-request/handle`,
        {
          schema: {
            operationId: `repos_access_request_handle_${type}`,
            tags,
            summary:
              "Accept, reject (with an optional reason shown to the requester) or reset to pending a user's access request; applies to their next download.",
            params: RepoParams,
            body: HandleAccessRequest,
            response: { 200: AccessRequest, 404: ApiErrorRef, 409: ApiErrorRef },
          },
          config: { access: write },
        },
        async (request) => gating.handle(repositoryOf(request), request.body),
      );

      app.post(
        `${api}/user-access-request/grant`,
        {
          schema: {
            operationId: `repos_access_request_grant_${type}`,
            tags,
            summary: "Give a user access to a gated repository without a request of theirs.",
            params: RepoParams,
            body: GrantAccessRequest,
            response: { 200: AccessRequest, 404: ApiErrorRef, 409: ApiErrorRef },
          },
          config: { access: write },
        },
        async (request) => gating.grant(repositoryOf(request), request.body.user),
      );
    }
  };
}
