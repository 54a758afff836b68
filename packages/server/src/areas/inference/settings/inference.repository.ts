import { sql } from "kysely";
import type { DbOrTx } from "../../../db/database.js";
import { cachedRead } from "../../../db/cached-read.js";
import { preparedQuery } from "../../../db/prepared-query.js";
import type { InferenceOwnerRow, InferenceUsageRow } from "../../../db/schema.js";

const ownerRow = preparedQuery(
  (db: DbOrTx, ownerId: string) =>
    db.selectFrom("inference_owners").selectAll().where("owner_id", "=", ownerId),
  1,
);

const sealedKeys = preparedQuery(
  (db: DbOrTx, ownerId: string) =>
    db
      .selectFrom("inference_provider_keys")
      .select(["provider", "sealed_key"])
      .where("owner_id", "=", ownerId),
  1,
);

/** The totals every breakdown of the overview shares. */
function totals(db: DbOrTx, ownerId: string, start: string, end: string) {
  return db
    .selectFrom("inference_usage")
    .where("owner_id", "=", ownerId)
    .where("created_at", ">=", start)
    .where("created_at", "<", end)
    .select((eb) => [
      eb.fn.countAll<number | string>().as("requests"),
      eb.fn.coalesce(eb.fn.sum<number | string>("input_tokens"), sql<number>`0`).as("input_tokens"),
      eb.fn.coalesce(eb.fn.sum<number | string>("output_tokens"), sql<number>`0`).as("output_tokens"),
      eb.fn.coalesce(eb.fn.sum<number | string>("cost_nanousd"), sql<number>`0`).as("cost_nanousd"),
    ]);
}

