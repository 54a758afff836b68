import { fail, redirect } from "@sveltejs/kit";
import type { OrgSummary } from "@hub/api";
import { call, requireViewer } from "$lib/server/api";
import { orgApi, refusal, refusePage } from "$lib/server/org";
import type { Actions, PageServerLoad } from "./$types";

/** Leaving an organization, confirmed: for any member, admins included (but never its last admin). */
export const load: PageServerLoad = async ({ locals, url, params, fetch }) => {
  const viewer = requireViewer(locals, url.pathname);
  try {
    const { data } = await call<OrgSummary>(fetch, orgApi(params.org));
    return { org: data, member: viewer.orgs.includes(data.name) };
  } catch (err) {
    refusePage(err);
  }
};

export const actions: Actions = {
  /** `POST …/leave`, which needs no single sign-on; then the organization's page opens. */
  default: async ({ params, fetch }) => {
    try {
      await call(fetch, `${orgApi(params.org)}/leave`, { method: "POST" });
    } catch (err) {
      const { status, message } = refusal(err);
      return fail(status, { message });
    }
    redirect(303, `/${encodeURIComponent(params.org)}`);
  },
};
