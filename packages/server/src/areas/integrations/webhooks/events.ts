import { randomUUID } from "node:crypto";
import type { WebhookDomain } from "@hub/api";
import type { Logger } from "pino";
import { webhookMaySee } from "../../../auth/authorize.js";
import { organizationFacts } from "../../../auth/authorizer.js";
import type { Db } from "../../../db/database.js";
import type { WebhookDeliveryRow, WebhookRow } from "../../../db/schema.js";
import { ZERO_OID, type RepoFiles } from "../../../git/repo-files.js";
import { repoResource, repoWebUrl, type FoundRepo, type RefUpdate } from "../../../domain/repositories.js";
import type { RepoEvent, RepoEvents } from "../../../domain/repo-events.js";
import { webhooksRepository } from "./webhooks.repository.js";

/** Paths listed per updated ref; the counts always cover every changed file. */
const MAX_LISTED_PATHS = 100;
/** The payload format; bumped when a field changes meaning. */
const PAYLOAD_VERSION = 1;

const CHANGE_NAMES: Record<string, "added" | "modified" | "removed"> = { A: "added", D: "removed" };

/**
 * Turns repository events into outbox rows, one per route that watches the
 * repository (or its namespace, old or new), subscribes to the event's scope,
 * and may see the repository. The rows are written before the operation that
 * caused the event answers, so an answered push always has its deliveries.
 * A failure here is logged, never turned into a failed push: the change has
 * already happened.
 */
