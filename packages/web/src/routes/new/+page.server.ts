import { fail, redirect } from "@sveltejs/kit";
import type { HfCreateRepoResponse, WhoamiV2 } from "@hub/api";
import { ApiFailure, call, requireViewer } from "$lib/server/api";
import { repoHref } from "$lib/repos";
import type { RepoKind } from "$lib/types";
import type { Actions, PageServerLoad } from "./$types";

const KINDS: RepoKind[] = ["model", "dataset", "space"];
const SDKS = ["gradio", "streamlit", "docker", "static"];
/** Organization roles that may create repositories there; the API decides, this only fills the owner list. */
const CREATING_ROLES = ["contributor", "write", "admin"];

/** Which form field an API refusal of a create concerns. */
function fieldOf(err: ApiFailure): string | undefined {
  if (err.code === "repo_exists" || err.code === "invalid_repo_name" || err.field === "name") return "name";
  if (err.status === 403 || err.status === 404) return "owner";
  return err.field;
}

/** Create a repository (`POST /api/repos/create`) in the viewer's namespace or one of their organizations. */
export const load: PageServerLoad = async ({ locals, fetch, url }) => {
  requireViewer(locals, url.pathname + url.search);
  const { data: me } = await call<WhoamiV2>(fetch, "/api/whoami-v2");
  const kind = KINDS.find((k) => k === url.searchParams.get("type")) ?? "model";
  return {
    namespaces: [
      me.name,
      ...me.orgs.filter((org) => CREATING_ROLES.includes(org.roleInOrg)).map((org) => org.name),
    ],
    kind,
    owner: url.searchParams.get("owner") ?? me.name,
    sdks: SDKS,
  };
};

export const actions: Actions = {
  default: async ({ request, fetch, locals }) => {
    const form = await request.formData();
    const owner = String(form.get("owner") ?? "").trim();
    const name = String(form.get("name") ?? "").trim();
    const kind = KINDS.find((k) => k === form.get("kind"));
    const visibility = form.get("visibility") === "private" ? "private" : "public";
    const sdk = String(form.get("sdk") ?? "");
    const keep = { owner, name, kind: kind ?? "model", visibility, sdk };
    if (!locals.viewer)
      return fail(401, { ...keep, field: "owner", message: "Sign in to create a repository." });
    if (!name) return fail(400, { ...keep, field: "name", message: "Name: give the repository a name." });
    if (!kind) return fail(400, { ...keep, field: "kind", message: "Type: choose model, dataset or Space." });
    if (kind === "space" && !SDKS.includes(sdk))
      return fail(400, {
        ...keep,
        field: "sdk",
        message: "SDK: a Space needs one; choose Gradio, Streamlit, Docker or static.",
      });
    let id: string;
    try {
      const { data } = await call<HfCreateRepoResponse>(fetch, "/api/repos/create", {
        method: "POST",
        body: JSON.stringify({
          name,
          ...(owner && owner !== locals.viewer.name ? { organization: owner } : {}),
          type: kind,
          visibility,
          ...(kind === "space" ? { sdk } : {}),
        }),
      });
      id = data.id;
    } catch (err) {
      if (!(err instanceof ApiFailure)) throw err;
      const field = fieldOf(err);
      const label = field === "name" ? "Name" : field === "owner" ? "Owner" : null;
      return fail(err.status, { ...keep, field, message: label ? `${label}: ${err.message}` : err.message });
    }
    redirect(303, repoHref(kind, id));
  },
};