/** SQL for the Router's owners (preferences, credit), saved provider keys, and the usage ledger. */
export const inferenceRepository = {
  /** An owner's settings and credit; cached until any owner's row changes (each ledger batch does). */
  owner: cachedRead(
    "inference owner",
    async (db: DbOrTx, ownerId: string): Promise<InferenceOwnerRow | undefined> =>
      (await ownerRow(db, ownerId))[0],
  ),

  /** An owner's sealed provider keys; cached until saved keys change. */
  sealedKeys: cachedRead("sealed provider keys", sealedKeys),

  /** Creates the owner's row with defaults if it has none yet. */
  ensureOwner: (db: DbOrTx, ownerId: string, ownerType: string, now: string) =>
    db
      .insertInto("inference_owners")
      .values({
        owner_id: ownerId,
        owner_type: ownerType,
        provider_order: "[]",
        disabled_providers: "[]",
        default_policy: null,
        monthly_limit_nanousd: null,
        balance_nanousd: 0,
        period: "",
        period_spend_nanousd: 0,
        restricted: 0,
        updated_at: now,
      })
      .onConflict((oc) => oc.column("owner_id").doNothing())
      .execute(),

  updateOwner: (db: DbOrTx, ownerId: string, values: Partial<InferenceOwnerRow>) =>
    db.updateTable("inference_owners").set(values).where("owner_id", "=", ownerId).execute(),

  /** Moves credit: positive grants, negative charges; a charge also counts toward this month's spend. */
  adjustBalance: (db: DbOrTx, ownerId: string, deltaNanos: number, spendNanos: number, period: string) =>
    db
      .updateTable("inference_owners")
      .set({
        balance_nanousd: sql`balance_nanousd + ${deltaNanos}`,
        period_spend_nanousd: sql`case when period = ${period} then period_spend_nanousd + ${spendNanos} else ${spendNanos} end`,
        period,
      })
      .where("owner_id", "=", ownerId)
      .execute(),

  listKeys: (db: DbOrTx, ownerId: string) =>
    db
      .selectFrom("inference_provider_keys")
      .select(["provider", "key_hint", "created_at", "updated_at"])
      .where("owner_id", "=", ownerId)
      .orderBy("provider")
      .execute(),

  saveKey: (db: DbOrTx, ownerId: string, provider: string, sealed: string, hint: string, now: string) =>
    db
      .insertInto("inference_provider_keys")
      .values({
        owner_id: ownerId,
        provider,
        sealed_key: sealed,
        key_hint: hint,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc
          .columns(["owner_id", "provider"])
          .doUpdateSet({ sealed_key: sealed, key_hint: hint, updated_at: now }),
      )
      .execute(),

  deleteKey: async (db: DbOrTx, ownerId: string, provider: string) =>
    Number(
      (
        await db
          .deleteFrom("inference_provider_keys")
          .where("owner_id", "=", ownerId)
          .where("provider", "=", provider)
          .executeTakeFirst()
      ).numDeletedRows,
    ),

  insertUsage: (db: DbOrTx, rows: InferenceUsageRow[]) =>
    db.insertInto("inference_usage").values(rows).execute(),

  insertGrant: (db: DbOrTx, id: string, ownerId: string, amountNanos: number, note: string, now: string) =>
    db
      .insertInto("credit_grants")
      .values({ id, owner_id: ownerId, amount_nanousd: amountNanos, note, created_at: now })
      .execute(),

  /** All credit ever granted to the owner, in nano-USD. */
  grantedTotal: async (db: DbOrTx, ownerId: string) =>
    Number(
      (
        await db
          .selectFrom("credit_grants")
          .select((eb) =>
            eb.fn.coalesce(eb.fn.sum<number | string>("amount_nanousd"), sql<number>`0`).as("n"),
          )
          .where("owner_id", "=", ownerId)
          .executeTakeFirstOrThrow()
      ).n,
    ),

  recentGrants: (db: DbOrTx, ownerId: string, limit: number) =>
    db
      .selectFrom("credit_grants")
      .select(["amount_nanousd", "note", "created_at"])
      .where("owner_id", "=", ownerId)
      .orderBy("created_at", "desc")
      .orderBy("id")
      .limit(limit)
      .execute(),

  /** Ledger rows billed to the owner. */
  usageCount: async (db: DbOrTx, ownerId: string) =>
    Number(
      (
        await db
          .selectFrom("inference_usage")
          .select((eb) => eb.fn.countAll<number | string>().as("n"))
          .where("owner_id", "=", ownerId)
          .executeTakeFirstOrThrow()
      ).n,
    ),

  /** Ledger rows a user made on the accounts of owners other than these (organizations). */
  usageByUserElsewhere: async (db: DbOrTx, userId: string, ownerIds: string[]) =>
    Number(
      (
        await db
          .selectFrom("inference_usage")
          .select((eb) => eb.fn.countAll<number | string>().as("n"))
          .where("user_id", "=", userId)
          .where("owner_id", "not in", ownerIds)
          .executeTakeFirstOrThrow()
      ).n,
    ),

  /** Everything the Router keeps for an owner: preferences and credit, saved keys, its ledger and grants. */
  async deleteOwner(db: DbOrTx, ownerId: string): Promise<void> {
    await db.deleteFrom("inference_usage").where("owner_id", "=", ownerId).execute();
    await db.deleteFrom("credit_grants").where("owner_id", "=", ownerId).execute();
    await db.deleteFrom("inference_provider_keys").where("owner_id", "=", ownerId).execute();
    await db.deleteFrom("inference_owners").where("owner_id", "=", ownerId).execute();
  },

  /** Unlinks a user from the ledger rows it made on other owners' accounts, which those owners keep. */
  relinkUsage: (db: DbOrTx, userId: string, replacement: string) =>
    db.updateTable("inference_usage").set({ user_id: replacement }).where("user_id", "=", userId).execute(),

  totals: (db: DbOrTx, ownerId: string, start: string, end: string) =>
    totals(db, ownerId, start, end).executeTakeFirstOrThrow(),

  byModel: (db: DbOrTx, ownerId: string, start: string, end: string) =>
    totals(db, ownerId, start, end).select("model").groupBy("model").orderBy("model").execute(),

  byProvider: (db: DbOrTx, ownerId: string, start: string, end: string) =>
    totals(db, ownerId, start, end).select("provider").groupBy("provider").orderBy("provider").execute(),

  byDay: (db: DbOrTx, ownerId: string, start: string, end: string) =>
    totals(db, ownerId, start, end)
      .select(sql<string>`substr(created_at, 1, 10)`.as("day"))
      .groupBy(sql`substr(created_at, 1, 10)`)
      .orderBy(sql`substr(created_at, 1, 10)`)
      .execute(),
};
