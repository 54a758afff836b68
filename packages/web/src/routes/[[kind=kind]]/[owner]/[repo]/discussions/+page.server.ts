import type { DiscussionList } from "@hub/api";
import { ApiFailure, call, asPageError } from "$lib/server/api";
import { discussionsApi } from "$lib/server/discussions";
import type { PageServerLoad } from "./$types";

/** What the list shows, from the page's query: the API's own filters (`GET …/discussions`). */
interface DiscussionFilters {
  type: "all" | "discussion" | "pull_request";
  status: "all" | "open" | "closed";
  author: string;
  search: string;
  /** The page, from 0. */
  p: number;
}

function filtersOf(query: URLSearchParams): DiscussionFilters {
  const type = query.get("type");
  const status = query.get("status");
  const p = Number(query.get("p") ?? "0");
  return {
    type: type === "discussion" || type === "pull_request" ? type : "all",
    status: status === "closed" || status === "all" ? status : "open",
    author: (query.get("author") ?? "").trim(),
    search: (query.get("search") ?? "").trim(),
    p: Number.isInteger(p) && p >= 0 && p <= 100000 ? p : 0,
  };
}

/**
 * The Community tab: a repository's discussions and pull requests, 50 a page, filtered by kind, status, author
 * and title as the API filters them. A filter the API refuses (too long) is shown as its message.
 */
export const load: PageServerLoad = async ({ parent, url, fetch }) => {
  const { address } = await parent();
  const filters = filtersOf(url.searchParams);
  const query = new URLSearchParams({ type: filters.type, status: filters.status, p: String(filters.p) });
  if (filters.author) query.set("author", filters.author);
  if (filters.search) query.set("search", filters.search);
  try {
    const { data } = await call<DiscussionList>(fetch, `${discussionsApi(address)}?${query}`);
    return { filters, list: data, refusal: null };
  } catch (err) {
    if (!(err instanceof ApiFailure) || err.status !== 400) return asPageError(err);
    const empty: DiscussionList = { discussions: [], count: 0, start: 0, numClosedDiscussions: 0 };
    return { filters, list: empty, refusal: err.message };
  }
};
