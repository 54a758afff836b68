import type { RepoListItem } from "@hub/api";
import type { RequestEvent } from "@sveltejs/kit";
import type { RepoKind } from "$lib/types";
import { plural } from "$lib/repos";
import {
  LISTING_FILTERS,
  LISTING_SORTS,
  SIZE_BUCKETS,
  type ListingFilter,
  type ListingSort,
  type SizeBucket,
} from "$lib/listing";
import { load } from "./api";

export { LISTING_SORTS, type ListingSort };

/** One page of a listing, as the listing pages and the home page show it. */
export interface Listing {
  kind: RepoKind;
  repos: RepoListItem[];
  search: string;
  author: string;
  /** The order asked for; `relevance` (best match first) only with a search. */
  sort: ListingSort;
  /** Tag filters: task, library, language, license, and raw `filter` tags (the model tree's links). */
  filters: Record<ListingFilter, string>;
  /** Parameter-count bucket (models). */
  size: SizeBucket | "";
  /** The cursor of the next page, from the API's Link header. */
  next: string | null;
  cursor: string | null;
}

/** The fields each entry shows: counts, task and parameters besides the usual ones. */
const FIELDS: Record<RepoKind, string[]> = {
  model: [
    "author",
    "private",
    "gated",
    "createdAt",
    "lastModified",
    "likes",
    "downloads",
    "tags",
    "pipeline_tag",
    "library_name",
    "safetensors",
  ],
  dataset: ["author", "private", "gated", "createdAt", "lastModified", "likes", "downloads", "tags"],
  space: ["author", "private", "gated", "createdAt", "lastModified", "likes", "tags", "sdk"],
};

/**
 * Reads a listing page through `GET /api/{kind}s` with the filters, search and order in the page's query;
 * `personalized` leaves out what the signed-in viewer's content preferences hide and its suppressions name
 * (the hub's listings and home page; not a profile's own list).
 */
export async function listing(
  event: Pick<RequestEvent, "fetch" | "url">,
  kind: RepoKind,
  limit = 30,
  { personalized = false }: { personalized?: boolean } = {},
) {
  const params = event.url.searchParams;
  const search = params.get("search")?.trim() ?? "";
  const author = params.get("author")?.trim() ?? "";
  const sortParam = params.get("sort") ?? "";
  const sort: ListingSort =
    sortParam in LISTING_SORTS && (sortParam !== "relevance" || search)
      ? (sortParam as ListingSort)
      : search
        ? "relevance"
        : "updated";
  const filters = Object.fromEntries(
    LISTING_FILTERS.map((name) => [name, params.get(name)?.trim() ?? ""]),
  ) as Record<ListingFilter, string>;
  const sizeParam = params.get("size") ?? "";
  const size = kind === "model" && sizeParam in SIZE_BUCKETS ? (sizeParam as SizeBucket) : "";
  const cursor = params.get("cursor");
  const query = new URLSearchParams({ limit: String(limit) });
  if (personalized) query.set("personalized", "true");
  const order = LISTING_SORTS[sort];
  if (order.sort) query.set("sort", order.sort);
  if (order.direction) query.set("direction", order.direction);
  if (search) query.set("search", search);
  if (author) query.set("author", author);
  if (filters.task && kind === "model") query.set("pipeline_tag", filters.task);
  if (filters.library) query.set("library", filters.library);
  if (filters.language) query.set("language", filters.language);
  if (filters.license) query.set("license", filters.license);
  if (filters.filter) query.set("filter", filters.filter);
  if (size) query.set("num_parameters", SIZE_BUCKETS[size].query);
  for (const field of FIELDS[kind]) query.append("expand[]", field);
  if (cursor) query.set("cursor", cursor);
  const { data, headers } = await load<RepoListItem[]>(event.fetch, `/api/${plural(kind)}?${query}`);
  const link = /<([^>]+)>;\s*rel="next"/.exec(headers.get("link") ?? "");
  const next = link?.[1] ? new URL(link[1]).searchParams.get("cursor") : null;
  return { kind, repos: data, search, author, sort, filters, size, next, cursor } satisfies Listing;
}
