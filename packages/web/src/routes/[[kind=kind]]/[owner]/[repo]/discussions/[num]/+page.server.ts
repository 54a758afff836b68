import { fail } from "@sveltejs/kit";
import type { Reaction } from "@hub/api";
import { ApiFailure, call } from "$lib/server/api";
import { branchOf, discussionsApi, linksOf, preview, renderTimeline } from "$lib/server/discussions";
import { addressOf } from "$lib/server/repo";
import { REACTION_LIST } from "$lib/reactions";
import type { Actions, PageServerLoad } from "./$types";

/** The conversation: the timeline with every comment rendered on the server (lib/server/render.ts). */
export const load: PageServerLoad = async ({ parent }) => {
  const { address, discussion, defaultBranch } = await parent();
  const branch = branchOf(discussion, defaultBranch);
  return { branch, timeline: renderTimeline(discussion.events, linksOf(address, branch)) };
};

type Action = "comment" | "status" | "merge" | "rename" | "edit" | "hide" | "react";

/** Calls one discussion operation of the API; its refusal comes back as the form's message, for that form. */
async function attempt(
  action: Action,
  work: () => Promise<unknown>,
  kept: { commentId?: string; text?: string; title?: string } = {},
) {
  try {
    await work();
    return { action, done: true as const, commentId: kept.commentId ?? null };
  } catch (err) {
    if (!(err instanceof ApiFailure) || err.status >= 500) throw err;
    return fail(err.status, {
      action,
      message: err.message,
      commentId: kept.commentId ?? null,
      text: kept.text ?? null,
      title: kept.title ?? null,
    });
  }
}

/** What a form sent as a discussion's number and the API's path for it. */
function target(params: { kind?: string; owner: string; repo: string; num: string }) {
  return `${discussionsApi(addressOf(params))}/${encodeURIComponent(params.num)}`;
}

const text = (form: FormData, name: string) => String(form.get(name) ?? "").replace(/\r\n/g, "\n");
const post = (fetch: typeof globalThis.fetch, path: string, body?: unknown) =>
  call(fetch, path, { method: "POST", ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

/** A comment id as the API names them (24 hex digits); anything else would not be a path segment of it. */
const commentIdOf = (form: FormData) => {
  const id = String(form.get("commentId") ?? "");
  return /^[0-9a-f]{24}$/.test(id) ? id : null;
};

export const actions: Actions = {
  comment: async ({ request, params, fetch }) => {
    const form = await request.formData();
    const comment = text(form, "comment");
    if (comment.trim() === "")
      return fail(400, {
        action: "comment",
        message: "Write a comment first.",
        commentId: null,
        text: comment,
        title: null,
      });
    return attempt("comment", () => post(fetch, `${target(params)}/comment`, { comment }), { text: comment });
  },

  /** Close, reopen, turn into a draft or mark ready; the comment box's text goes with it as a comment. */
  status: async ({ request, params, fetch }) => {
    const form = await request.formData();
    const status = String(form.get("status") ?? "");
    const comment = text(form, "comment");
    if (status !== "open" && status !== "closed" && status !== "draft")
      return fail(400, {
        action: "status",
        message: "Choose open, closed or draft.",
        commentId: null,
        text: comment,
        title: null,
      });
    return attempt(
      "status",
      () =>
        post(fetch, `${target(params)}/status`, {
          status,
          ...(comment.trim() === "" ? {} : { comment }),
        }),
      { text: comment },
    );
  },

  merge: async ({ request, params, fetch }) => {
    const form = await request.formData();
    const comment = text(form, "mergeComment");
    return attempt("merge", () =>
      post(fetch, `${target(params)}/merge`, comment.trim() === "" ? {} : { comment }),
    );
  },

  rename: async ({ request, params, fetch }) => {
    const form = await request.formData();
    const title = String(form.get("title") ?? "").trim();
    if (title === "")
      return fail(400, {
        action: "rename",
        message: "Give the discussion a title.",
        commentId: null,
        text: null,
        title,
      });
    return attempt("rename", () => post(fetch, `${target(params)}/title`, { title }), { title });
  },

  edit: async ({ request, params, fetch }) => {
    const form = await request.formData();
    const commentId = commentIdOf(form);
    const content = text(form, "content");
    if (commentId === null)
      return fail(400, {
        action: "edit",
        message: "No such comment.",
        commentId: null,
        text: content,
        title: null,
      });
    if (content.trim() === "")
      return fail(400, {
        action: "edit",
        message: "A comment cannot be empty; hide it instead.",
        commentId,
        text: content,
        title: null,
      });
    return attempt("edit", () => post(fetch, `${target(params)}/comment/${commentId}/edit`, { content }), {
      commentId,
      text: content,
    });
  },

  hide: async ({ request, params, fetch }) => {
    const commentId = commentIdOf(await request.formData());
    if (commentId === null)
      return fail(400, {
        action: "hide",
        message: "No such comment.",
        commentId: null,
        text: null,
        title: null,
      });
    return attempt("hide", () => post(fetch, `${target(params)}/comment/${commentId}/hide`), { commentId });
  },

  /** Adds a reaction, or takes it back (`on=0`). */
  react: async ({ request, params, fetch }) => {
    const form = await request.formData();
    const commentId = commentIdOf(form);
    const reaction = String(form.get("reaction") ?? "");
    if (commentId === null || !(REACTION_LIST as string[]).includes(reaction))
      return fail(400, {
        action: "react",
        message: "Choose one of the reactions.",
        commentId,
        text: null,
        title: null,
      });
    return attempt(
      "react",
      () =>
        call(fetch, `${target(params)}/comment/${commentId}/reactions`, {
          method: form.get("on") === "0" ? "DELETE" : "POST",
          body: JSON.stringify({ reaction: reaction as Reaction }),
        }),
      { commentId },
    );
  },

  preview: async ({ request, params }) => {
    const form = await request.formData();
    return preview(form, linksOf(addressOf(params), String(form.get("branch") ?? "") || "main"));
  },
};
