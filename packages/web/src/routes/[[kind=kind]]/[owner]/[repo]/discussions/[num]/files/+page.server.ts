import { error } from "@sveltejs/kit";
import type { DiscussionDetails } from "@hub/api";
import { ApiFailure, call } from "$lib/server/api";
import { discussionsApi } from "$lib/server/discussions";
import { parseUnifiedDiff } from "$lib/unified-diff";
import type { PageServerLoad } from "./$types";

/**
 * A pull request's "Files changed": `GET …/discussions/{num}?diff=1` gives the unified diff against its target
 * branch, read here into the commit page's view. The diff is the files' content, so a gated repository may
 * refuse it (401, 403) while the conversation shows.
 */
export const load: PageServerLoad = async ({ parent, fetch }) => {
  const { address, discussion, num } = await parent();
  if (!discussion.isPullRequest) error(404, { message: "Not found" });
  try {
    const { data } = await call<DiscussionDetails>(fetch, `${discussionsApi(address)}/${num}?diff=1`);
    return {
      files: parseUnifiedDiff(data.diff ?? ""),
      truncated: data.diffTruncated === true,
      head: data.changes?.head ?? null,
      diffRefused: null,
    };
  } catch (err) {
    if (!(err instanceof ApiFailure) || (err.status !== 401 && err.status !== 403)) throw err;
    return { files: [], truncated: false, head: null, diffRefused: err.message };
  }
};
