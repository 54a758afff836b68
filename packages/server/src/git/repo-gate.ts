import type { RepoType } from "@hub/api";
import { repoResource, type FoundRepo, type RepoLookup } from "../domain/repositories.js";
import type { Authorize } from "../auth/authorizer.js";
import type { Principal } from "../auth/credential.js";
import { HubError } from "../errors.js";

/** A repository name as git transports send it, with or without `.git`. */
export function withoutGitSuffix(name: string): string {
  return name.endsWith(".git") ? name.slice(0, -4) : name;
}

/**
 * The one door of the git transports (smart HTTP, LFS, SSH) into a repository:
 * anonymous writes are refused with a 401 that makes git ask for credentials,
 * a missing repository answers like a hidden one, a renamed one redirects
 * (HTTP, given the request path) or is followed (SSH), and `authorize` decides
 * the rest. Throws the HubError of a refusal; each transport words it its own way.
 */
export function repoGate(repos: RepoLookup, authorize: Authorize) {
  return async function admit(
    principal: Principal | null,
    target: { type: RepoType; owner: string; name: string },
    action: "repo:read" | "repo:download" | "repo:write",
    requestPath?: string,
  ): Promise<FoundRepo> {
    if (action === "repo:write" && !principal) {
      throw new HubError(
        401,
        "unauthenticated",
        "Writing needs a token: use it as the password when git asks.",
      );
    }
    // SSH has no redirects (no request path): a remote under an old name reaches the repository it became.
    const followed =
      requestPath === undefined
        ? ((await repos.find(target.type, target.owner, target.name)) ??
          (await repos.movedTo(target.type, target.owner, target.name)))
        : null;
    const repo =
      followed ?? (await repos.findOrHide(principal, target.type, target.owner, target.name, requestPath));
    await authorize(principal, action, repoResource(repo));
    return repo;
  };
}
