import { fail, redirect } from "@sveltejs/kit";
import type { OrgSummary } from "@hub/api";
import { ApiFailure, call, requireViewer } from "$lib/server/api";
import type { Actions, PageServerLoad } from "./$types";

/** Creating an organization is for the signed in; anyone else signs in first. */
export const load: PageServerLoad = ({ locals, url }) => {
  requireViewer(locals, url.pathname);
  return {};
};

export const actions: Actions = {
  /** `POST /api/organizations`: the viewer becomes its admin; then its page opens. */
  default: async ({ request, fetch }) => {
    const form = await request.formData();
    const name = String(form.get("name") ?? "").trim();
    const fullname = String(form.get("fullname") ?? "").trim();
    const keep = { name, fullname };
    if (!name) return fail(400, { ...keep, field: "name", message: "Name: give the organization a handle." });
    let created: OrgSummary;
    try {
      ({ data: created } = await call<OrgSummary>(fetch, "/api/organizations", {
        method: "POST",
        body: JSON.stringify({ name, ...(fullname ? { fullname } : {}) }),
      }));
    } catch (err) {
      if (!(err instanceof ApiFailure) || err.status >= 500) throw err;
      // The schema's refusal of a handle names the body's property; say which field in words.
      const field = err.field?.includes("fullname") ? "fullname" : err.field ? "name" : undefined;
      const message =
        err.code === "validation_failed" && field === "name"
          ? "Name: use lowercase letters, digits and dashes (not at either end), at most 40 characters."
          : err.message;
      return fail(err.status, { ...keep, field, message });
    }
    redirect(303, `/${encodeURIComponent(created.name)}`);
  },
};
