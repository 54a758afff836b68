import { fail, type RequestEvent } from "@sveltejs/kit";
import type { DiscussionDetails, DiscussionEvent, DiscussionList, WhoamiV2 } from "@hub/api";
import { ApiFailure, call } from "$lib/server/api";
import { renderMarkdown, type RepoLinks } from "$lib/server/render";
import type { RepoAddress } from "$lib/server/repo";
import { encodePath } from "$lib/repos";
import type { Viewer } from "$lib/types";

type Fetch = RequestEvent["fetch"];

/** The largest comment the API takes (64 KiB less a byte), so a preview is never asked of more. */
const MAX_MARKDOWN_BYTES = 64 * 1024 - 1;

/** `/api/models/alice/gpt/discussions`. */
export const discussionsApi = (address: RepoAddress): string => `${address.api}/discussions`;

/** `/alice/gpt/discussions`. */
export const discussionsHref = (address: RepoAddress): string => `${address.href}/discussions`;

/**
 * How many discussions and pull requests of a repository are open (drafts included), for the Community tab;
 * null when the API will not say (rate limited, failing): the tab then shows no count rather than the page failing.
 */
export async function openCount(fetch: Fetch, address: RepoAddress): Promise<number | null> {
  try {
    const { data } = await call<DiscussionList>(fetch, `${discussionsApi(address)}?status=open`);
    return data.count;
  } catch (err) {
    if (err instanceof ApiFailure) return null;
    throw err;
  }
}

/** Where a comment's relative links and images point: the files of a branch of the repository. */
export function linksOf(address: RepoAddress, branch: string): RepoLinks {
  const rev = encodeURIComponent(branch);
  return { blobBase: `${address.href}/blob/${rev}`, rawBase: `${address.href}/resolve/${rev}` };
}

/** The branch a discussion's links resolve in: a pull request's target, else the repository's default branch. */
export function branchOf(discussion: DiscussionDetails, defaultBranch: string): string {
  return discussion.changes?.base.replace(/^refs\/heads\//, "") ?? defaultBranch;
}

/** A timeline event as the page shows it: a comment with its Markdown rendered (and sanitized) here. */
export type TimelineEvent = DiscussionEvent & { html?: string };

/** Renders every visible comment of a timeline with `renderMarkdown`, the one sanitizer pages trust. */
export function renderTimeline(events: DiscussionEvent[], links: RepoLinks): TimelineEvent[] {
  return events.map((event) =>
    event.type === "comment" && !event.data.hidden && event.data.latest.raw !== ""
      ? { ...event, html: renderMarkdown(event.data.latest.raw, links) }
      : event,
  );
}

/**
 * Whether the viewer administers a repository of `owner`: the owner themself, or an admin of the organization
 * that owns it (who may rename discussions and edit or hide others' comments). It only decides which controls
 * show; the API decides what is done. Asks `whoami-v2` only for a member of that organization.
 */
export async function administers(fetch: Fetch, viewer: Viewer | null, owner: string): Promise<boolean> {
  if (!viewer) return false;
  if (viewer.name === owner) return true;
  if (!viewer.orgs.includes(owner)) return false;
  const { data } = await call<WhoamiV2>(fetch, "/api/whoami-v2");
  return data.orgs.some((org) => org.name === owner && org.roleInOrg === "admin");
}

/** The Markdown fields a preview may render, by form field name. */
const PREVIEWED = new Set(["comment", "description", "content"]);

/**
 * The `preview` form action of the pages with a Markdown box: renders what was typed through `renderMarkdown`
 * (never in the browser), and sends the text back so the box keeps it. `commentId` says which comment's edit
 * box asked. Works without JavaScript: the page comes back with the preview under the box.
 */
export function preview(form: FormData, links: RepoLinks) {
  const field = String(form.get("preview") ?? "");
  if (!PREVIEWED.has(field)) return fail(400, { action: "preview" as const, message: "Nothing to preview." });
  const text = String(form.get(field) ?? "").replace(/\r\n/g, "\n");
  const commentId = String(form.get("commentId") ?? "") || null;
  // What else the form held, so a preview without JavaScript gives the whole form back.
  const title = String(form.get("title") ?? "");
  const pullRequest = form.get("pullRequest") === "1";
  if (new TextEncoder().encode(text).length > MAX_MARKDOWN_BYTES)
    return fail(400, {
      action: "preview" as const,
      field,
      commentId,
      title,
      pullRequest,
      text,
      message: "This is 64 KiB or more; shorten it (or attach a file to the repository and link it).",
    });
  return {
    action: "preview" as const,
    field,
    commentId,
    title,
    pullRequest,
    text,
    html: renderMarkdown(text, links),
  };
}

/** `/alice/gpt/discussions/3`. */
export const discussionHref = (address: RepoAddress, num: number): string =>
  `${discussionsHref(address)}/${num}`;

/** A commit's page. */
export const commitHref = (address: RepoAddress, oid: string): string =>
  `${address.href}/commit/${encodePath(oid)}`;
