import type { RepoInfo } from "@hub/api";
import type { RepoKind } from "$lib/types";
import { encodePath, kindOfPrefix, plural, repoHref } from "$lib/repos";

/** The addresses of one repository: its page, its API base and its download base. */
export interface RepoAddress {
  kind: RepoKind;
  id: string;
  /** `/alice/gpt`, `/datasets/alice/data`. */
  href: string;
  /** `/api/models/alice/gpt`. */
  api: string;
}

/** A repository's addresses from a page's route parameters. */
export function addressOf(params: { kind?: string; owner: string; repo: string }): RepoAddress {
  const kind = kindOfPrefix(params.kind);
  const id = `${params.owner}/${params.repo}`;
  return { kind, id, href: repoHref(kind, id), api: `/api/${plural(kind)}/${encodePath(id)}` };
}

/** `…/resolve/{rev}/{path}`: a file's bytes, as the clients download them. */
export function resolveHref(address: RepoAddress, rev: string, path: string): string {
  return `${address.href}/resolve/${encodeURIComponent(rev)}/${encodePath(path)}`;
}

export type { RepoInfo };
