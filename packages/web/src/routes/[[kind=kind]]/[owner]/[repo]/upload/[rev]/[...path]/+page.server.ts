import { requireViewer } from "$lib/server/api";
import type { PageServerLoad } from "./$types";

/**
 * The upload page: the upload itself runs in the browser ($lib/upload.ts) against the API, so the page
 * only needs the branch and folder; the anonymous are sent to sign in first. A viewer the API will not let
 * write uploads into a new pull request (`prOnly`).
 */
export const load: PageServerLoad = async ({ parent, params, locals, url }) => {
  const { branches, write } = await parent();
  requireViewer(locals, url.pathname);
  return {
    rev: params.rev,
    folder: params.path,
    isBranch: branches.includes(params.rev),
    prOnly: !write.allowed,
  };
};
