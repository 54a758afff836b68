import type { OrgSummary } from "@hub/api";
import { call, requireViewer } from "$lib/server/api";
import { orgApi, refusePage } from "$lib/server/org";
import type { LayoutServerLoad } from "./$types";

/**
 * An organization's settings, for its admins. The API decides: the layout asks for the organization's single
 * sign-on settings, a read only admins may make (and one an SSO requirement never blocks, so an admin can
 * always reach SSO to repair it); anyone else gets the API's refusal as the page.
 */
export const load: LayoutServerLoad = async ({ locals, url, params, fetch }) => {
  const viewer = requireViewer(locals, url.pathname);
  try {
    const { data: org } = await call<OrgSummary>(fetch, orgApi(params.org));
    await call(fetch, `${orgApi(params.org)}/sso`);
    return { org, viewer };
  } catch (err) {
    refusePage(err);
  }
};
