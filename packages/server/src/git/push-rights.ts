import type { PushablePullRequests } from "../domain/pull-requests.js";
import { pullRequestNumber } from "./pull-requests.js";

/**
 * What one push may update: branches and tags (the repository's writers), and
 * the pull requests of `pullRequests.allowed`. Writers may push everything but
 * closed and merged pull requests; a caller who may only take part in the
 * repository's discussions (`community:write`) may push to their own open
 * pull requests and nothing else.
 */
export interface PushRights {
  branches: boolean;
  pullRequests: PushablePullRequests;
}

/**
 * Why a push to a ref is refused, worded once for the pre-receive hook (which
 * fills in `$ref` and `$num` itself, inside double quotes: the texts hold no
 * `"`, `$`, `` ` `` or `\`) and for the Git LFS batch API.
 */
export const PUSH_REFUSALS = {
  notPullRequestRef: (ref: string) => `${ref}: pull request refs are refs/pr/<number>.`,
  deletePullRequest: (ref: string, num: string) =>
    `${ref}: pull request refs cannot be deleted; close pull request #${num} instead.`,
  rewrite: (ref: string) =>
    `${ref}: this repository denies force pushes (denyForcePush); fetch ${ref}, build on it and push again.`,
  merged: (ref: string, num: string) => `${ref}: pull request #${num} is merged; open a new pull request.`,
  closed: (ref: string, num: string) =>
    `${ref}: pull request #${num} is closed; reopen it before pushing to it.`,
  notYours: (ref: string, num: string) =>
    `${ref}: pull request #${num} is not yours; push to your own pull request or ask a writer.`,
  unknown: (ref: string, num: string) =>
    `${ref}: there is no pull request #${num}; open one first, then push to the ref it names.`,
  writersOnly: (ref: string) =>
    `${ref}: only the repository's writers may push branches and tags; push to a pull request of yours (refs/pr/<number>) instead.`,
};

const numbers = (list: number[]) => list.filter((num) => Number.isSafeInteger(num) && num > 0).join(" ");

/**
 * The rights as the pre-receive hook reads them: environment variables only
 * (never text in the script), lists of decimal numbers separated by spaces.
 */
export function pushHookEnvironment({ branches, pullRequests }: PushRights): Record<string, string> {
  return {
    HUB_PUSH_BRANCHES: branches ? "1" : "0",
    HUB_PUSH_PULL_REQUESTS: numbers(pullRequests.allowed),
    HUB_PULL_REQUESTS_NOT_YOURS: numbers(pullRequests.notYours),
    HUB_PULL_REQUESTS_MERGED: numbers(pullRequests.merged),
    HUB_PULL_REQUESTS_CLOSED: numbers(pullRequests.closed),
  };
}

/** Whether the rights allow any push at all; a caller with none is refused before git starts. */
export function mayPushAnything(rights: PushRights): boolean {
  return rights.branches || rights.pullRequests.allowed.length > 0;
}

/**
 * Why a caller who may not push branches is refused a push to `ref`, in the
 * hook's words; null when the ref is one of their open pull requests. (A
 * writer's push is checked by the hook alone.)
 */
export function pullRequestOnlyRefusal(rights: PushRights, ref: string): string | null {
  if (rights.branches) return null;
  const num = pullRequestNumber(ref);
  if (num === null)
    return ref.startsWith("refs/pr/") ? PUSH_REFUSALS.notPullRequestRef(ref) : PUSH_REFUSALS.writersOnly(ref);
  const { allowed, merged, closed, notYours } = rights.pullRequests;
  if (allowed.includes(num)) return null;
  const text = String(num);
  if (merged.includes(num)) return PUSH_REFUSALS.merged(ref, text);
  if (closed.includes(num)) return PUSH_REFUSALS.closed(ref, text);
  if (notYours.includes(num)) return PUSH_REFUSALS.notYours(ref, text);
  return PUSH_REFUSALS.unknown(ref, text);
}
