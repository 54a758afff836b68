import type { RepoListItem } from "@hub/api";
import type { RequestEvent } from "@sveltejs/kit";
import type { RepoKind } from "$lib/types";
import { plural } from "$lib/repos";
import { load } from "./api";

export const LISTING_SORTS = { updated: "lastModified", name: "id", created: "createdAt" } as const;
export type ListingSort = keyof typeof LISTING_SORTS;

/** One page of a listing, as the listing pages and the home page show it. */
export interface Listing {
  kind: RepoKind;
  repos: RepoListItem[];
  search: string;
  author: string;
  sort: ListingSort;
  /** The cursor of the next page, from the API's Link header. */
  next: string | null;
  cursor: string | null;
}

/** Reads a listing page through `GET /api/{kind}s` with the filters in the page's query. */
export async function listing(event: Pick<RequestEvent, "fetch" | "url">, kind: RepoKind, limit = 30) {
  const search = event.url.searchParams.get("search")?.trim() ?? "";
  const author = event.url.searchParams.get("author")?.trim() ?? "";
  const sortParam = event.url.searchParams.get("sort") ?? "updated";
  const sort: ListingSort = sortParam in LISTING_SORTS ? (sortParam as ListingSort) : "updated";
  const cursor = event.url.searchParams.get("cursor");
  const query = new URLSearchParams({ limit: String(limit), sort: LISTING_SORTS[sort] });
  if (sort === "name") query.set("direction", "1");
  if (search) query.set("search", search);
  if (author) query.set("author", author);
  if (cursor) query.set("cursor", cursor);
  const { data, headers } = await load<RepoListItem[]>(event.fetch, `/api/${plural(kind)}?${query}`);
  const link = /<([^>]+)>;\s*rel="next"/.exec(headers.get("link") ?? "");
  const next = link?.[1] ? new URL(link[1]).searchParams.get("cursor") : null;
  return { kind, repos: data, search, author, sort, next, cursor } satisfies Listing;
}
