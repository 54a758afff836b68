import { error, fail, type ActionFailure, type RequestEvent } from "@sveltejs/kit";
import type { AuthCheck, CommitItem, CommitLine, CommitResponse } from "@hub/api";
import { ApiFailure, call } from "$lib/server/api";
import type { RepoAddress } from "$lib/server/repo";
import { pullRequestPage } from "$lib/pull-requests";
import { encodePath } from "$lib/repos";

type Fetch = RequestEvent["fetch"];

/** Whether the viewer may change a repository, as the API answers it, and its reason when not. */
export interface WriteAccess {
  allowed: boolean;
  /** Why not: the API's own refusal, or a request to sign in. */
  refusal: string | null;
  /** 401 for the anonymous, the API's status otherwise. */
  status: number;
}

/**
 * Asks the API whether the viewer may write (`GET …/auth-check/write`, `huggingface_hub`'s `auth_check`),
 * so pages show write controls only to those the API would let through. The anonymous are not asked.
 */
export async function writeAccess(
  fetch: Fetch,
  address: RepoAddress,
  signedIn: boolean,
): Promise<WriteAccess> {
  if (!signedIn) return { allowed: false, refusal: "Sign in to change this repository.", status: 401 };
  try {
    await call<AuthCheck>(fetch, `${address.api}/auth-check/write`);
    return { allowed: true, refusal: null, status: 200 };
  } catch (err) {
    if (!(err instanceof ApiFailure)) throw err;
    return { allowed: false, refusal: err.message, status: err.status };
  }
}

/**
 * For the pages that change files (new, edit, delete): a writer commits as they choose; a signed-in viewer the
 * API will not let write may still propose the change as a pull request (`create_pr`), which is all their form
 * offers (`prOnly`). The anonymous get the page's refusal, asking them to sign in. The API judges the commit.
 */
export function requireProposer(write: WriteAccess): { prOnly: boolean } {
  if (write.allowed) return { prOnly: false };
  if (write.status === 401) requireWrite(write);
  return { prOnly: true };
}

/** Stops a page that writes when the API would refuse the viewer: its refusal is the page (see RepoError). */
export function requireWrite(write: WriteAccess): void {
  if (!write.allowed)
    error(write.status, { message: write.refusal ?? "You may not change this repository." });
}

/** The commit a revision names now (`GET …/commit/{rev}`), which a change made in a form will name as its parent. */
export async function headOf(fetch: Fetch, address: RepoAddress, rev: string): Promise<string> {
  try {
    const { data } = await call<CommitItem>(fetch, `${address.api}/commit/${encodeURIComponent(rev)}`);
    return data.id;
  } catch (err) {
    if (err instanceof ApiFailure && [400, 404].includes(err.status)) error(404, { message: "Not found" });
    throw err;
  }
}

/** A text file as a commit holds it, or null when there is no such file there. */
export async function textAt(
  fetch: Fetch,
  address: RepoAddress,
  commit: string,
  path: string,
): Promise<string | null> {
  const response = await fetch(`${address.href}/resolve/${commit}/${encodePath(path)}`);
  if (response.status === 404) return null;
  if (!response.ok)
    throw new ApiFailure(response.status, "download_failed", `The hub answered ${response.status}.`);
  return new TextDecoder().decode(await response.arrayBuffer());
}

/** Whether a path names a file or folder at a commit (`POST …/paths-info/{rev}`). */
export async function exists(
  fetch: Fetch,
  address: RepoAddress,
  commit: string,
  path: string,
): Promise<boolean> {
  const { data } = await call<unknown[]>(fetch, `${address.api}/paths-info/${commit}`, {
    method: "POST",
    body: JSON.stringify({ paths: [path] }),
  });
  return data.length > 0;
}

/** What the commit part of a write form holds: message, and the branch the change lands on. */
export interface CommitForm {
  summary: string;
  description: string;
  /**
   * `direct`: the branch the page was opened on; `new`: a branch made for this change from the same commit;
   * `pr`: a new pull request against the branch, holding this one commit (`create_pr=1`).
   */
  target: "direct" | "new" | "pr";
  newBranch: string;
}

