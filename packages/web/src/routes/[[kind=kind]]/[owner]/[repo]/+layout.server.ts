import type { RepoInfo } from "@hub/api";
import { load as apiLoad } from "$lib/server/api";
import { writeAccess } from "$lib/server/write";
import { addressOf } from "$lib/server/repo";
import { servedModel } from "$lib/server/inference";
import type { LayoutServerLoad } from "./$types";

interface Refs {
  branches: { name: string; targetCommit: string }[];
  tags: { name: string; targetCommit: string }[];
}

/** What the pages show of a repository: not its file list, which can be very long. */
const FIELDS = ["author", "sha", "private", "gated", "createdAt", "lastModified"] as const;
const FIELDS_QUERY = FIELDS.map((field) => `expand[]=${field}`).join("&");

export const load: LayoutServerLoad = async ({ params, fetch, locals }) => {
  const address = addressOf(params);
  const [{ data: repo }, { data: refs }, { data: hub }, write, inference] = await Promise.all([
    apiLoad<Pick<RepoInfo, "_id" | "id" | (typeof FIELDS)[number]>>(fetch, `${address.api}?${FIELDS_QUERY}`),
    apiLoad<Refs>(fetch, `${address.api}/refs`),
    apiLoad<{ git_url: string; ssh_url: string }>(fetch, "/.well-known/hub-configuration"),
    writeAccess(fetch, address, locals.viewer !== null),
    address.kind === "model" ? servedModel(fetch, address.id) : Promise.resolve(null),
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
  };
};
