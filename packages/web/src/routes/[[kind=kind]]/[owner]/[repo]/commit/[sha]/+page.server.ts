import type { CommitDiff, CommitItem } from "@hub/api";
import { ApiFailure, call, load as apiLoad } from "$lib/server/api";
import type { PageServerLoad } from "./$types";

/**
 * One commit and what it changed: `GET /api/{kind}s/{id}/commit/{rev}` and `…/commit/{rev}/diff`. The
 * diff is the files' content, so a gated repository may refuse it (403) while the commit itself shows.
 */
export const load: PageServerLoad = async ({ parent, params, fetch }) => {
  const { address } = await parent();
  const rev = encodeURIComponent(params.sha);
  const { data: commit } = await apiLoad<CommitItem>(fetch, `${address.api}/commit/${rev}`);
  let diff: CommitDiff | null = null;
  let diffRefused: string | null = null;
  try {
    diff = (await call<CommitDiff>(fetch, `${address.api}/commit/${encodeURIComponent(commit.id)}/diff`))
      .data;
  } catch (err) {
    if (!(err instanceof ApiFailure) || err.status !== 403) throw err;
    diffRefused = err.message;
  }
  return { commit, diff, diffRefused };
};
