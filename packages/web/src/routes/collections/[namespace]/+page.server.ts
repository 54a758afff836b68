import type { Collection } from "@hub/api";
import { load as apiLoad } from "$lib/server/api";
import type { PageServerLoad } from "./$types";

/** An account's or organization's collections (`GET /api/collections?owner=`), newest change first. */
export const load: PageServerLoad = async ({ fetch, params, url, locals }) => {
  const query = new URLSearchParams({ owner: params.namespace, limit: "50" });
  const cursor = url.searchParams.get("cursor");
  if (cursor) query.set("cursor", cursor);
  const { data, headers } = await apiLoad<Collection[]>(fetch, `/api/collections?${query}`);
  const link = /<([^>]+)>;\s*rel="next"/.exec(headers.get("link") ?? "");
  const next = link?.[1] ? new URL(link[1]).searchParams.get("cursor") : null;
  const viewer = locals.viewer;
  return {
    namespace: params.namespace,
    collections: data,
    next,
    cursor,
    canCreate:
      viewer !== null && (viewer.name === params.namespace || viewer.orgs.includes(params.namespace)),
  };
};
