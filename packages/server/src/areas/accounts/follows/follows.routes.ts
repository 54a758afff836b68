import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { ApiErrorRef, FollowEntry } from "@hub/api";
import { Type } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { principalOf } from "../../../http/access.js";
import { cursorOffset, nextPageUrl } from "../../../http/repo-access.js";
import type { FollowPage, FollowsService } from "./follows.service.js";

const FOLLOW_PAGE_SIZE = 100;
const HandleParams = Type.Object({ handle: Type.String({ maxLength: 100 }) });
const PageQuery = Type.Object({ cursor: Type.Optional(Type.String()) });
const Done = { type: "null", description: "Done." } as const;

/**
 * Following accounts and organizations (`POST`/`DELETE …/follow`, with
 * `community:write`), and the lists the Python client reads
 * (`list_user_followers`, `list_user_following`, `list_organization_followers`),
 * which anyone may read, paginated with a Link header.
 */
export function followsRoutes({
  follows,
  publicUrl,
}: {
  follows: FollowsService;
  publicUrl: string;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ["Users"];
    const send = (request: FastifyRequest, reply: FastifyReply, page: FollowPage) => {
      if (page.next !== null)
        reply.header("link", `<${nextPageUrl(publicUrl, request, page.next)}>; rel="next"`);
      return page.items;
    };
    const handleOf = (request: FastifyRequest) => (request.params as { handle: string }).handle;

    for (const [kind, path] of [
      ["user", "/api/users/:handle/follow"],
      ["organization", "/api/organizations/:handle/follow"],
    ] as const) {
      app.post(
        path,
        {
          schema: {
            operationId: `follows_follow_${kind}`,
            tags,
            summary: `Follow ${kind === "user" ? "an account" : "an organization"}; following again changes nothing.`,
            params: HandleParams,
            response: { 204: Done, 404: ApiErrorRef },
          },
          config: { access: { action: "community:write" } },
        },
        async (request, reply) => {
          const principal = principalOf(request);
          if (kind === "user") await follows.followUser(principal, handleOf(request));
          else await follows.followOrganization(principal, handleOf(request));
          return reply.status(204).send();
        },
      );
      app.delete(
        path,
        {
          schema: {
            operationId: `follows_unfollow_${kind}`,
            tags,
            summary: `Stop following ${kind === "user" ? "an account" : "an organization"}.`,
            params: HandleParams,
            response: { 204: Done, 404: ApiErrorRef },
          },
          config: { access: { action: "community:write" } },
        },
        async (request, reply) => {
          const principal = principalOf(request);
          if (kind === "user") await follows.unfollowUser(principal, handleOf(request));
          else await follows.unfollowOrganization(principal, handleOf(request));
          return reply.status(204).send();
        },
      );
    }

    for (const [operationId, path, summary, read] of [
      [
        "follows_user_followers",
        "/api/users/:handle/followers",
        "The accounts following an account.",
        follows.followersOfUser,
      ],
      [
        "follows_user_following",
        "/api/users/:handle/following",
        "The accounts an account follows.",
        follows.followedBy,
      ],
      [
        "follows_organization_followers",
        "/api/organizations/:handle/followers",
        "The accounts following an organization.",
        follows.followersOfOrganization,
      ],
    ] as const) {
      app.get(
        path,
        {
          schema: {
            operationId,
            tags,
            summary: `${summary} Paginated with a Link header.`,
            params: HandleParams,
            querystring: PageQuery,
            response: { 200: Type.Array(FollowEntry), 404: ApiErrorRef },
          },
          config: { access: "public" },
        },
        async (request, reply) =>
          send(
            request,
            reply,
            await read(handleOf(request), cursorOffset(request.query.cursor), FOLLOW_PAGE_SIZE),
          ),
      );
    }
  };
}
