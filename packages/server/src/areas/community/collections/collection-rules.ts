import { MAX_COLLECTION_DESCRIPTION, MAX_COLLECTION_NOTE, MAX_COLLECTION_TITLE } from "@hub/api";
import { HubError, badRequest } from "../../../errors.js";
import { collectionSlug } from "./collection-slug.js";
import type { CollectionRecord } from "./collections.repository.js";

/** What collections accept of what is sent: titles, descriptions and notes within their limits, and moves. */

const collapse = (text: string) => text.trim().replace(/\s+/g, " ");

/** A title with its whitespace collapsed, 1 to MAX_COLLECTION_TITLE characters. */
export function title(raw: string): string {
  const text = collapse(raw);
  if (text.length === 0 || [...text].length > MAX_COLLECTION_TITLE)
    throw badRequest(
      "invalid_collection_title",
      `A collection's title must have 1 to ${MAX_COLLECTION_TITLE} characters, not only spaces.`,
      "title",
    );
  return text;
}

/** A description, trimmed; empty means none. */
export function description(raw: string | undefined): string | null | undefined {
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if ([...text].length > MAX_COLLECTION_DESCRIPTION)
    throw badRequest(
      "collection_description_too_long",
      `A collection's description may have at most ${MAX_COLLECTION_DESCRIPTION} characters; shorten it.`,
      "description",
    );
  return text || null;
}

/** An item's note, trimmed; empty means none. */
export function note(raw: string | undefined): string | null | undefined {
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if ([...text].length > MAX_COLLECTION_NOTE)
    throw badRequest(
      "collection_note_too_long",
      `An item's note may have at most ${MAX_COLLECTION_NOTE} characters; shorten it.`,
      "note",
    );
  return text || null;
}

/** Moves `id` to `position` in `order` (the end when past it). */
export function moved(order: string[], id: string, position: number): string[] {
  const rest = order.filter((other) => other !== id);
  rest.splice(Math.min(position, rest.length), 0, id);
  return rest;
}

/** The 404 of an item id the collection does not hold. */
export function itemNotFound(record: CollectionRecord, itemId: string): HubError {
  const slug = collectionSlug(record.owner_handle, record.title, record.id);
  return new HubError(
    404,
    "collection_item_not_found",
    `Collection ${slug} has no item ${itemId}; list its items with GET /api/collections/${slug}.`,
  );
}
