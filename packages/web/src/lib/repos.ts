import type { RepoKind } from "./types";

/** The listing a kind lives in: `models`, `datasets`, `spaces` (also its API path segment). */
export function plural(kind: RepoKind): "models" | "datasets" | "spaces" {
  return `${kind}s`;
}

/** A repository's page, on the Hugging Face Hub's URLs: `/{id}`, `/datasets/{id}`, `/spaces/{id}`. */
export function repoHref(kind: RepoKind, id: string): string {
  return kind === "model" ? `/${id}` : `/${plural(kind)}/${id}`;
}

/** The kind a URL prefix (`datasets`, `spaces` or none) names. */
export function kindOfPrefix(prefix: string | undefined): RepoKind {
  return prefix === "datasets" ? "dataset" : prefix === "spaces" ? "space" : "model";
}

/** A path inside a repository, each segment URL-encoded but the slashes kept. */
export function encodePath(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/");
}

/** "3 days ago", for dates in lists. */
export function ago(iso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  const steps: [number, string][] = [
    [60, "second"],
    [60, "minute"],
    [24, "hour"],
    [30, "day"],
    [12, "month"],
    [Number.POSITIVE_INFINITY, "year"],
  ];
  let value = seconds;
  for (const [size, unit] of steps) {
    if (value < size) return `${value} ${unit}${value === 1 ? "" : "s"} ago`;
    value = Math.floor(value / size);
  }
  return iso;
}

/** Bytes for people: 1.2 kB, 20.0 MB (powers of 1000, as the Hugging Face Hub shows them). */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} Bytes`;
  const units = ["kB", "MB", "GB", "TB", "PB"];
  let value = bytes;
  let unit = "";
  for (const next of units) {
    value /= 1000;
    unit = next;
    if (value < 1000) break;
  }
  return `${value.toFixed(1)} ${unit}`;
}
