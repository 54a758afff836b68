import { error, redirect } from "@sveltejs/kit";
import type { TreeEntry } from "@hub/api";
import { call } from "$lib/server/api";
import { addressOf } from "$lib/server/repo";
import { commitChanges, commitForm, headOf, requireProposer } from "$lib/server/write";
import { encodePath } from "$lib/repos";
import type { Actions, PageServerLoad } from "./$types";

/**
 * Confirms deleting a file from a branch, with a commit message; the commit names the head it was asked at. A
 * signed-in viewer who may not write proposes the deletion as a pull request.
 */
export const load: PageServerLoad = async ({ parent, params, fetch }) => {
  const { address, write, branches } = await parent();
  const { prOnly } = requireProposer(write);
  if (!branches.includes(params.rev))
    error(400, { message: `${params.rev} is not a branch; files are deleted on a branch.` });
  const parentCommit = await headOf(fetch, address, params.rev);
  const { data } = await call<TreeEntry[]>(fetch, `${address.api}/paths-info/${parentCommit}`, {
    method: "POST",
    body: JSON.stringify({ paths: [params.path] }),
  });
  const entry = data[0];
  if (!entry || entry.type !== "file") error(404, { message: "Not found" });
  return { rev: params.rev, prOnly, path: params.path, parentCommit };
};

export const actions: Actions = {
  default: async ({ request, params, fetch }) => {
    const address = addressOf(params);
    const form = await request.formData();
    const fields = commitForm(form);
    const done = await commitChanges(fetch, address, {
      branch: params.rev,
      parentCommit: String(form.get("parentCommit") ?? ""),
      fields,
      defaultSummary: `Delete ${params.path}`,
      operations: [{ key: "deletedFile", value: { path: params.path } }],
      keep: { ...fields },
    });
    if ("status" in done) return done;
    if (done.pullRequest) redirect(303, done.pullRequest);
    const folder = params.path.split("/").slice(0, -1).join("/");
    redirect(
      303,
      `${address.href}/tree/${encodeURIComponent(done.branch)}${folder ? `/${encodePath(folder)}` : ""}`,
    );
  },
};
