import type { AccessRequest, GatedRepositoryList, RepoListItem } from "@hub/api";
import { call } from "$lib/server/api";
import { refused } from "$lib/server/refused";
import { plural } from "$lib/repos";
import type { RepoKind } from "$lib/types";
import type { Actions, PageServerLoad } from "./$types";

const KINDS: RepoKind[] = ["model", "dataset", "space"];
/** The most gated repositories of one kind the page lists (the API's largest page). */
const MAX_REPOS = 1000;

/**
 * Both sides of gated repositories: the viewer's own access requests (`GET /api/me/gated-repositories`),
 * and the viewer's gated repositories (`GET /api/{kind}s?author=…&gated=true`) with their pending requests
 * (`…/user-access-request/pending`), which each repository's settings page reviews.
 */
export const load: PageServerLoad = async ({ fetch, locals }) => {
  const me = locals.viewer?.name ?? "";
  const query = new URLSearchParams({ author: me, gated: "true", limit: String(MAX_REPOS), sort: "id" });
  const [mine, ...owned] = await Promise.all([
    call<GatedRepositoryList>(fetch, "/api/me/gated-repositories"),
    ...KINDS.map((kind) =>
      call<RepoListItem[]>(fetch, `/api/${plural(kind)}?${query}`).then(({ data }) =>
        data.map((repo) => ({ kind, repo })),
      ),
    ),
  ]);
  const repositories = await Promise.all(
    owned.flat().map(async ({ kind, repo }) => {
      const { data } = await call<AccessRequest[]>(
        fetch,
        `/api/${plural(kind)}/${repo.id}/user-access-request/pending`,
      );
      return {
        kind,
        id: repo.id,
        gated: repo.gated,
        pending: data.map((request) => ({ user: request.user.user, timestamp: request.timestamp })),
      };
    }),
  );
  return {
    mine: mine.data.requests.filter((request) => request.repoType !== "mcp"),
    repositories,
  };
};

export const actions: Actions = {
  /** Withdraws one of the viewer's pending requests (`DELETE /api/{kind}s/{id}/ask-access`). */
  withdraw: async ({ request, fetch }) => {
    const form = await request.formData();
    const kind = KINDS.find((k) => k === form.get("kind")) ?? "model";
    const id = String(form.get("repo") ?? "");
    try {
      await call(fetch, `/api/${plural(kind)}/${id}/ask-access`, { method: "DELETE" });
      return { withdrawn: id };
    } catch (err) {
      return refused(err);
    }
  },
};
