import { GATE_MODES, type GateMode, type RepoType, type SpaceSdk } from "@hub/api";
import type { Owner, Resource } from "../auth/authorize.js";
import type { Principal } from "../auth/credential.js";
import type { RepositoryRow } from "../db/schema.js";

/**
 * What several areas and the git transports share about repositories: URL
 * prefixes, the found-repository shape, its authorization resource, and the
 * lookups the transports need. The repositories area implements `RepoLookup`.
 */

/** The path prefix of each repository kind in web and git URLs; models have none. */
export const URL_PREFIX: Record<RepoType, string> = {
  model: "",
  dataset: "datasets/",
  space: "spaces/",
  mcp: "mcps/",
};

/** Where a repository's page is. */
export function repoWebUrl(publicUrl: string, type: RepoType, fullName: string): string {
  return `${publicUrl}/${URL_PREFIX[type]}${fullName}`;
}

/** A repository with what access decisions and URLs need. */
export interface FoundRepo {
  row: RepositoryRow;
  owner: Owner & { handle: string };
  fullName: string;
  type: RepoType;
}

/** A repository's gating as Hugging Face shows it: the mode, or false when it is not gated. */
export function gateModeOf(row: RepositoryRow): GateMode | false {
  return GATE_MODES.find((mode) => mode === row.gated) ?? false;
}

/** The authorization resource a repository is. */
export function repoResource(repo: FoundRepo): Extract<Resource, { type: "repository" }> {
  return {
    type: "repository",
    id: repo.row.id,
    repoType: repo.type,
    fullName: repo.fullName,
    owner: repo.owner,
    private: repo.row.private === 1,
    gated: gateModeOf(repo.row),
  };
}

/** A repository list entry, as the Hugging Face clients read it. */
export interface RepoListItem {
  _id: string;
  id: string;
  author: string;
  private: boolean;
  gated: GateMode | false;
  createdAt: string;
  lastModified: string;
  /** A Space's SDK. */
  sdk?: SpaceSdk;
}

/** A ref that moved: its name and the commits before and after (the zero id when created or deleted). */
export interface RefUpdate {
  ref: string;
  oldSha: string;
  newSha: string;
}

/** The repository lookups the git transports and other areas need, implemented by the repositories area. */
export interface RepoLookup {
  /** The repository, or null when it does not exist. Says nothing about access. */
  find(type: RepoType, ownerHandle: string, name: string): Promise<FoundRepo | null>;
  /** The repository with this database id, or null. */
  findById(id: string): Promise<FoundRepo | null>;
  /** Where a repository moved to, when `ownerHandle/name` is an old name of one. */
  movedTo(type: RepoType, ownerHandle: string, name: string): Promise<FoundRepo | null>;
  /** The repository for an access check; a missing one answers like a hidden one, so existence never leaks. */
  findOrHide(
    principal: Principal | null,
    type: RepoType,
    ownerHandle: string,
    name: string,
    requestPath?: string,
  ): Promise<FoundRepo>;
  /** Whether the caller may read a repository, by the one authorization decision. */
  mayRead(principal: Principal | null, repo: FoundRepo): Promise<boolean>;
  /** The repository as a list entry. */
  listItem(repo: FoundRepo): RepoListItem;
  /** The user or organization that would own a new repository. */
  namespace(handle: string): Promise<{ type: "namespace"; owner: Owner & { handle: string } }>;
  /** Records that refs moved (a push, a commit, a branch or tag made or deleted). */
  refsUpdated(repo: FoundRepo, updatedRefs: RefUpdate[], actor: string | null): Promise<void>;
}