/** Reads the commit fields every write form shares (components/CommitFields.svelte). */
export function commitForm(form: FormData): CommitForm {
  return {
    summary: String(form.get("summary") ?? "").trim(),
    description: String(form.get("description") ?? "").trim(),
    target: form.get("target") === "new" ? "new" : form.get("target") === "pr" ? "pr" : "direct",
    newBranch: String(form.get("newBranch") ?? "").trim(),
  };
}

/** A write form's failure: what the person sent (so nothing typed is lost), the message and the field it concerns. */
export type WriteFailure<K> = ActionFailure<K & { message: string; field?: string; conflict?: boolean }>;

/**
 * Commits operations on top of `parentCommit` through the NDJSON commit API, on the page's branch, on a new
 * branch made from `parentCommit` first, or in a new pull request against the branch (`?create_pr=1`, which
 * the API answers with the pull request's address). The API's compare-and-swap refuses the commit when the
 * branch moved since the form was opened (412) or while committing (409): that is reported as a conflict,
 * never retried. Answers the branch the commit landed on (and the pull request it opened), or the failure to
 * return from the action.
 */
export async function commitChanges<K extends CommitForm>(
  fetch: Fetch,
  address: RepoAddress,
  input: {
    branch: string;
    parentCommit: string;
    fields: CommitForm;
    defaultSummary: string;
    operations: CommitLine[];
    /** What the form sent, returned with a failure so nothing typed is lost. */
    keep: K;
  },
): Promise<{ branch: string; commit: string; pullRequest: string | null } | WriteFailure<K>> {
  const { fields, keep } = input;
  let branch = input.branch;
  if (fields.target === "new") {
    if (!fields.newBranch)
      return fail(400, {
        ...keep,
        field: "newBranch",
        message: "Name the new branch, or commit to the current one.",
      });
    try {
      await call(fetch, `${address.api}/branch/${encodeURIComponent(fields.newBranch)}`, {
        method: "POST",
        body: JSON.stringify({ startingPoint: input.parentCommit }),
      });
    } catch (err) {
      if (!(err instanceof ApiFailure)) throw err;
      return fail(err.status, { ...keep, field: "newBranch", message: err.message });
    }
    branch = fields.newBranch;
  }
  const header: CommitLine = {
    key: "header",
    value: {
      summary: fields.summary || input.defaultSummary,
      ...(fields.description ? { description: fields.description } : {}),
      parentCommit: input.parentCommit,
    },
  };
  try {
    const { data } = await call<CommitResponse>(
      fetch,
      `${address.api}/commit/${encodeURIComponent(branch)}${fields.target === "pr" ? "?create_pr=1" : ""}`,
      {
        method: "POST",
        headers: { "content-type": "application/x-ndjson" },
        body: [header, ...input.operations].map((line) => JSON.stringify(line)).join("\n"),
      },
    );
    return {
      branch,
      commit: data.commitOid,
      pullRequest: data.pullRequestUrl ? pullRequestPage(address.href, data.pullRequestUrl) : null,
    };
  } catch (err) {
    if (!(err instanceof ApiFailure)) throw err;
    if (err.code === "parent_commit_mismatch" || err.code === "branch_moved") {
      return fail(409, {
        ...keep,
        conflict: true,
        message: `Someone changed ${branch} since you opened this page, so nothing was committed (the hub said: ${err.message}). Your text is kept below: copy it, open the file again and redo your change.`,
      });
    }
    const field = err.field?.startsWith("line ") ? "path" : err.field === "summary" ? "summary" : undefined;
    return fail(err.status, { ...keep, ...(field ? { field } : {}), message: err.message });
  }
}

/** Text as a form sent it, with the line endings it had: browsers send a textarea's lines ending in CRLF. */
export function submittedText(value: FormDataEntryValue | null, crlf: boolean): string {
  const text = String(value ?? "").replace(/\r\n/g, "\n");
  return crlf ? text.replace(/\n/g, "\r\n") : text;
}

/** A file's content as a commit line carries it. */
export function fileLine(path: string, text: string): CommitLine {
  return {
    key: "file",
    value: { path, content: Buffer.from(text, "utf8").toString("base64"), encoding: "base64" },
  };
}
