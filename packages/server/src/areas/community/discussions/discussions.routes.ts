import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  ApiErrorRef,
  CommentParams,
  CommentRequest,
  CreateDiscussionRequest,
  CreatedDiscussion,
  DiscussionDetails,
  DiscussionList,
  DiscussionListQuery,
  DiscussionParams,
  EditCommentRequest,
  MergeRequest,
  Merged,
  NewMessage,
  NewStatus,
  NewTitle,
  REPO_TYPES,
  ReactionRequest,
  StatusRequest,
  TitleRequest,
  UpdatedComment,
} from "@hub/api";
import { Type } from "@sinclair/typebox";
import type { RepoLookup } from "../../../domain/repositories.js";
import { principalOf } from "../../../http/access.js";
import { repoPathAction, repositoryOf } from "../../../http/repo-access.js";
import type { DiscussionsService } from "./discussions.service.js";

const flag = (value: unknown) => typeof value === "string" && /^(1|true)$/i.test(value);

/**
 * `/api/{type}s/{id}/discussions`: discussions and pull requests, on the wire
 * of the Hugging Face clients (reference section 7). Reading follows the
 * repository's read rules; taking part needs `community:write`; merging, a
 * writer's `repo:write`; the service asks for the moderator's role where
 * someone acts on what another person wrote.
 */
export function discussionsRoutes({
  repos,
  discussions,
}: {
  repos: RepoLookup;
  discussions: DiscussionsService;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const type of REPO_TYPES) {
      const base = `/api/${type}s/:owner/:name/discussions`;
      const read = repoPathAction(repos, type, "repo:read");
      const takePart = repoPathAction(repos, type, "community:write");
      const write = repoPathAction(repos, type, "repo:write");
      const tags = ["Discussions"];

      app.get(
        base,
        {
          schema: {
            operationId: `discussions_list_${type}`,
            tags,
            summary: "List a repository's discussions and pull requests, 50 a page (p from 0), newest first.",
            querystring: DiscussionListQuery,
            response: { 200: DiscussionList, 404: ApiErrorRef },
          },
          config: { access: read },
        },
        async (request) => discussions.list(repositoryOf(request), request.query),
      );

      app.post(
        base,
        {
          schema: {
            operationId: `discussions_create_${type}`,
            tags,
            summary:
              "Open a discussion, or with pullRequest: true a draft pull request whose ref refs/pr/{num} starts at the default branch.",
            body: CreateDiscussionRequest,
            response: { 200: CreatedDiscussion, 404: ApiErrorRef, 409: ApiErrorRef },
          },
          config: { access: takePart },
        },
        async (request) => discussions.create(repositoryOf(request), principalOf(request), request.body),
      );

      app.get(
        `${base}/:num`,
        {
          schema: {
            operationId: `discussions_details_${type}`,
            tags,
            summary:
              "A discussion with its timeline; a pull request with its target, conflicts and (diff=1) diff.",
            params: DiscussionParams,
            querystring: Type.Object({ diff: Type.Optional(Type.String()) }, { additionalProperties: true }),
            response: { 200: DiscussionDetails, 404: ApiErrorRef },
          },
          config: { access: read },
        },
        async (request) =>
          discussions.details(
            repositoryOf(request),
            request.principal,
            request.params.num,
            flag(request.query.diff),
          ),
      );

      app.post(
        `${base}/:num/comment`,
        {
          schema: {
            operationId: `discussions_comment_${type}`,
            tags,
            summary: "Comment on a discussion (Markdown; @handle mentions notify those accounts).",
            params: DiscussionParams,
            body: CommentRequest,
            response: { 200: NewMessage, 404: ApiErrorRef },
          },
          config: { access: takePart },
        },
        async (request) =>
          discussions.comment(
            repositoryOf(request),
            principalOf(request),
            request.params.num,
            request.body.comment,
          ),
      );

      app.post(
        `${base}/:num/title`,
        {
          schema: {
            operationId: `discussions_rename_${type}`,
            tags,
            summary: "Rename a discussion: its author, or the repository's admins.",
            params: DiscussionParams,
            body: TitleRequest,
            response: { 200: NewTitle, 404: ApiErrorRef, 409: ApiErrorRef },
          },
          config: { access: takePart },
        },
        async (request) =>
          discussions.rename(
            repositoryOf(request),
            principalOf(request),
            request.params.num,
            request.body.title,
          ),
      );

      app.post(
        `${base}/:num/status`,
        {
          schema: {
            operationId: `discussions_status_${type}`,
            tags,
            summary:
              "Open, close (or, for a pull request, turn into a draft) a discussion: its author, or the repository's writers.",
            params: DiscussionParams,
            body: StatusRequest,
            response: { 200: NewStatus, 404: ApiErrorRef, 409: ApiErrorRef },
          },
          config: { access: takePart },
        },
        async (request) =>
          discussions.setStatus(
            repositoryOf(request),
            principalOf(request),
            request.params.num,
            request.body.status,
            request.body.comment,
          ),
      );

      app.post(
        `${base}/:num/merge`,
        {
          schema: {
            operationId: `discussions_merge_${type}`,
            tags,
            summary:
              "Merge a pull request into its target branch (fast-forward, else a merge commit); 409 names conflicting files.",
            params: DiscussionParams,
            body: MergeRequest,
            response: { 200: Merged, 404: ApiErrorRef, 409: ApiErrorRef },
          },
          config: { access: write, optionalBody: true },
        },
        async (request) =>
          discussions.merge(
            repositoryOf(request),
            principalOf(request),
            request.params.num,
            request.body?.comment ?? undefined,
          ),
      );

      app.post(
        `${base}/:num/comment/:commentId/edit`,
        {
          schema: {
            operationId: `discussions_comment_edit_${type}`,
            tags,
            summary: "Edit a comment: its author, or the repository's admins.",
            params: CommentParams,
            body: EditCommentRequest,
            response: { 200: UpdatedComment, 404: ApiErrorRef, 409: ApiErrorRef },
          },
          config: { access: takePart },
        },
        async (request) =>
          discussions.editComment(
            repositoryOf(request),
            principalOf(request),
            request.params.num,
            request.params.commentId,
            request.body.content,
          ),
      );

      app.post(
        `${base}/:num/comment/:commentId/hide`,
        {
          schema: {
            operationId: `discussions_comment_hide_${type}`,
            tags,
            summary: "Hide a comment (its text is no longer shown): its author, or the repository's admins.",
            params: CommentParams,
            response: { 200: UpdatedComment, 404: ApiErrorRef },
          },
          config: { access: takePart },
        },
        async (request) =>
          discussions.hideComment(
            repositoryOf(request),
            principalOf(request),
            request.params.num,
            request.params.commentId,
          ),
      );

      for (const [method, on] of [
        ["post", true],
        ["delete", false],
      ] as const) {
        app[method](
          `${base}/:num/comment/:commentId/reactions`,
          {
            schema: {
              operationId: `discussions_comment_${on ? "react" : "unreact"}_${type}`,
              tags,
              summary: on ? "React to a comment." : "Take back a reaction to a comment.",
              params: CommentParams,
              body: ReactionRequest,
              response: { 200: UpdatedComment, 404: ApiErrorRef },
            },
            config: { access: takePart },
          },
          async (request) =>
            discussions.react(
              repositoryOf(request),
              principalOf(request),
              request.params.num,
              request.params.commentId,
              request.body.reaction,
              on,
            ),
        );
      }
    }
  };
}
