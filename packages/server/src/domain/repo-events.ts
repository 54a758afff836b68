import type { GateMode } from "@hub/api";
import type { FoundRepo, RefUpdate } from "./repositories.js";

/**
 * The repository-event contract: the areas that change repositories publish
 * through it, and webhooks and papers listen. It lives below the areas so no
 * area depends on another to report what happened.
 */

interface EventBase {
  repo: FoundRepo;
  /** The handle of the account that caused it, when one did. */
  actor: string | null;
}

/** Something that happened to a repository, as the areas that cause it report it. */
export type RepoEvent =
  | (EventBase & { scope: "repo"; action: "create" | "delete" })
  | (EventBase & { scope: "repo"; action: "move"; movedFrom: { owner: FoundRepo["owner"]; name: string } })
  | (EventBase & {
      scope: "repo.config";
      action: "update";
      updatedConfig: { private?: boolean; gated?: GateMode | false; denyForcePush?: boolean };
    })
  | (EventBase & { scope: "repo.content"; action: "update"; updatedRefs: RefUpdate[] })
  | (EventBase & {
      scope: "discussion";
      action: "create" | "update" | "delete";
      discussion: DiscussionSnapshot;
    })
  | (EventBase & {
      scope: "discussion.comment";
      action: "create" | "update";
      discussion: DiscussionSnapshot;
      comment: { id: string; authorId: string | null; content: string; hidden: boolean };
    });

/** A discussion or pull request as its events show it. */
export interface DiscussionSnapshot {
  id: string;
  num: number;
  title: string;
  status: string;
  isPullRequest: boolean;
  authorId: string | null;
  /** A pull request's target branch. */
  targetBranch: string | null;
}

/** Where areas report repository events; webhooks turn them into deliveries, papers index card citations. */
export interface RepoEvents {
  publish(event: RepoEvent): Promise<void>;
}

/** Several listeners heard as one, each in turn; each handles its own failures. */
export function combineRepoEvents(...listeners: RepoEvents[]): RepoEvents {
  return {
    async publish(event) {
      for (const listener of listeners) await listener.publish(event);
    },
  };
}
