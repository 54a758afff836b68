import type { TreeEntry } from "@hub/api";
import { load as apiLoad } from "$lib/server/api";
import { encodePath } from "$lib/repos";
import type { PageServerLoad } from "./$types";

/** A folder at a revision: `GET /api/{kind}s/{id}/tree/{rev}/{path}`, folders first. */
export const load: PageServerLoad = async ({ parent, params, fetch, url }) => {
  const { address } = await parent();
  const cursor = url.searchParams.get("cursor");
  const query = cursor ? `?cursor=${encodeURIComponent(cursor)}` : "";
  const { data, headers } = await apiLoad<TreeEntry[]>(
    fetch,
    `${address.api}/tree/${encodeURIComponent(params.rev)}${params.path ? `/${encodePath(params.path)}` : ""}${query}`,
  );
  const link = /<([^>]+)>;\s*rel="next"/.exec(headers.get("link") ?? "");
  const entries = [...data].sort((a, b) =>
    a.type === b.type ? a.path.localeCompare(b.path) : a.type === "directory" ? -1 : 1,
  );
  return {
    rev: params.rev,
    path: params.path,
    entries,
    next: link?.[1] ? new URL(link[1]).searchParams.get("cursor") : null,
  };
};
