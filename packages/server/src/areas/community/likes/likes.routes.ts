import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { ApiErrorRef, LikedRepo, LikeState, REPO_TYPES, RepoLiker } from "@hub/api";
import { Type } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { RepoLookup } from "../../../domain/repositories.js";
import { principalOf } from "../../../http/access.js";
import { cursorOffset, nextPageUrl, repoPathAction, repositoryOf } from "../../../http/repo-access.js";
import type { LikesPage, LikesService } from "./likes.service.js";

const PAGE_SIZE = 100;
const PageQuery = Type.Object({ cursor: Type.Optional(Type.String()) });

/**
 * Likes on the wire of the Hugging Face clients: `POST`/`DELETE
 * /api/{type}s/{id}/like` (what the website sends; `huggingface_hub`'s
 * `unlike`), with `community:write` and read access; `GET …/likers`
 * (`list_repo_likers`) for whoever may read the repository; and `GET
 * /api/users/{handle}/likes` (`list_liked_repos`) for anyone, showing each
 * viewer what it may read. Lists are paginated with a Link header.
 */
export function likesRoutes({
  repos,
  likes,
  publicUrl,
}: {
  repos: RepoLookup;
  likes: LikesService;
  publicUrl: string;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ["Repo Search"];
    const send = <T>(request: FastifyRequest, reply: FastifyReply, page: LikesPage<T>): T[] => {
      if (page.next !== null)
        reply.header("link", `<${nextPageUrl(publicUrl, request, page.next)}>; rel="next"`);
      return page.items;
    };

    for (const type of REPO_TYPES) {
      const base = `/api/${type}s/:owner/:name`;
      const takePart = repoPathAction(repos, type, "community:write");
      app.post(
        `${base}/like`,
        {
          schema: {
            operationId: `likes_like_${type}`,
            tags,
            summary: "Like a repository; liking it again changes nothing.",
            response: { 200: LikeState, 404: ApiErrorRef },
          },
          config: { access: takePart },
        },
        async (request) => likes.like(repositoryOf(request), principalOf(request)),
      );
      app.get(
        `${base}/like`,
        {
          schema: {
            operationId: `likes_state_${type}`,
            tags,
            summary:
              "Whether you like a repository and how many do (what the website's like button shows); never liked without a credential.",
            response: { 200: LikeState, 404: ApiErrorRef },
          },
          config: { access: repoPathAction(repos, type, "repo:read") },
        },
        async (request) => likes.likeState(repositoryOf(request), request.principal),
      );
      app.delete(
        `${base}/like`,
        {
          schema: {
            operationId: `likes_unlike_${type}`,
            tags,
            summary: "Take back a like; not liking the repository is no error.",
            response: { 200: LikeState, 404: ApiErrorRef },
          },
          config: { access: takePart },
        },
        async (request) => likes.unlike(repositoryOf(request), principalOf(request)),
      );
      app.get(
        `${base}/likers`,
        {
          schema: {
            operationId: `likes_likers_${type}`,
            tags,
            summary: "The accounts that liked a repository, first like first, paginated with a Link header.",
            querystring: PageQuery,
            response: { 200: Type.Array(RepoLiker), 404: ApiErrorRef },
          },
          config: { access: repoPathAction(repos, type, "repo:read") },
        },
        async (request, reply) =>
          send(
            request,
            reply,
            await likes.likers(repositoryOf(request), cursorOffset(request.query.cursor), PAGE_SIZE),
          ),
      );
    }

    app.get(
      "/api/users/:handle/likes",
      {
        schema: {
          operationId: "likes_of_user",
          tags,
          summary:
            "The repositories an account liked, newest first, paginated with a Link header; private ones only for who may read them.",
          params: Type.Object({ handle: Type.String({ maxLength: 100 }) }),
          querystring: PageQuery,
          response: { 200: Type.Array(LikedRepo), 404: ApiErrorRef },
        },
        config: { access: "optional" },
      },
      async (request, reply) =>
        send(
          request,
          reply,
          await likes.likedBy(
            request.principal,
            request.params.handle,
            cursorOffset(request.query.cursor),
            PAGE_SIZE,
          ),
        ),
    );
  };
}