export function createRepoEvents(deps: {
  db: Db;
  clock: () => Date;
  repoFiles: RepoFiles;
  publicUrl: string;
  maxAttempts: number;
  logger: Logger;
  /** Wakes this process's delivery worker. */
  notify: () => void;
}): RepoEvents {
  const { db, clock, repoFiles, publicUrl } = deps;

  async function refDetails(repo: FoundRepo, update: RefUpdate) {
    if (update.oldSha === ZERO_OID || update.newSha === ZERO_OID) return { ...update, changes: null };
    const changed = await repoFiles.changedPaths(repo.row.id, update.oldSha, update.newSha);
    const count = (name: string) =>
      changed.filter((c) => (CHANGE_NAMES[c.status] ?? "modified") === name).length;
    return {
      ...update,
      changes: {
        added: count("added"),
        modified: count("modified"),
        removed: count("removed"),
        paths: changed
          .slice(0, MAX_LISTED_PATHS)
          .map((c) => ({ path: c.path, change: CHANGE_NAMES[c.status] ?? "modified" })),
        truncated: changed.length > MAX_LISTED_PATHS,
      },
    };
  }

  /** The event's fields every route gets; each route adds its own `webhook` block. */
  async function eventBody(event: RepoEvent, eventId: string, at: string): Promise<Record<string, unknown>> {
    const { repo } = event;
    const body: Record<string, unknown> = {
      id: eventId,
      event: { action: event.action, scope: event.scope },
      timestamp: at,
      repo: {
        type: repo.type,
        name: repo.fullName,
        id: repo.row.id,
        private: repo.row.private === 1,
        defaultBranch: repo.row.default_branch,
        owner: { type: repo.owner.type, id: repo.owner.id, name: repo.owner.handle },
        url: {
          web: repoWebUrl(publicUrl, repo.type, repo.fullName),
          api: `${publicUrl}/api/${repo.type}s/${repo.fullName}`,
        },
      },
      actor: event.actor === null ? null : { name: event.actor },
    };
    if (event.scope === "repo.content")
      body.updatedRefs = await Promise.all(event.updatedRefs.map((update) => refDetails(repo, update)));
    if (event.scope === "repo.config") body.updatedConfig = event.updatedConfig;
    if (event.scope === "discussion" || event.scope === "discussion.comment") {
      const { discussion } = event;
      const web = `${repoWebUrl(publicUrl, repo.type, repo.fullName)}/discussions/${discussion.num}`;
      body.discussion = {
        id: discussion.id,
        num: discussion.num,
        title: discussion.title,
        status: discussion.status,
        isPullRequest: discussion.isPullRequest,
        author: discussion.authorId === null ? null : { id: discussion.authorId },
        url: { web, api: `${publicUrl}/api/${repo.type}s/${repo.fullName}/discussions/${discussion.num}` },
        ...(discussion.targetBranch === null
          ? {}
          : { changes: { base: `refs/heads/${discussion.targetBranch}` } }),
      };
      if (event.scope === "discussion.comment")
        body.comment = {
          id: event.comment.id,
          author: event.comment.authorId === null ? null : { id: event.comment.authorId },
          content: event.comment.hidden ? "" : event.comment.content,
          hidden: event.comment.hidden,
          url: { web: `${web}#${event.comment.id}` },
        };
    }
    if (event.scope === "repo" && event.action === "move")
      body.movedFrom = {
        name: `${event.movedFrom.owner.handle}/${event.movedFrom.name}`,
        owner: {
          type: event.movedFrom.owner.type,
          id: event.movedFrom.owner.id,
          name: event.movedFrom.owner.handle,
        },
      };
    return body;
  }

  function subscribes(route: WebhookRow, scope: RepoEvent["scope"]): boolean {
    const domains = JSON.parse(route.domains) as WebhookDomain[];
    return domains.some((domain) => scope === domain || scope.startsWith(`${domain}.`));
  }

  async function maySee(route: WebhookRow, repo: FoundRepo): Promise<boolean> {
    const resource = repoResource(repo);
    const needsRole = resource.private && route.owner_type === "user" && repo.owner.type === "org";
    const facts = needsRole
      ? await organizationFacts(db, route.owner_id, resource, clock(), publicUrl)
      : { membershipRole: null, sso: null };
    return webhookMaySee(
      { type: route.owner_type, id: route.owner_id },
      resource,
      facts.membershipRole,
      facts.sso,
    );
  }

  async function publish(event: RepoEvent): Promise<void> {
    const namespaces = [event.repo.owner.id];
    if (event.scope === "repo" && event.action === "move") namespaces.push(event.movedFrom.owner.id);
    const candidates = await webhooksRepository.watching(db, event.repo.row.id, namespaces);
    const routes: WebhookRow[] = [];
    for (const route of candidates) {
      if (subscribes(route, event.scope) && (await maySee(route, event.repo))) routes.push(route);
    }
    if (routes.length === 0) return;
    const now = clock().toISOString();
    const eventId = randomUUID();
    const body = await eventBody(event, eventId, now);
    const rows: WebhookDeliveryRow[] = routes.map((route) => ({
      id: `msg_${randomUUID().replaceAll("-", "")}`,
      webhook_id: route.id,
      event_id: eventId,
      scope: event.scope,
      action: event.action,
      payload: JSON.stringify({ ...body, webhook: { id: route.id, version: PAYLOAD_VERSION } }),
      status: "pending",
      attempts: 0,
      attempts_left: deps.maxAttempts,
      next_attempt_at: now,
      lease_until: null,
      redelivery: 0,
      created_at: now,
      delivered_at: null,
    }));
    await db.transaction().execute((tx) => webhooksRepository.insertDeliveries(tx, rows));
    deps.notify();
  }

  return {
    async publish(event) {
      try {
        // A route deleted between reading the routes and writing the rows fails the whole batch
        // (its foreign key); once more, the routes are read again without it.
        await publish(event).catch(() => publish(event));
        if (event.scope === "repo" && event.action === "delete")
          await webhooksRepository.dropRepositoryWatches(db, event.repo.row.id);
      } catch (err) {
        deps.logger.error(
          {
            err: (err as Error).message,
            repo: event.repo.fullName,
            scope: event.scope,
            action: event.action,
          },
          "webhook event not recorded",
        );
      }
    },
  };
}
