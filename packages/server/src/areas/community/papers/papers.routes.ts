import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  PaperSummary,
  ApiErrorRef,
  DailyPaper,
  DailyPapersQuery,
  CreatePaperClaim,
  CreatePaperSubmission,
  Paper,
  PaperClaim,
  PaperClaimList,
  PaperSubmission,
  PaperSubmissionList,
  UpdatePaper,
  UpdatePaperClaim,
} from "@hub/api";
import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { principalOf } from "../../../http/access.js";
import { dailyPeriod } from "./daily-period.js";
import type { PapersService } from "./papers.service.js";

const tags = ["Account"];
const NoContent = { type: "null", description: "Done." } as const;
const Id = Type.String({ maxLength: 64 });

/**
 * A paper's path: `/api/papers/2106.09685`, and for old identifiers either
 * `/api/papers/hep-th%2F9901001` or, as written, `/api/papers/hep-th/9901001`
 * (a second, undocumented route).
 */
const PAPER_PATHS = [
  { url: "/api/papers/:arxivId", params: Type.Object({ arxivId: Id }), hide: false },
  {
    url: "/api/papers/:archive/:number",
    params: Type.Object({ archive: Type.String({ maxLength: 32 }), number: Type.String({ maxLength: 32 }) }),
    hide: true,
  },
] as const;

function arxivIdParam(request: FastifyRequest): string {
  const params = request.params as { arxivId?: string; archive?: string; number?: string };
  return params.arxivId ?? `${params.archive ?? ""}/${params.number ?? ""}`;
}

/**
 * Paper claims and submissions of the caller's account (a session or a role
 * token, read to view and write to change), and the public paper pages with
 * their edits by the paper's editors.
 */
