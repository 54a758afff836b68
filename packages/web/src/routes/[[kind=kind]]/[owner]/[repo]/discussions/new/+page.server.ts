import { fail, redirect } from "@sveltejs/kit";
import { call, requireViewer } from "$lib/server/api";
import { discussionHref, discussionsApi, linksOf, preview } from "$lib/server/discussions";
import { refused } from "$lib/server/refused";
import { addressOf } from "$lib/server/repo";
import type { Actions, PageServerLoad } from "./$types";

/** "New discussion": for the signed-in (the anonymous are sent to sign in first); the API decides who may. */
export const load: PageServerLoad = async ({ parent, locals, url }) => {
  requireViewer(locals, url.pathname);
  const { defaultBranch } = await parent();
  return { branch: defaultBranch };
};

/** The branch the page was rendered for, which a preview's relative links resolve in. */
const branchOf = (form: FormData) => String(form.get("branch") ?? "") || "main";

export const actions: Actions = {
  /** `POST …/discussions`: a discussion, or with the box ticked a draft pull request on refs/pr/{num}. */
  create: async ({ request, params, fetch }) => {
    const address = addressOf(params);
    const form = await request.formData();
    const title = String(form.get("title") ?? "").trim();
    const description = String(form.get("description") ?? "").replace(/\r\n/g, "\n");
    const pullRequest = form.get("pullRequest") === "1";
    const values = { title, description, pullRequest };
    if (!title) return fail(400, { message: "Give the discussion a title.", field: "title", values });
    let num: number;
    try {
      const { data } = await call<{ num: number }>(fetch, discussionsApi(address), {
        method: "POST",
        body: JSON.stringify({ title, description, ...(pullRequest ? { pullRequest: true } : {}) }),
      });
      num = data.num;
    } catch (err) {
      return refused(err, values);
    }
    redirect(303, discussionHref(address, num));
  },

  preview: async ({ request, params }) => {
    const address = addressOf(params);
    const form = await request.formData();
    return preview(form, linksOf(address, branchOf(form)));
  },
};
