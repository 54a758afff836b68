import { randomUUID } from "node:crypto";
import type {
  CreateWebhook,
  CreatedWebhook,
  DeliveryAttempt,
  RepoType,
  UpdateWebhook,
  WatchedItem,
  Webhook,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookDeliveryList,
  WebhookDeliveryQuery,
} from "@hub/api";
import type { SettingsOwner } from "../../../auth/authorize.js";
import type { Authorize } from "../../../auth/authorizer.js";
import type { Principal } from "../../../auth/credential.js";
import type { Sealer } from "../../../auth/sealed-secret.js";
import type { Db } from "../../../db/database.js";
import type {
  WebhookAttemptRow,
  WebhookDeliveryRow,
  WebhookRow,
  WebhookWatchRow,
} from "../../../db/schema.js";
import { badRequest, conflict, notFound } from "../../../errors.js";
import type { RepoLookup } from "../../../domain/repositories.js";
import { repoResource } from "../../../domain/repositories.js";
import { reposRepository } from "../../repositories/repos/repos.repository.js";
import { newSigningSecret } from "./signing.js";
import { TargetRefused, checkTargetUrl } from "./target-guard.js";
import { webhooksRepository } from "./webhooks.repository.js";

/** Routes one owner may keep. */
const MAX_ROUTES_PER_OWNER = 100;

function receipt(row: WebhookAttemptRow): DeliveryAttempt {
  return {
    attempted_at: row.attempted_at,
    duration_ms: row.duration_ms,
    outcome: row.outcome as DeliveryAttempt["outcome"],
    status_code: row.status_code,
    response_excerpt: row.response_excerpt,
    error: row.error,
    redelivery: row.redelivery === 1,
  };
}

function deliveryView(row: WebhookDeliveryRow, last: WebhookAttemptRow | undefined): WebhookDelivery {
  return {
    id: row.id,
    event_id: row.event_id,
    event: { action: row.action, scope: row.scope },
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.status === "pending" ? row.next_attempt_at : null,
    created_at: row.created_at,
    delivered_at: row.delivered_at,
    last_attempt: last ? receipt(last) : null,
  };
}

const encodeCursor = (row: WebhookDeliveryRow) =>
  Buffer.from(`${row.created_at}|${row.id}`).toString("base64url");

function decodeCursor(cursor: string): { createdAt: string; id: string } {
  const [createdAt = "", id = ""] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  if (Number.isNaN(Date.parse(createdAt)) || !id)
    throw badRequest("invalid_cursor", "cursor must be a next_cursor value from a previous page.", "cursor");
  return { createdAt, id };
}

/**
 * Webhook routes of an owner (an account or an organization): what they watch
 * and where they deliver, their signing secret (sealed at rest, shown once),
 * and their deliveries with every attempt.
 */
