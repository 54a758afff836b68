import type { RepoInfo } from "@hub/api";
import { load as apiLoad } from "$lib/server/api";
import { writeAccess } from "$lib/server/write";
import { addressOf } from "$lib/server/repo";
import type { LayoutServerLoad } from "./$types";

interface Refs {
  branches: { name: string; targetCommit: string }[];
  tags: { name: string; targetCommit: string }[];
}

export const load: LayoutServerLoad = async ({ params, fetch, locals }) => {
  const address = addressOf(params);
  const [{ data: repo }, { data: refs }, { data: hub }, write] = await Promise.all([
    apiLoad<RepoInfo>(fetch, address.api),
    apiLoad<Refs>(fetch, `${address.api}/refs`),
    apiLoad<{ git_url: string; ssh_url: string }>(fetch, "/.well-known/hub-configuration"),
    writeAccess(fetch, address, locals.viewer !== null),
  ]);
  const defaultBranch = refs.branches.some((branch) => branch.name === "main")
    ? "main"
    : (refs.branches[0]?.name ?? "main");
  // Only what the pages show travels to the browser: a repository's file list can be very long.
  const { _id, id, author, sha, createdAt, lastModified, gated, siblings } = repo;
  return {
    address,
    repo: {
      _id,
      id,
      author,
      sha,
      createdAt,
      lastModified,
      gated,
      private: repo.private,
      fileCount: siblings.length,
      hasReadme: siblings.some((file) => file.rfilename === "README.md"),
    },
    cloneUrls: { https: `${hub.git_url}${address.href}`, ssh: `${hub.ssh_url}${address.href}` },
    defaultBranch,
    branches: refs.branches.map((branch) => branch.name),
    tags: refs.tags.map((tag) => tag.name),
    write,
  };
};
