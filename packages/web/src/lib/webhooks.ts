import { WATCHED_TYPES, type WatchedItem, type WatchedType } from "@hub/api";

/** A watched item as the form writes it, one to a line: `model alice/bert`, `user alice`, `org acme`. */
export function watchedLine(item: WatchedItem): string {
  return `${item.type} ${item.name}`;
}

/**
 * The watched items typed in the form, one a line: `<type> <name>`, or a bare `owner/name` (a model) or
 * `handle` (a user). Returns the items, or the first line it cannot read.
 */
export function parseWatched(text: string): { items: WatchedItem[] } | { bad: string } {
  const items: WatchedItem[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    const parts = line.split(/\s+/);
    if (parts.length === 1) {
      const name = parts[0] ?? "";
      items.push({ type: name.includes("/") ? "model" : "user", name });
      continue;
    }
    const [type = "", name = "", ...rest] = parts;
    if (rest.length > 0 || !WATCHED_TYPES.some((known) => known === type)) return { bad: line };
    items.push({ type: type as WatchedType, name });
  }
  return { items };
}
