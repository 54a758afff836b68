import { sql } from "kysely";
import type { DbOrTx } from "../../../db/database.js";
import type {
  WebhookAttemptRow,
  WebhookDeliveryRow,
  WebhookRow,
  WebhookWatchRow,
} from "../../../db/schema.js";

/** Rows inserted per statement, well under both dialects' bound-parameter limits. */
const INSERT_CHUNK = 200;

/** SQL for webhook routes, what they watch, the delivery outbox and its attempts. */
export const webhooksRepository = {
  insert: (db: DbOrTx, row: WebhookRow) => db.insertInto("webhooks").values(row).execute(),

  list: (db: DbOrTx, ownerId: string) =>
    db.selectFrom("webhooks").selectAll().where("owner_id", "=", ownerId).orderBy("created_at").execute(),

  count: async (db: DbOrTx, ownerId: string) =>
    Number(
      (
        await db
          .selectFrom("webhooks")
          .select((eb) => eb.fn.countAll<number | string>().as("n"))
          .where("owner_id", "=", ownerId)
          .executeTakeFirstOrThrow()
      ).n,
    ),

  find: (db: DbOrTx, ownerId: string, id: string) =>
    db
      .selectFrom("webhooks")
      .selectAll()
      .where("owner_id", "=", ownerId)
      .where("id", "=", id)
      .executeTakeFirst(),

  findById: (db: DbOrTx, id: string) =>
    db.selectFrom("webhooks").selectAll().where("id", "=", id).executeTakeFirst(),

  update: (db: DbOrTx, id: string, changes: Partial<Omit<WebhookRow, "id" | "owner_id" | "owner_type">>) =>
    db.updateTable("webhooks").set(changes).where("id", "=", id).execute(),

  delete: (db: DbOrTx, id: string) => db.deleteFrom("webhooks").where("id", "=", id).execute(),

  watches: (db: DbOrTx, webhookIds: string[]) =>
    webhookIds.length === 0
      ? Promise.resolve([] as WebhookWatchRow[])
      : db
          .selectFrom("webhook_watches")
          .selectAll()
          .where("webhook_id", "in", webhookIds)
          .orderBy("position")
          .execute(),

  async replaceWatches(db: DbOrTx, webhookId: string, watches: WebhookWatchRow[]): Promise<void> {
    await db.deleteFrom("webhook_watches").where("webhook_id", "=", webhookId).execute();
    if (watches.length > 0) await db.insertInto("webhook_watches").values(watches).execute();
  },

  /** Watches of a repository that no longer exists are dropped with it. */
  dropRepositoryWatches: (db: DbOrTx, repositoryId: string) =>
    db
      .deleteFrom("webhook_watches")
      .where("kind", "=", "repository")
      .where("target_id", "=", repositoryId)
      .execute(),

  /** Watches of users or organizations that no longer exist are dropped with them. */
  dropNamespaceWatches: (db: DbOrTx, namespaceIds: string[]) =>
    db
      .deleteFrom("webhook_watches")
      .where("kind", "=", "namespace")
      .where("target_id", "in", namespaceIds)
      .execute(),

  /** Deletes every route of these owners; their watches, deliveries and receipts go with them (foreign keys). */
  deleteOwnedBy: (db: DbOrTx, ownerIds: string[]) =>
    db.deleteFrom("webhooks").where("owner_id", "in", ownerIds).execute(),

  /** The enabled routes watching a repository itself or one of the given namespaces. */
  watching: (db: DbOrTx, repositoryId: string, namespaceIds: string[]) =>
    db
      .selectFrom("webhooks")
      .selectAll("webhooks")
      .where("webhooks.disabled", "=", 0)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom("webhook_watches")
            .select(sql`1`.as("one"))
            .whereRef("webhook_watches.webhook_id", "=", "webhooks.id")
            .where((w) =>
              w.or([
                w.and([w("kind", "=", "repository"), w("target_id", "=", repositoryId)]),
                w.and([w("kind", "=", "namespace"), w("target_id", "in", namespaceIds)]),
              ]),
            ),
        ),
      )
      .execute(),

  /** The handle and kind of users and organizations by id, for showing what a route watches. */
  async namespaces(
    db: DbOrTx,
    ids: string[],
  ): Promise<Map<string, { type: "user" | "org"; handle: string }>> {
    if (ids.length === 0) return new Map();
    const [users, orgs] = await Promise.all([
      db.selectFrom("users").select(["id", "handle"]).where("id", "in", ids).execute(),
      db.selectFrom("organizations").select(["id", "handle"]).where("id", "in", ids).execute(),
    ]);
    const found = new Map<string, { type: "user" | "org"; handle: string }>();
    for (const u of users) found.set(u.id, { type: "user", handle: u.handle });
    for (const o of orgs) found.set(o.id, { type: "org", handle: o.handle });
    return found;
  },

  async insertDeliveries(db: DbOrTx, rows: WebhookDeliveryRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
      await db
        .insertInto("webhook_deliveries")
        .values(rows.slice(i, i + INSERT_CHUNK))
        .execute();
    }
  },

  /** Ids of pending deliveries that are due, not leased, and whose route is enabled; oldest first. */
  due: (db: DbOrTx, now: string, limit: number) =>
    db
      .selectFrom("webhook_deliveries")
      .innerJoin("webhooks", "webhooks.id", "webhook_deliveries.webhook_id")
      .select("webhook_deliveries.id")
      .where("webhook_deliveries.status", "=", "pending")
      .where("webhook_deliveries.next_attempt_at", "<=", now)
      .where((eb) =>
        eb.or([
          eb("webhook_deliveries.lease_until", "is", null),
          eb("webhook_deliveries.lease_until", "<=", now),
        ]),
      )
      .where("webhooks.disabled", "=", 0)
      .orderBy("webhook_deliveries.next_attempt_at")
      .limit(limit)
      .execute(),

  /** The earliest moment a pending delivery of an enabled route becomes due, if any. */
  nextDue: async (db: DbOrTx) =>
    (
      await db
        .selectFrom("webhook_deliveries")
        .innerJoin("webhooks", "webhooks.id", "webhook_deliveries.webhook_id")
        .select((eb) => eb.fn.min("webhook_deliveries.next_attempt_at").as("at"))
        .where("webhook_deliveries.status", "=", "pending")
        .where("webhooks.disabled", "=", 0)
        .executeTakeFirst()
    )?.at ?? null,

  /** Takes the lease on a delivery unless another worker holds it; true when this one got it. */
  claim: async (db: DbOrTx, id: string, now: string, leaseUntil: string) => {
    const result = await db
      .updateTable("webhook_deliveries")
      .set({ lease_until: leaseUntil })
      .where("id", "=", id)
      .where("status", "=", "pending")
      .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<=", now)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  releaseLeases: (db: DbOrTx, ids: string[]) =>
    ids.length === 0
      ? Promise.resolve()
      : db.updateTable("webhook_deliveries").set({ lease_until: null }).where("id", "in", ids).execute(),

  /** Removes finished deliveries created before the cutoff; their attempts go with them (foreign key cascade). */
  pruneFinished: async (db: DbOrTx, cutoff: string) =>
    Number(
      (
        await db
          .deleteFrom("webhook_deliveries")
          .where("status", "in", ["delivered", "failed"])
          .where("created_at", "<", cutoff)
          .executeTakeFirst()
      ).numDeletedRows,
    ),

  delivery: (db: DbOrTx, id: string) =>
    db.selectFrom("webhook_deliveries").selectAll().where("id", "=", id).executeTakeFirst(),

  updateDelivery: (db: DbOrTx, id: string, changes: Partial<Omit<WebhookDeliveryRow, "id">>) =>
    db.updateTable("webhook_deliveries").set(changes).where("id", "=", id).execute(),

  insertAttempt: (db: DbOrTx, row: WebhookAttemptRow) =>
    db.insertInto("webhook_attempts").values(row).execute(),

  /** A page of a route's deliveries, newest first; the cursor is the last row's `created_at|id`. */
  deliveries: (
    db: DbOrTx,
    webhookId: string,
    query: { status?: string; limit: number; before?: { createdAt: string; id: string } },
  ) => {
    let select = db
      .selectFrom("webhook_deliveries")
      .selectAll()
      .where("webhook_id", "=", webhookId)
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(query.limit);
    if (query.status) select = select.where("status", "=", query.status as WebhookDeliveryRow["status"]);
    const before = query.before;
    if (before) {
      select = select.where((eb) =>
        eb.or([
          eb("created_at", "<", before.createdAt),
          eb.and([eb("created_at", "=", before.createdAt), eb("id", "<", before.id)]),
        ]),
      );
    }
    return select.execute();
  },

  attempts: (db: DbOrTx, deliveryIds: string[]) =>
    deliveryIds.length === 0
      ? Promise.resolve([] as WebhookAttemptRow[])
      : db
          .selectFrom("webhook_attempts")
          .selectAll()
          .where("delivery_id", "in", deliveryIds)
          .orderBy("attempted_at")
          .orderBy("id")
          .execute(),
};
