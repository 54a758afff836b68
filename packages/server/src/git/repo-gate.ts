import type { RepoType } from "@hub/api";
import { repoResource, type FoundRepo, type RepoLookup } from "../domain/repositories.js";
import type { Authorize } from "../auth/authorizer.js";
import type { Principal } from "../auth/credential.js";
import type { PullRequests } from "../domain/pull-requests.js";
import { HubError } from "../errors.js";
import { mayPushAnything, type PushRights } from "./push-rights.js";

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
    action: "repo:read" | "repo:download" | "repo:write" | "community:write",
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

/**
 * The door of a push (receive-pack, Git LFS uploads) into a repository, by the
 * same decision: its writers (`repo:write`) may push branches, tags and every
 * open pull request; a caller refused `repo:write` who may still take part in
 * its discussions (`community:write`: anyone who may read it, with a session,
 * an SSH key or a token holding that scope) is admitted to push to their own
 * open pull requests only. Returns what the push may update, which the
 * pre-receive hook enforces ref by ref; when `community:write` is refused too,
 * throws the refusal of `repo:write`.
 */
export function pushGate(
  repos: RepoLookup,
  authorize: Authorize,
  pullRequests: Pick<PullRequests, "pushable">,
) {
  const admit = repoGate(repos, authorize);
  return async function admitPush(
    principal: Principal | null,
    target: { type: RepoType; owner: string; name: string },
    requestPath?: string,
  ): Promise<{ repo: FoundRepo; principal: Principal; rights: PushRights }> {
    let repo: FoundRepo;
    let branches = true;
    try {
      repo = await admit(principal, target, "repo:write", requestPath);
    } catch (err) {
      // Only a refusal for want of role or scope (403, or 404 for a private repository) may fall back.
      if (!(err instanceof HubError) || !principal || (err.status !== 403 && err.status !== 404)) throw err;
      try {
        repo = await admit(principal, target, "community:write", requestPath);
      } catch {
        throw err;
      }
      branches = false;
    }
    if (!principal) throw new Error("The repository gate admitted an anonymous push.");
    return {
      repo,
      principal,
      rights: { branches, pullRequests: await pullRequests.pushable(repo, principal, branches) },
    };
  };
}

/**
 * The refusal of a push that could update nothing: no branch, tag or open pull
 * request of the caller's. Refused before git starts, so no pack is sent in vain.
 */
export function requirePushable(rights: PushRights): void {
  if (mayPushAnything(rights)) return;
  throw new HubError(
    403,
    "forbidden",
    "Only the repository's writers may push branches and tags, and no open pull request here is yours to push to: open one (a discussion with pullRequest: true, or a commit with create_pr=1), then push to its ref refs/pr/<number>.",
  );
}
