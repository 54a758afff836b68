import { randomBytes } from "node:crypto";
import { NOTIFICATION_REASONS, type NotificationReason } from "@hub/api";
import type { Logger } from "pino";
import { webhookMaySee } from "../../../auth/authorize.js";
import { organizationFacts } from "../../../auth/authorizer.js";
import type { Db } from "../../../db/database.js";
import type { NotificationRow } from "../../../db/schema.js";
import type { DiscussionActivity, DiscussionListener } from "../../../domain/discussion-activity.js";
import { repoResource, type FoundRepo } from "../../../domain/repositories.js";
import { notificationsRepository as repo_ } from "./notifications.repository.js";

/** The members of an organization who hear of every new thread on its repositories. */
const OWNER_ROLES = ["write", "admin"] as const;

/** Is `reason` stronger than `held`? NOTIFICATION_REASONS lists them strongest first. */
const stronger = (reason: NotificationReason, held: NotificationReason) =>
  NOTIFICATION_REASONS.indexOf(reason) < NOTIFICATION_REASONS.indexOf(held);

export interface NotificationListenerDeps {
  db: Db;
  clock: () => Date;
  publicUrl: string;
  logger: Pick<Logger, "error">;
}

/**
 * Writes the inbox entries a discussion activity gives, one per account with
 * its strongest reason: a new thread reaches the repository's owner (an
 * organization's writers and admins) and watchers; anything else in a thread
 * reaches those who took part in it and the watchers; mentions reach whom
 * they name, even when muted. Never the actor, never an account muting the
 * repository (but for mentions), never one that could not read the
 * repository as itself right now (`webhookMaySee`, with its own membership and
 * SSO standing).
 */
export function createNotificationListener({
  db,
  clock,
  publicUrl,
  logger,
}: NotificationListenerDeps): DiscussionListener {
  async function recipients(activity: DiscussionActivity): Promise<Map<string, NotificationReason>> {
    const { repo, discussion } = activity;
    const reasons = new Map<string, NotificationReason>();
    const add = (userId: string, reason: NotificationReason) => {
      const held = reasons.get(userId);
      if (held === undefined || stronger(reason, held)) reasons.set(userId, reason);
    };
    if (activity.kind === "created") {
      if (repo.owner.type === "user") add(repo.owner.id, "owner");
      else for (const id of await repo_.membersWithRoles(db, repo.owner.id, OWNER_ROLES)) add(id, "owner");
    } else {
      if (discussion.author_id !== null) add(discussion.author_id, "participating");
      for (const id of await repo_.eventAuthors(db, discussion.id)) add(id, "participating");
    }
    const muting = new Set<string>();
    for (const watch of await repo_.watchesOf(db, repo.row.id)) {
      if (watch.mode === "mute") muting.add(watch.user_id);
      else add(watch.user_id, "watching");
    }
    for (const id of activity.mentions) add(id, "mention");
    if (activity.actorId !== null) reasons.delete(activity.actorId);
    for (const id of muting) if (reasons.get(id) !== "mention") reasons.delete(id);
    return reasons;
  }

  /** Could the account read the repository as itself (no token's bounds), at this moment? */
  async function maySee(userId: string, repo: FoundRepo): Promise<boolean> {
    const resource = repoResource(repo);
    const facts =
      resource.private && repo.owner.type === "org"
        ? await organizationFacts(db, userId, resource, clock(), publicUrl)
        : { membershipRole: null, sso: null };
    return webhookMaySee({ type: "user", id: userId }, resource, facts.membershipRole, facts.sso);
  }

  return {
    async discussionActivity(activity) {
      try {
        const now = clock().toISOString();
        const rows: NotificationRow[] = [];
        for (const [userId, reason] of await recipients(activity)) {
          if (!(await maySee(userId, activity.repo))) continue;
          rows.push({
            id: randomBytes(12).toString("hex"),
            user_id: userId,
            discussion_id: activity.discussion.id,
            event_id: activity.eventId,
            reason,
            activity: activity.kind,
            actor_id: activity.actorId,
            read_at: null,
            created_at: now,
          });
        }
        await repo_.insert(db, rows);
      } catch (err) {
        // The activity itself is stored and answered; a lost notification must not fail it.
        logger.error(
          {
            err: (err as Error).message,
            repo: activity.repo.fullName,
            num: activity.discussion.num,
          },
          "notifications not written",
        );
      }
    },
  };
}
