import type { CommitItem } from "@hub/api";
import { load as apiLoad } from "$lib/server/api";
import type { PageServerLoad } from "./$types";

const PAGE_SIZE = 30;

/** The history at a revision, newest first: `GET /api/{kind}s/{id}/commits/{rev}?p=`. */
export const load: PageServerLoad = async ({ parent, params, fetch, url }) => {
  const { address } = await parent();
  const pageNumber = Math.max(0, Number.parseInt(url.searchParams.get("p") ?? "0", 10) || 0);
  const { data, headers } = await apiLoad<CommitItem[]>(
    fetch,
    `${address.api}/commits/${encodeURIComponent(params.rev)}?limit=${PAGE_SIZE}&p=${pageNumber}`,
  );
  const total = Number(headers.get("x-total-count") ?? data.length);
  return {
    rev: params.rev,
    commits: data,
    pageNumber,
    total,
    hasNext: (pageNumber + 1) * PAGE_SIZE < total,
  };
};
