import type { LikeState, RepoInfo } from "@hub/api";
import { redirect } from "@sveltejs/kit";
import { ApiFailure, asPageError, call, load as apiLoad } from "$lib/server/api";
import { writeAccess } from "$lib/server/write";
import { addressOf } from "$lib/server/repo";
import { servedModel } from "$lib/server/inference";
import { openCount } from "$lib/server/discussions";
import type { LayoutServerLoad } from "./$types";

interface Refs {
  branches: { name: string; targetCommit: string }[];
  tags: { name: string; targetCommit: string }[];
}

/**
 * A renamed or moved repository answers its old API address with a redirect to the new one: the page at the
 * old name goes to the same page at the new name, as git remotes and downloads already do.
 */
function followRename(err: unknown, href: string, url: URL): never {
  const moved = err instanceof ApiFailure && err.status >= 300 && err.status < 400 ? err.location : undefined;
  const to = moved
    ? /^(?:https?:\/\/[^/]+)?\/api\/(?:models|datasets|spaces)\/([^/?]+\/[^/?]+)/.exec(moved)
    : null;
  if (to?.[1]) {
    const kindPrefix = href.startsWith("/datasets/")
      ? "/datasets"
      : href.startsWith("/spaces/")
        ? "/spaces"
        : "";
    redirect(301, `${kindPrefix}/${to[1]}${url.pathname.slice(href.length)}${url.search}`);
  }
  return asPageError(err);
}

/** What the pages show of a repository: not its file list, which can be very long. */
const FIELDS = ["author", "sha", "private", "gated", "createdAt", "lastModified", "likes"] as const;
const FIELDS_QUERY = FIELDS.map((field) => `expand[]=${field}`).join("&");

export const load: LayoutServerLoad = async ({ params, fetch, locals, url }) => {
  const address = addressOf(params);
  const [{ data: repo }, { data: refs }, { data: hub }, write, inference, openDiscussions, liked] =
    await Promise.all([
      call<Pick<RepoInfo, "_id" | "id" | (typeof FIELDS)[number]>>(
        fetch,
        `${address.api}?${FIELDS_QUERY}`,
      ).catch((err: unknown) => followRename(err, address.href, url)),
      apiLoad<Refs>(fetch, `${address.api}/refs`),
      apiLoad<{ git_url: string; ssh_url: string }>(fetch, "/.well-known/hub-configuration"),
      writeAccess(fetch, address, locals.viewer !== null),
      address.kind === "model" ? servedModel(fetch, address.id) : Promise.resolve(null),
      openCount(fetch, address),
      locals.viewer
        ? call<LikeState>(fetch, `${address.api}/like`).then(
            ({ data }) => data.liked,
            () => false,
          )
        : Promise.resolve(false),
    ]);
  const defaultBranch = refs.branches.some((branch) => branch.name === "main")
    ? "main"
    : (refs.branches[0]?.name ?? "main");
  return {
    address,
    repo,
    cloneUrls: { https: `${hub.git_url}${address.href}`, ssh: `${hub.ssh_url}${address.href}` },
    defaultBranch,
    branches: refs.branches.map((branch) => branch.name),
    tags: refs.tags.map((tag) => tag.name),
    write,
    /** The Router's entry for this model when it serves it: the Inference tab shows then. */
    inference,
    /** Open discussions and pull requests, for the Community tab (null when the API would not say). */
    openDiscussions,
    /** Whether the signed-in viewer likes it (the like button's state). */
    liked,
  };
};
