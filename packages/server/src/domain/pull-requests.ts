import type { Principal } from "../auth/credential.js";
import type { FoundRepo } from "./repositories.js";

/**
 * What the file API and the git transports need of pull requests, implemented
 * by the discussions area: writing to `refs/pr/{num}` is for its author and the
 * repository's writers, while it is open (or a draft).
 */
export interface PullRequests {
  /**
   * Checks that the caller, already granted `community:write` on the
   * repository, may write to pull request `num` now (its author, or a writer of
   * the repository; open or draft); throws the HubError otherwise.
   */
  authorizeWrite(repo: FoundRepo, principal: Principal, num: number): Promise<void>;
  /**
   * Opens a pull request for a commit about to be made (`create_pr=1`, by a
   * caller already granted `community:write`): its
   * number, `abandon` to remove it again when the commit then fails, and
   * `announce` to tell webhooks and watchers once the commit is on its ref.
   */
  openForCommit(
    repo: FoundRepo,
    principal: Principal,
    input: { title: string; description: string; targetBranch: string },
  ): Promise<{ num: number; url: string; abandon: () => Promise<void>; announce: () => Promise<void> }>;
  /**
   * The pull requests a push by this caller may update (open or draft: its
   * own, or all of them for writers), and the others by why they may not.
   */
  pushable(repo: FoundRepo, principal: Principal, mayWriteBranches: boolean): Promise<PushablePullRequests>;
}

/**
 * What a push may do to the repository's pull requests: `allowed` ones it may
 * update; the rest, by the reason a push to them is refused, so the refusal
 * can say what to do instead.
 */
export interface PushablePullRequests {
  /** Open (or draft) pull requests the caller may push to: their own, or every one for writers. */
  allowed: number[];
  /** Open (or draft) pull requests of other accounts. */
  notYours: number[];
  merged: number[];
  closed: number[];
}
