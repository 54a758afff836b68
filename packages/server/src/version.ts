import { readFileSync } from "node:fs";

let cached: string | undefined;

/** The hub's version, from the server package's package.json (read once, on first use). */
export function hubVersion(): string {
  cached ??= (
    JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
  ).version;
  return cached;
}