export function createWebhooksService(deps: {
  db: Db;
  clock: () => Date;
  sealer: Sealer;
  repos: RepoLookup;
  authorize: Authorize;
  allowPrivateTargets: boolean;
  /** Wakes this process's delivery worker after a redelivery is scheduled. */
  notify: () => void;
}) {
  const { db, clock, repos } = deps;

  function targetUrl(url: string): string {
    try {
      return checkTargetUrl(url, deps.allowPrivateTargets).href;
    } catch (err) {
      if (err instanceof TargetRefused) throw badRequest("invalid_webhook_url", err.message, "url");
      throw err;
    }
  }

  /** What the items name, checked: namespaces must exist, repositories must be readable by the caller. */
  async function resolveWatches(
    principal: Principal,
    webhookId: string,
    watched: WatchedItem[],
  ): Promise<WebhookWatchRow[]> {
    const rows = new Map<string, WebhookWatchRow>();
    for (const item of watched) {
      if (item.type === "user" || item.type === "org") {
        const owner = await reposRepository.findOwner(db, item.name);
        if (!owner || owner.type !== item.type) {
          const hint = owner
            ? ` ${item.name} is ${owner.type === "org" ? "an organization" : "a user"}; use type "${owner.type}".`
            : "";
          throw badRequest(
            "invalid_watched",
            `No ${item.type === "org" ? "organization" : "user"} is called "${item.name}".${hint}`,
            "watched",
          );
        }
        rows.set(`namespace:${owner.id}`, {
          webhook_id: webhookId,
          kind: "namespace",
          target_id: owner.id,
          position: rows.size,
        });
        continue;
      }
      const [ownerHandle = "", name = "", extra] = item.name.split("/");
      if (!ownerHandle || !name || extra !== undefined)
        throw badRequest(
          "invalid_watched",
          `Watch a repository as "owner/name"; got "${item.name}".`,
          "watched",
        );
      const repo = await repos.find(item.type as RepoType, ownerHandle, name);
      const readable =
        repo !== null &&
        (await deps.authorize(principal, "repo:read", repoResource(repo)).then(
          () => true,
          () => false,
        ));
      if (!repo || !readable)
        throw badRequest(
          "invalid_watched",
          `No ${item.type} repository ${item.name} that you can read exists.`,
          "watched",
        );
      rows.set(`repository:${repo.row.id}`, {
        webhook_id: webhookId,
        kind: "repository",
        target_id: repo.row.id,
        position: rows.size,
      });
    }
    return [...rows.values()];
  }

  async function views(rows: WebhookRow[]): Promise<Webhook[]> {
    const watches = await webhooksRepository.watches(
      db,
      rows.map((r) => r.id),
    );
    const namespaces = await webhooksRepository.namespaces(
      db,
      watches.filter((w) => w.kind === "namespace").map((w) => w.target_id),
    );
    const repositories = new Map(
      await Promise.all(
        watches
          .filter((w) => w.kind === "repository")
          .map(async (w) => [w.target_id, await repos.findById(w.target_id)] as const),
      ),
    );
    return rows.map((row) => ({
      id: row.id,
      url: row.url,
      watched: watches
        .filter((w) => w.webhook_id === row.id)
        .flatMap((w): WatchedItem[] => {
          if (w.kind === "namespace") {
            const namespace = namespaces.get(w.target_id);
            return namespace ? [{ type: namespace.type, name: namespace.handle }] : [];
          }
          const repo = repositories.get(w.target_id);
          return repo ? [{ type: repo.type, name: repo.fullName }] : [];
        }),
      domains: JSON.parse(row.domains) as string[],
      description: row.description,
      disabled: row.disabled === 1,
      disabled_reason: row.disabled_reason,
      disabled_at: row.disabled_at,
      consecutive_failures: row.consecutive_failures,
      created_at: row.created_at,
      updated_at: row.updated_at,
    }));
  }

  async function view(row: WebhookRow): Promise<Webhook> {
    const [one] = await views([row]);
    if (!one) throw new Error("A webhook row produced no view.");
    return one;
  }

  async function route(owner: SettingsOwner, id: string): Promise<WebhookRow> {
    const row = /^[0-9a-f-]{36}$/.test(id) ? await webhooksRepository.find(db, owner.id, id) : undefined;
    if (!row) throw notFound(`No webhook ${id}; list yours at GET …/webhooks.`);
    return row;
  }

  async function delivery(row: WebhookRow, deliveryId: string): Promise<WebhookDeliveryRow> {
    const found = await webhooksRepository.delivery(db, deliveryId);
    if (!found || found.webhook_id !== row.id)
      throw notFound(
        `No delivery ${deliveryId} for this webhook; list them at GET …/webhooks/${row.id}/deliveries.`,
      );
    return found;
  }

  return {
    async list(owner: SettingsOwner): Promise<Webhook[]> {
      return views(await webhooksRepository.list(db, owner.id));
    },

    async create(owner: SettingsOwner, principal: Principal, body: CreateWebhook): Promise<CreatedWebhook> {
      const url = targetUrl(body.url);
      if ((await webhooksRepository.count(db, owner.id)) >= MAX_ROUTES_PER_OWNER)
        throw conflict(
          "too_many_webhooks",
          `An owner may keep ${MAX_ROUTES_PER_OWNER} webhooks; delete one first.`,
        );
      const id = randomUUID();
      const watches = await resolveWatches(principal, id, body.watched);
      const secret = newSigningSecret();
      const now = clock().toISOString();
      const row: WebhookRow = {
        id,
        owner_id: owner.id,
        owner_type: owner.type,
        url,
        domains: JSON.stringify(body.domains),
        description: body.description ?? "",
        sealed_secret: deps.sealer.seal(secret),
        disabled: body.disabled ? 1 : 0,
        disabled_reason: null,
        disabled_at: body.disabled ? now : null,
        consecutive_failures: 0,
        failing_since: null,
        created_at: now,
        updated_at: now,
      };
      await db.transaction().execute(async (tx) => {
        await webhooksRepository.insert(tx, row);
        await webhooksRepository.replaceWatches(tx, id, watches);
      });
      return { ...(await view(row)), secret };
    },

    get: async (owner: SettingsOwner, id: string) => view(await route(owner, id)),

    async update(
      owner: SettingsOwner,
      principal: Principal,
      id: string,
      body: UpdateWebhook,
    ): Promise<Webhook> {
      const row = await route(owner, id);
      const url = body.url === undefined ? undefined : targetUrl(body.url);
      const watches =
        body.watched === undefined ? undefined : await resolveWatches(principal, id, body.watched);
      const changes = {
        ...(url === undefined ? {} : { url }),
        ...(body.domains === undefined ? {} : { domains: JSON.stringify(body.domains) }),
        ...(body.description === undefined ? {} : { description: body.description }),
        updated_at: clock().toISOString(),
      };
      await db.transaction().execute(async (tx) => {
        await webhooksRepository.update(tx, id, changes);
        if (watches) await webhooksRepository.replaceWatches(tx, id, watches);
      });
      return view({ ...row, ...changes });
    },

    /** Switches a route off or on; switching on clears the failure streak and resumes its pending deliveries. */
    async setDisabled(owner: SettingsOwner, id: string, disabled: boolean): Promise<Webhook> {
      const row = await route(owner, id);
      const now = clock().toISOString();
      const changes = disabled
        ? {
            disabled: 1,
            disabled_at: row.disabled === 1 ? row.disabled_at : now,
            disabled_reason: row.disabled_reason,
            updated_at: now,
          }
        : {
            disabled: 0,
            disabled_at: null,
            disabled_reason: null,
            consecutive_failures: 0,
            failing_since: null,
            updated_at: now,
          };
      await webhooksRepository.update(db, id, changes);
      if (!disabled) deps.notify();
      return view({ ...row, ...changes });
    },

    async remove(owner: SettingsOwner, id: string): Promise<void> {
      await route(owner, id);
      await webhooksRepository.delete(db, id);
    },

    async rotateSecret(owner: SettingsOwner, id: string): Promise<{ secret: string }> {
      await route(owner, id);
      const secret = newSigningSecret();
      await webhooksRepository.update(db, id, {
        sealed_secret: deps.sealer.seal(secret),
        updated_at: clock().toISOString(),
      });
      return { secret };
    },

    async deliveries(
      owner: SettingsOwner,
      id: string,
      query: WebhookDeliveryQuery,
    ): Promise<WebhookDeliveryList> {
      const row = await route(owner, id);
      const limit = query.limit ?? 50;
      const page = await webhooksRepository.deliveries(db, row.id, {
        status: query.status,
        limit: limit + 1,
        before: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
      });
      const shown = page.slice(0, limit);
      const attempts = await webhooksRepository.attempts(
        db,
        shown.map((d) => d.id),
      );
      const last = new Map(attempts.map((a) => [a.delivery_id, a]));
      const lastShown = shown.at(-1);
      return {
        deliveries: shown.map((d) => deliveryView(d, last.get(d.id))),
        next_cursor: page.length > limit && lastShown ? encodeCursor(lastShown) : null,
      };
    },

    async delivery(owner: SettingsOwner, id: string, deliveryId: string): Promise<WebhookDeliveryDetail> {
      const found = await delivery(await route(owner, id), deliveryId);
      const attempts = await webhooksRepository.attempts(db, [found.id]);
      return {
        ...deliveryView(found, attempts.at(-1)),
        payload: JSON.parse(found.payload) as unknown,
        receipts: attempts.map(receipt),
      };
    },

    /** Sends a delivery again, with the same id and body, as soon as the worker can. */
    async redeliver(owner: SettingsOwner, id: string, deliveryId: string): Promise<WebhookDelivery> {
      const row = await route(owner, id);
      if (row.disabled === 1)
        throw conflict("webhook_disabled", "This webhook is switched off; enable it first, then redeliver.");
      const found = await delivery(row, deliveryId);
      const now = clock().toISOString();
      if (found.lease_until !== null && found.lease_until > now)
        throw conflict(
          "delivery_in_progress",
          "This delivery is being attempted right now; look again in a moment.",
        );
      const changes = {
        status: "pending" as const,
        attempts_left: Math.max(1, found.status === "pending" ? found.attempts_left : 1),
        next_attempt_at: now,
        delivered_at: null,
        redelivery: 1,
      };
      await webhooksRepository.updateDelivery(db, found.id, changes);
      deps.notify();
      const attempts = await webhooksRepository.attempts(db, [found.id]);
      return deliveryView({ ...found, ...changes }, attempts.at(-1));
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
