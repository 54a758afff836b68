import type { DiscussionRow } from "../db/schema.js";
import type { FoundRepo } from "./repositories.js";

/**
 * What happened in a discussion, as the discussions area tells the listeners
 * beside webhooks (the notifications area): a contract between the two, so
 * neither imports the other.
 */
export interface DiscussionActivity {
  repo: FoundRepo;
  discussion: DiscussionRow;
  kind: "created" | "comment" | "status" | "title" | "merged" | "commit";
  /** The timeline event it added, when it added one. */
  eventId: string | null;
  actorId: string | null;
  /** Accounts the comment or description mentioned (their ids). */
  mentions: string[];
}

/** Hears every discussion activity once it is stored. */
export interface DiscussionListener {
  discussionActivity(activity: DiscussionActivity): Promise<void>;
}
