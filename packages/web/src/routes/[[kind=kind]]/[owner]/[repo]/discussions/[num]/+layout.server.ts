import { error } from "@sveltejs/kit";
import type { DiscussionDetails } from "@hub/api";
import { load as apiLoad } from "$lib/server/api";
import { administers, discussionsApi } from "$lib/server/discussions";
import type { LayoutServerLoad } from "./$types";

/**
 * One discussion or pull request (`GET …/discussions/{num}`), and which controls its pages show the viewer.
 * Those only hide what the API would refuse; the API decides every action: renaming and moderating comments
 * (the author, or the repository's admins), changing the status (the author, or its writers), merging (writers).
 */
export const load: LayoutServerLoad = async ({ parent, params, fetch, locals }) => {
  const { address, repo, write } = await parent();
  if (!/^[1-9][0-9]{0,9}$/.test(params.num) || Number(params.num) > 2147483647)
    error(404, { message: "Not found" });
  const num = Number(params.num);
  const [{ data: discussion }, admin] = await Promise.all([
    apiLoad<DiscussionDetails>(fetch, `${discussionsApi(address)}/${num}`),
    administers(fetch, locals.viewer, repo.author),
  ]);
  const viewer = locals.viewer?.name ?? null;
  const author = viewer !== null && discussion.author?.name === viewer;
  const open = discussion.status === "open" || discussion.status === "draft";
  return {
    num,
    discussion,
    rights: {
      signedIn: viewer !== null,
      /** The repository's admins moderate: they rename, and edit or hide anyone's comments. */
      moderate: admin,
      rename: author || admin,
      status: viewer !== null && (author || write.allowed) && discussion.status !== "merged",
      merge: write.allowed && discussion.isPullRequest && open,
    },
  };
};
