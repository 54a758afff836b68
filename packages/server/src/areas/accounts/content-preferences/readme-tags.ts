import { parse } from "yaml";
import type { RepoFiles } from "../../../git/repo-files.js";

const TAG = /^[A-Za-z0-9][A-Za-z0-9:._/+-]{0,99}$/;
const MAX_TAGS = 50;
/** A README larger than this is not read as a card. */
const MAX_README_BYTES = 1024 * 1024;

/** The text of the repository's README.md at a commit; null when it has none (or one too large to be a card). */
export async function readmeAt(
  repoFiles: RepoFiles,
  repositoryId: string,
  commit: string,
): Promise<string | null> {
  const [readme] = await repoFiles.pathsInfo(repositoryId, commit, ["README.md"]);
  if (!readme || readme.type !== "file" || readme.size > MAX_README_BYTES) return null;
  return (await repoFiles.readBlob(repositoryId, readme.oid)).toString("utf8");
}

/**
 * The `tags:` of a model or dataset card's YAML front matter (the block
 * between the leading `---` lines of README.md), as the Hub ecosystem writes
 * them; a list or a single string. Anything unreadable gives no tags.
 */
export function readmeTags(readme: string): string[] {
  const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)/.exec(readme);
  if (!match) return [];
  let header: unknown;
  try {
    header = parse(match[1] ?? "", { maxAliasCount: 10 });
  } catch {
    return [];
  }
  if (!header || typeof header !== "object") return [];
  const raw = (header as { tags?: unknown }).tags;
  const list = Array.isArray(raw) ? raw : typeof raw === "string" ? [raw] : [];
  const tags = list.filter((tag): tag is string => typeof tag === "string" && TAG.test(tag));
  return [...new Set(tags)].slice(0, MAX_TAGS);
}
