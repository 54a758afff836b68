import { fail, redirect } from "@sveltejs/kit";
import { ApiFailure, call } from "$lib/server/api";
import { addressOf } from "$lib/server/repo";
import { requireWrite } from "$lib/server/write";
import type { Actions, PageServerLoad } from "./$types";

/** Create a branch from a revision (`POST …/branch/{branch}`); the branch picker posts here too. */
export const load: PageServerLoad = async ({ parent, url }) => {
  const { write, defaultBranch } = await parent();
  requireWrite(write);
  return { from: url.searchParams.get("from") || defaultBranch };
};

export const actions: Actions = {
  default: async ({ request, params, fetch }) => {
    const address = addressOf(params);
    const form = await request.formData();
    const name = String(form.get("name") ?? "").trim();
    const from = String(form.get("from") ?? "").trim();
    if (!name) return fail(400, { name, from, field: "name", message: "Name the new branch." });
    try {
      await call(fetch, `${address.api}/branch/${encodeURIComponent(name)}`, {
        method: "POST",
        body: JSON.stringify(from ? { startingPoint: from } : {}),
      });
    } catch (err) {
      if (!(err instanceof ApiFailure)) throw err;
      return fail(err.status, { name, from, field: err.field ?? "name", message: err.message });
    }
    redirect(303, `${address.href}/tree/${encodeURIComponent(name)}`);
  },
};
