import { error, fail, redirect } from "@sveltejs/kit";
import { addressOf } from "$lib/server/repo";
import {
  commitChanges,
  commitForm,
  exists,
  fileLine,
  headOf,
  requireProposer,
  submittedText,
} from "$lib/server/write";
import { encodePath } from "$lib/repos";
import type { Actions, PageServerLoad } from "./$types";

/**
 * "Create a new file" on a branch, in the folder the Files tab showed: committed by those the API lets write,
 * proposed as a pull request by the other signed-in viewers.
 */
export const load: PageServerLoad = async ({ parent, params, fetch }) => {
  const { address, write, branches } = await parent();
  const { prOnly } = requireProposer(write);
  if (!branches.includes(params.rev))
    error(400, { message: `${params.rev} is not a branch; files are created on a branch.` });
  const parentCommit = await headOf(fetch, address, params.rev);
  return {
    rev: params.rev,
    prOnly,
    folder: params.path ? `${params.path.replace(/\/+$/, "")}/` : "",
    parentCommit,
  };
};

export const actions: Actions = {
  default: async ({ request, params, fetch }) => {
    const address = addressOf(params);
    const form = await request.formData();
    const path = String(form.get("path") ?? "")
      .trim()
      .replace(/^\/+/, "");
    const content = submittedText(form.get("content"), false);
    const parentCommit = String(form.get("parentCommit") ?? "");
    const fields = commitForm(form);
    const keep = { path, content, ...fields };
    if (!path || path.endsWith("/"))
      return fail(400, {
        ...keep,
        field: "path",
        message: "Name the file, for example README.md or docs/usage.md.",
      });
    if (await exists(fetch, address, parentCommit, path)) {
      return fail(409, {
        ...keep,
        field: "path",
        message: `${path} already exists on ${params.rev}; edit that file instead, or choose another name.`,
      });
    }
    const done = await commitChanges(fetch, address, {
      branch: params.rev,
      parentCommit,
      fields,
      defaultSummary: `Create ${path}`,
      operations: [fileLine(path, content)],
      keep,
    });
    if ("status" in done) return done;
    if (done.pullRequest) redirect(303, done.pullRequest);
    redirect(303, `${address.href}/blob/${encodeURIComponent(done.branch)}/${encodePath(path)}`);
  },
};
