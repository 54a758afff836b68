import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { ApiErrorRef, CommitDiff, CommitItem, REPO_TYPES } from "@hub/api";
import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { badRequest } from "../../../errors.js";
import { principalOf } from "../../../http/access.js";
import { escapeHtml } from "../../../http/html.js";
import { repoPathAccess, repoPathAction, repositoryOf } from "../../../http/repo-access.js";
import type { ReposService } from "../repos/repos.service.js";
import type { RefsService } from "./refs.service.js";

const RefItem = Type.Object({ name: Type.String(), ref: Type.String(), targetCommit: Type.String() });
const Refs = Type.Object({
  branches: Type.Array(RefItem),
  tags: Type.Array(RefItem),
  converts: Type.Array(RefItem),
  pullRequests: Type.Optional(Type.Array(RefItem)),
});
const Done = { type: "null", description: "Done." } as const;
const flag = (value: unknown) => typeof value === "string" && /^(1|true)$/i.test(value);

/** Whether a history request asks for `formatted` (the only field it can expand); anything else is refused. */
function wantsFormatted(query: Record<string, unknown>): boolean {
  const asked = [query.expand, query["expand[]"]]
    .flatMap((value) => (value === undefined ? [] : Array.isArray(value) ? value : [value]))
    .map(String);
  const other = asked.find((field) => field !== "formatted");
  if (other !== undefined) {
    throw badRequest(
      "unsupported_parameter",
      `expand: "${other}" is not available on the history; ask for formatted.`,
      "expand",
    );
  }
  return asked.length > 0;
}

/** The title and message as HTML: escaped text, line breaks kept. */
const formatted = (item: CommitItem) => ({
  title: escapeHtml(item.title),
  message: escapeHtml(item.message).replace(/\n/g, "<br>"),
});

