import { error, redirect } from "@sveltejs/kit";
import type { TreeEntry } from "@hub/api";
import { call, download } from "$lib/server/api";
import { isProbablyText } from "$lib/server/render";
import { addressOf } from "$lib/server/repo";
import {
  commitChanges,
  commitForm,
  fileLine,
  headOf,
  requireProposer,
  submittedText,
} from "$lib/server/write";
import { encodePath } from "$lib/repos";
import type { Actions, PageServerLoad } from "./$types";

/** The largest file the browser edits; bigger ones go through git or the clients. */
const EDIT_CAP = 512 * 1024;

/**
 * Edit a text file on a branch: its content at the branch's head, which the commit names as its parent. A
 * signed-in viewer who may not write proposes the edit as a pull request.
 */
export const load: PageServerLoad = async ({ parent, params, fetch }) => {
  const { address, write, branches } = await parent();
  const { prOnly } = requireProposer(write);
  if (!branches.includes(params.rev))
    error(400, { message: `${params.rev} is not a branch; files are edited on a branch.` });
  const parentCommit = await headOf(fetch, address, params.rev);
  const { data } = await call<TreeEntry[]>(fetch, `${address.api}/paths-info/${parentCommit}`, {
    method: "POST",
    body: JSON.stringify({ paths: [params.path] }),
  });
  const entry = data[0];
  if (!entry || entry.type !== "file") error(404, { message: "Not found" });
  if (entry.lfs || entry.size > EDIT_CAP)
    error(400, { message: `${params.path} is stored with Git LFS or is too large to edit in the browser.` });
  const bytes = await download(fetch, `${address.href}/resolve/${parentCommit}/${encodePath(params.path)}`);
  if (!bytes) error(404, { message: "Not found" });
  if (!isProbablyText(bytes))
    error(400, { message: `${params.path} is not text, so it is not edited here.` });
  const content = new TextDecoder().decode(bytes);
  return {
    rev: params.rev,
    prOnly,
    path: params.path,
    parentCommit,
    content,
    crlf: content.includes("\r\n"),
  };
};

export const actions: Actions = {
  default: async ({ request, params, fetch }) => {
    const address = addressOf(params);
    const form = await request.formData();
    const content = submittedText(form.get("content"), form.get("crlf") === "1");
    const fields = commitForm(form);
    const done = await commitChanges(fetch, address, {
      branch: params.rev,
      parentCommit: String(form.get("parentCommit") ?? ""),
      fields,
      defaultSummary: `Update ${params.path}`,
      operations: [fileLine(params.path, content)],
      keep: { content, ...fields },
    });
    if ("status" in done) return done;
    if (done.pullRequest) redirect(303, done.pullRequest);
    redirect(303, `${address.href}/blob/${encodeURIComponent(done.branch)}/${encodePath(params.path)}`);
  },
};
