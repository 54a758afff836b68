import type { Collection } from "@hub/api";
import type { Viewer } from "$lib/types";

/** A collection's API address from its slug (`alice/recent-models-65f0…`). */
export function collectionApi(slug: string): string {
  return `/api/collections/${slug.split("/").map(encodeURIComponent).join("/")}`;
}

/**
 * Whether the page offers the viewer the collection's edit forms: its owner, or a member of the organization
 * that owns it (the API still decides, and a member without the write role gets its refusal).
 */
export function mayEdit(viewer: Viewer | null, collection: Pick<Collection, "owner">): boolean {
  if (!viewer) return false;
  return collection.owner.name === viewer.name || viewer.orgs.includes(collection.owner.name);
}