/** Refs, branches, tags and the commit history, in the shape the Hugging Face clients read. */
export function refsRoutes({
  repos,
  refs,
  publicUrl,
}: {
  repos: ReposService;
  refs: RefsService;
  publicUrl: string;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const type of REPO_TYPES) {
      const api = `/api/${type}s/:owner/:name`;
      const { read, write } = repoPathAccess(repos, type);
      const tags = ["Repositories"];
      const param = (request: FastifyRequest, key: string) =>
        (request.params as Record<string, string>)[key] ?? "";

      app.get(
        `${api}/refs`,
        {
          schema: {
            operationId: `refs_list_${type}`,
            tags,
            summary: "Branches, tags, conversions and (with include_prs=1) pull-request refs.",
            querystring: Type.Object(
              { include_prs: Type.Optional(Type.String()) },
              { additionalProperties: true },
            ),
            response: { 200: Refs, 404: ApiErrorRef },
          },
          config: { access: read },
        },
        async (request) => refs.list(repositoryOf(request), flag(request.query.include_prs)),
      );

      app.post(
        `${api}/branch/:branch`,
        {
          schema: {
            operationId: `refs_branch_create_${type}`,
            tags,
            summary: "Create a branch at a revision (the default branch when none is given).",
            body: Type.Object(
              {
                startingPoint: Type.Optional(Type.Union([Type.String(), Type.Null()])),
                overwrite: Type.Optional(Type.Boolean()),
                emptyBranch: Type.Optional(Type.Boolean()),
              },
              { additionalProperties: true },
            ),
            response: { 200: Done, 404: ApiErrorRef, 409: ApiErrorRef },
          },
          config: { access: write },
        },
        async (request, reply) => {
          await refs.createBranch(repositoryOf(request), principalOf(request), param(request, "branch"), {
            startingPoint: request.body.startingPoint ?? undefined,
            overwrite: request.body.overwrite === true,
            empty: request.body.emptyBranch === true,
          });
          return reply.status(200).send();
        },
      );

      app.delete(
        `${api}/branch/:branch`,
        {
          schema: {
            operationId: `refs_branch_delete_${type}`,
            tags,
            summary: "Delete a branch other than the default one.",
            response: { 200: Done, 404: ApiErrorRef },
          },
          config: { access: write },
        },
        async (request, reply) => {
          await refs.deleteBranch(repositoryOf(request), principalOf(request), param(request, "branch"));
          return reply.status(200).send();
        },
      );

      app.post(
        `${api}/tag/:rev`,
        {
          schema: {
            operationId: `refs_tag_create_${type}`,
            tags,
            summary: "Tag a revision; a message makes an annotated tag.",
            body: Type.Object(
              {
                tag: Type.String({ minLength: 1 }),
                message: Type.Optional(Type.Union([Type.String(), Type.Null()])),
              },
              { additionalProperties: true },
            ),
            response: { 200: Done, 404: ApiErrorRef, 409: ApiErrorRef },
          },
          config: { access: write },
        },
        async (request, reply) => {
          await refs.createTag(
            repositoryOf(request),
            principalOf(request),
            param(request, "rev"),
            request.body.tag,
            request.body.message ?? undefined,
          );
          return reply.status(200).send();
        },
      );

      app.delete(
        `${api}/tag/:tag`,
        {
          schema: {
            operationId: `refs_tag_delete_${type}`,
            tags,
            summary: "Delete a tag.",
            response: { 200: Done, 404: ApiErrorRef },
          },
          config: { access: write },
        },
        async (request, reply) => {
          await refs.deleteTag(repositoryOf(request), principalOf(request), param(request, "tag"));
          return reply.status(200).send();
        },
      );

      app.get(
        `${api}/commits/:rev`,
        {
          schema: {
            operationId: `refs_commits_${type}`,
            tags,
            summary:
              "The history at a revision, newest first, each commit with its signature state; X-Total-Count holds the total and Link the next page.",
            querystring: Type.Object(
              {
                limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
                p: Type.Optional(Type.Integer({ minimum: 0 })),
              },
              { additionalProperties: true },
            ),
            response: { 200: Type.Array(CommitItem), 404: ApiErrorRef },
          },
          config: { access: read },
        },
        async (request, reply) => {
          const expandFormatted = wantsFormatted(request.query as Record<string, unknown>);
          const limit = request.query.limit ?? 100;
          const page = request.query.p ?? 0;
          const { total, items } = await refs.commits(
            repositoryOf(request),
            param(request, "rev"),
            page,
            limit,
          );
          reply.header("x-total-count", String(total));
          if ((page + 1) * limit < total) {
            // The rest of the query (expand[]=formatted) holds on every page.
            const next = new URL(`${publicUrl}${request.url}`);
            next.searchParams.set("limit", String(limit));
            next.searchParams.set("p", String(page + 1));
            reply.header("link", `<${next.href}>; rel="next"`);
          }
          return expandFormatted ? items.map((item) => ({ ...item, formatted: formatted(item) })) : items;
        },
      );

      app.get(
        `${api}/commit/:rev`,
        {
          schema: {
            operationId: `refs_commit_${type}`,
            tags,
            summary: "One commit, by any revision that names it, with its signature state.",
            response: { 200: CommitItem, 404: ApiErrorRef },
          },
          config: { access: read },
        },
        async (request) => refs.commit(repositoryOf(request), param(request, "rev")),
      );

      app.get(
        `${api}/commit/:rev/diff`,
        {
          schema: {
            operationId: `refs_commit_diff_${type}`,
            tags,
            summary:
              "What one commit changed against its first parent, file by file: lines for text files, sizes for binary files, the objects for Git LFS files; cut at the limits the answer states.",
            response: { 200: CommitDiff, 403: ApiErrorRef, 404: ApiErrorRef },
          },
          // The lines are the files' content: a gated repository shows them to those it lets download.
          config: { access: repoPathAction(repos, type, "repo:download") },
        },
        async (request) => refs.diff(repositoryOf(request), param(request, "rev")),
      );
    }
  };
}