export function papersRoutes({ papers }: { papers: PapersService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/api/papers/search",
      {
        schema: {
          operationId: "papers_search",
          tags,
          summary:
            "Papers on this hub whose arXiv id, title or authors hold q, newest first (huggingface_hub's list_papers).",
          querystring: Type.Object({
            q: Type.Optional(Type.String({ maxLength: 200 })),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
          }),
          response: { 200: Type.Array(PaperSummary) },
        },
        config: { access: "public" },
      },
      async (request) => papers.search(request.query.q ?? "", request.query.limit ?? 50),
    );

    app.get(
      "/api/me/papers",
      {
        schema: {
          operationId: "account_papers_list",
          tags,
          summary: "The papers you claimed authorship of, newest first, visible or not.",
          response: { 200: PaperClaimList },
        },
        config: { access: { action: "settings:read" } },
      },
      async (request) => ({ claims: await papers.claims(principalOf(request).userId) }),
    );

    app.post(
      "/api/me/papers",
      {
        schema: {
          operationId: "account_papers_create",
          tags,
          summary:
            "Claim authorship of a paper by arXiv id, as one of its authors; an unknown paper is recorded from the metadata sent.",
          body: CreatePaperClaim,
          response: { 201: PaperClaim, 409: ApiErrorRef },
        },
        config: { access: { action: "settings:write" } },
      },
      async (request, reply) =>
        reply.status(201).send(await papers.claim(principalOf(request), request.body)),
    );

    app.patch(
      "/api/me/papers/:claimId",
      {
        schema: {
          operationId: "account_papers_visibility_update",
          tags,
          summary: "Show or hide a claim on your public profile and on the paper.",
          params: Type.Object({ claimId: Id }),
          body: UpdatePaperClaim,
          response: { 200: PaperClaim, 404: ApiErrorRef },
        },
        config: { access: { action: "settings:write" } },
      },
      async (request) =>
        papers.setVisibility(principalOf(request).userId, request.params.claimId, request.body.visible),
    );

    app.delete(
      "/api/me/papers/:claimId",
      {
        schema: {
          operationId: "account_papers_withdraw",
          tags,
          summary: "Withdraw a claim; the paper's record goes too when nothing else refers to it.",
          params: Type.Object({ claimId: Id }),
          response: { 204: NoContent, 404: ApiErrorRef },
        },
        config: { access: { action: "settings:write" } },
      },
      async (request, reply) => {
        await papers.withdrawClaim(principalOf(request).userId, request.params.claimId);
        return reply.status(204).send();
      },
    );

    app.get(
      "/api/me/paper-submissions",
      {
        schema: {
          operationId: "account_paper_submissions_list",
          tags,
          summary:
            "The papers you submitted to the papers page, newest first, with whether authors claimed them.",
          response: { 200: PaperSubmissionList },
        },
        config: { access: { action: "settings:read" } },
      },
      async (request) => ({ submissions: await papers.submissions(principalOf(request).userId) }),
    );

    app.post(
      "/api/me/paper-submissions",
      {
        schema: {
          operationId: "account_paper_submissions_create",
          tags,
          summary:
            "Submit a paper (arXiv id and, for a paper the hub does not know, its metadata) to the papers page.",
          body: CreatePaperSubmission,
          response: { 201: PaperSubmission, 409: ApiErrorRef },
        },
        config: { access: { action: "settings:write" } },
      },
      async (request, reply) =>
        reply.status(201).send(await papers.submit(principalOf(request), request.body)),
    );

    app.delete(
      "/api/me/paper-submissions/:submissionId",
      {
        schema: {
          operationId: "account_paper_submissions_withdraw",
          tags,
          summary: "Withdraw a submission; the paper's record goes too unless an authorship claim keeps it.",
          params: Type.Object({ submissionId: Id }),
          response: { 204: NoContent, 404: ApiErrorRef },
        },
        config: { access: { action: "settings:write" } },
      },
      async (request, reply) => {
        await papers.withdrawSubmission(principalOf(request).userId, request.params.submissionId);
        return reply.status(204).send();
      },
    );

    app.get(
      "/api/daily_papers",
      {
        schema: {
          operationId: "papers_daily",
          tags: ["Papers"],
          summary:
            "Papers submitted to the hub's papers page, newest first, in a day, week or month, by a submitter; paginated with p and limit.",
          querystring: DailyPapersQuery,
          response: { 200: Type.Array(DailyPaper) },
        },
        config: { access: "public" },
      },
      async (request) => {
        const limit = request.query.limit ?? 50;
        return papers.daily({
          ...dailyPeriod(request.query),
          submitter: request.query.submitter,
          offset: (request.query.p ?? 0) * limit,
          limit,
        });
      },
    );

    app.get(
      "/papers/:arxivId.md",
      {
        schema: {
          operationId: "papers_markdown",
          tags: ["Papers"],
          summary: "A paper as a Markdown page: title, authors, arXiv link and abstract.",
          params: Type.Object({ arxivId: Id }),
          produces: ["text/markdown"],
          response: { 200: Type.String(), 404: ApiErrorRef },
        },
        config: { access: "public" },
      },
      async (request, reply) =>
        reply
          .header("content-type", "text/markdown; charset=utf-8")
          .header("x-content-type-options", "nosniff")
          .send(await papers.markdown(request.params.arxivId)),
    );

    for (const path of PAPER_PATHS) {
      app.get(
        path.url,
        {
          schema: {
            operationId: path.hide ? "papers_get_old_form" : "papers_get",
            tags: ["Papers"],
            summary:
              "A paper: its metadata, the authors who claimed it, its submitter, and the repositories citing it that you may read.",
            params: path.params,
            response: { 200: Paper, 404: ApiErrorRef },
            hide: path.hide,
          },
          config: { access: "optional" },
        },
        async (request) => papers.paper(request.principal, arxivIdParam(request)),
      );

      app.patch(
        path.url,
        {
          schema: {
            operationId: path.hide ? "papers_update_old_form" : "papers_update",
            tags: ["Papers"],
            summary:
              "Edit a paper's metadata: its authors who claimed it may, or while none has, its submitter.",
            params: path.params,
            body: UpdatePaper,
            response: { 200: Paper, 404: ApiErrorRef },
            hide: path.hide,
          },
          config: {
            access: {
              action: "paper:edit",
              resource: (request) => papers.editResource(arxivIdParam(request)),
            },
          },
        },
        async (request) => papers.update(principalOf(request), arxivIdParam(request), request.body),
      );
    }
  };
}
