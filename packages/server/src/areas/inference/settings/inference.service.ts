import { randomUUID } from "node:crypto";
import type {
  InferenceOverview,
  InferencePreferences,
  ProviderKey,
  UpdateInferencePreferences,
} from "@hub/api";
import type { SettingsOwner } from "../../../auth/authorize.js";
import type { Sealer } from "../../../auth/sealed-secret.js";
import type { Db } from "../../../db/database.js";
import type { InferenceOwnerRow, InferenceUsageRow } from "../../../db/schema.js";
import { badRequest, notFound } from "../../../errors.js";
import type { Catalog, RoutingPreferences } from "../../../router/candidates.js";
import type { BillingContext } from "../../../router/contracts.js";
import { POLICIES } from "../../../router/providers-file.js";
import { usersRepository } from "../../accounts/account/users.repository.js";
import { orgsRepository } from "../../organizations/orgs/orgs.repository.js";
import { inferenceRepository as repo } from "./inference.repository.js";

/** What the Router needs to know about a bill owner before dispatching. */

const NANOS_PER_USD = 1_000_000_000;
/** Grants listed with the credit. */
const RECENT_GRANTS = 20;
/** Nano-USD as the USD amounts the API shows. */
export const toUsd = (nanos: number) => nanos / NANOS_PER_USD;
const toNanos = (usd: number) => Math.round(usd * NANOS_PER_USD);
/** A nullable bigint money column (a string on PostgreSQL) as nano-USD. */
const nanosOrNull = (value: unknown) => (value === null || value === undefined ? null : Number(value));

/** The calendar month (UTC) of a moment, as YYYY-MM: the period spend and limits count in. */
export function monthOf(date: Date): string {
  return date.toISOString().slice(0, 7);
}

function stringList(json: string): string[] {
  const parsed: unknown = JSON.parse(json);
  return Array.isArray(parsed) ? parsed.filter((v): v is string => typeof v === "string") : [];
}

function routingPreferences(row: InferenceOwnerRow | undefined): RoutingPreferences {
  return {
    providerOrder: row ? stringList(row.provider_order) : [],
    disabledProviders: row ? stringList(row.disabled_providers) : [],
    defaultPolicy: POLICIES.find((p) => p === row?.default_policy) ?? null,
  };
}

function totalsOf(row: {
  requests: unknown;
  input_tokens: unknown;
  output_tokens: unknown;
  cost_nanousd: unknown;
}) {
  return {
    requests: Number(row.requests),
    input_tokens: Number(row.input_tokens),
    output_tokens: Number(row.output_tokens),
    cost_usd: toUsd(Number(row.cost_nanousd)),
  };
}

/**
 * The Router's control plane (preferences, provider keys, credit, the usage
 * overview) and the billing facts the Router reads on every request. Provider
 * keys are sealed at rest and leave only masked.
 */
export function createInferenceService({
  db,
  clock,
  catalog,
  sealer,
}: {
  db: Db;
  clock: () => Date;
  catalog: Catalog;
  sealer: Sealer;
}) {
  function knownProvider(slug: string, field: string): void {
    if (!catalog.provider(slug)) {
      throw badRequest(
        "unknown_provider",
        `There is no provider ${slug}; list the providers at GET /api/inference/models.`,
        field,
      );
    }
  }

  async function ownerByHandle(handle: string): Promise<SettingsOwner> {
    const user = await usersRepository.findByHandle(db, handle);
    if (user) return { type: "user", id: user.id, handle: user.handle };
    const org = await orgsRepository.findByHandle(db, handle);
    if (org) return { type: "org", id: org.id, handle: org.handle };
    throw notFound(`No account or organization is named ${handle}.`);
  }

  return {
    async preferences(owner: SettingsOwner): Promise<InferencePreferences> {
      const row = await repo.owner(db, owner.id);
      const routing = routingPreferences(row);
      const limit = nanosOrNull(row?.monthly_limit_nanousd);
      return {
        provider_order: routing.providerOrder,
        disabled_providers: routing.disabledProviders,
        default_policy: routing.defaultPolicy,
        monthly_hard_limit_usd: limit === null ? null : toUsd(limit),
      };
    },

    async savePreferences(owner: SettingsOwner, input: UpdateInferencePreferences) {
      const order = input.provider_order ?? [];
      const disabled = input.disabled_providers ?? [];
      order.forEach((slug, i) => knownProvider(slug, `provider_order/${i}`));
      disabled.forEach((slug, i) => knownProvider(slug, `disabled_providers/${i}`));
      const now = clock().toISOString();
      await db.transaction().execute(async (tx) => {
        await repo.ensureOwner(tx, owner.id, owner.type, now);
        await repo.updateOwner(tx, owner.id, {
          provider_order: JSON.stringify(order),
          disabled_providers: JSON.stringify(disabled),
          default_policy: input.default_policy ?? null,
          monthly_limit_nanousd:
            input.monthly_hard_limit_usd === undefined || input.monthly_hard_limit_usd === null
              ? null
              : toNanos(input.monthly_hard_limit_usd),
          updated_at: now,
        });
      });
      return this.preferences(owner);
    },

    async providerKeys(owner: SettingsOwner): Promise<ProviderKey[]> {
      return repo.listKeys(db, owner.id);
    },

    async saveProviderKey(owner: SettingsOwner, provider: string, key: string): Promise<ProviderKey> {
      if (!catalog.provider(provider)) throw notFound(`There is no provider ${provider}.`);
      if (/\s/.test(key)) throw badRequest("invalid_key", "The key holds whitespace; paste it alone.", "key");
      const now = clock().toISOString();
      await repo.saveKey(db, owner.id, provider, sealer.seal(key), `…${key.slice(-4)}`, now);
      const saved = (await repo.listKeys(db, owner.id)).find((k) => k.provider === provider);
      if (!saved) throw new Error("A saved provider key vanished.");
      return saved;
    },

    async deleteProviderKey(owner: SettingsOwner, provider: string): Promise<void> {
      if ((await repo.deleteKey(db, owner.id, provider)) === 0) {
        throw notFound(`No key is saved for provider ${provider}.`);
      }
    },

    async overview(owner: SettingsOwner, month: string | undefined): Promise<InferenceOverview> {
      const period = month ?? monthOf(clock());
      const start = new Date(`${period}-01T00:00:00.000Z`);
      if (Number.isNaN(start.getTime())) {
        throw badRequest("invalid_month", "Give the month as YYYY-MM, e.g. 2026-11.", "month");
      }
      const end = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
      const [from, to] = [start.toISOString(), end.toISOString()];
      const [row, all, models, providers, days] = await Promise.all([
        repo.owner(db, owner.id),
        repo.totals(db, owner.id, from, to),
        repo.byModel(db, owner.id, from, to),
        repo.byProvider(db, owner.id, from, to),
        repo.byDay(db, owner.id, from, to),
      ]);
      const limit = nanosOrNull(row?.monthly_limit_nanousd);
      return {
        period: { month: period, start: from, end: to },
        balance_usd: toUsd(Number(row?.balance_nanousd ?? 0)),
        monthly_hard_limit_usd: limit === null ? null : toUsd(limit),
        restricted: row?.restricted === 1,
        totals: totalsOf(all),
        by_model: models.map((m) => ({ model: m.model, ...totalsOf(m) })),
        by_provider: providers.map((p) => ({ provider: p.provider, ...totalsOf(p) })),
        by_day: days.map((d) => ({ day: d.day, ...totalsOf(d) })),
      };
    },

    /** Read on every Router request: preferences, credit and which providers have a saved key. */
    async billingContext(ownerId: string): Promise<BillingContext> {
      const [row, keys] = await Promise.all([repo.owner(db, ownerId), repo.sealedKeys(db, ownerId)]);
      const sameMonth = row?.period === monthOf(clock());
      return {
        preferences: routingPreferences(row),
        balanceNanos: Number(row?.balance_nanousd ?? 0),
        periodSpendNanos: sameMonth ? Number(row?.period_spend_nanousd ?? 0) : 0,
        monthlyLimitNanos: nanosOrNull(row?.monthly_limit_nanousd),
        restricted: row?.restricted === 1,
        sealedKeys: new Map(keys.map((k) => [k.provider, k.sealed_key])),
      };
    },

    openKey: (sealed: string) => sealer.open(sealed),

    /** An organization a request bills, by the handle in X-Service-Bill-To or a token's boundary. */
    organization: (key: { handle: string } | { id: string }) =>
      "handle" in key ? orgsRepository.findByHandle(db, key.handle) : orgsRepository.findById(db, key.id),

    /**
     * Writes ledger rows of dispatched requests and charges their routed cost,
     * all in one transaction: each owner's balance moves once per batch.
     */
    async recordBatch(rows: ReadonlyArray<{ usage: InferenceUsageRow; ownerType: string }>): Promise<void> {
      if (rows.length === 0) return;
      const charges = new Map<
        string,
        { ownerId: string; ownerType: string; nanos: number; month: string; at: string }
      >();
      for (const { usage, ownerType } of rows) {
        const cost = Number(usage.cost_nanousd);
        if (cost <= 0) continue;
        const month = usage.created_at.slice(0, 7);
        const key = `${usage.owner_id}\u0000${month}`;
        const charge = charges.get(key) ?? {
          ownerId: usage.owner_id,
          ownerType,
          nanos: 0,
          month,
          at: usage.created_at,
        };
        charge.nanos += cost;
        charges.set(key, charge);
      }
      await db.transaction().execute(async (tx) => {
        await repo.insertUsage(
          tx,
          rows.map((row) => row.usage),
        );
        // Owners' rows are locked in one order by every hub process, so two processes' batches never deadlock
        // (PostgreSQL would abort one, and its requests would go uncharged).
        const ordered = [...charges.values()].sort((x, y) =>
          x.ownerId === y.ownerId ? x.month.localeCompare(y.month) : x.ownerId < y.ownerId ? -1 : 1,
        );
        for (const charge of ordered) {
          await repo.ensureOwner(tx, charge.ownerId, charge.ownerType, charge.at);
          await repo.adjustBalance(tx, charge.ownerId, -charge.nanos, charge.nanos, charge.month);
        }
      });
    },

    /** The credit ever granted to an owner and its newest grants, in USD. */
    async creditGrants(ownerId: string) {
      const [granted, recent] = await Promise.all([
        repo.grantedTotal(db, ownerId),
        repo.recentGrants(db, ownerId, RECENT_GRANTS),
      ]);
      return {
        grantedUsd: toUsd(granted),
        recentGrants: recent.map((g) => ({
          amountUsd: toUsd(Number(g.amount_nanousd)),
          note: g.note,
          grantedAt: g.created_at,
        })),
      };
    },

    /** `hubd credit add`: grants credit to an account or organization; returns the new balance in USD. */
    async addCredit(handle: string, usd: number, note: string): Promise<number> {
      if (!Number.isFinite(usd) || usd <= 0 || usd > 1e9) {
        throw badRequest("invalid_amount", "Give a positive amount of USD, e.g. 25 or 2.50.");
      }
      const owner = await ownerByHandle(handle);
      const now = clock();
      await db.transaction().execute(async (tx) => {
        await repo.ensureOwner(tx, owner.id, owner.type, now.toISOString());
        await repo.insertGrant(tx, randomUUID(), owner.id, toNanos(usd), note, now.toISOString());
        await repo.adjustBalance(tx, owner.id, toNanos(usd), 0, monthOf(now));
      });
      return toUsd(Number((await repo.owner(db, owner.id))?.balance_nanousd ?? 0));
    },

    /** `hubd credit restrict`: a restricted owner's routed requests answer 402 until lifted. */
    async setRestricted(handle: string, restricted: boolean): Promise<void> {
      const owner = await ownerByHandle(handle);
      const now = clock().toISOString();
      await db.transaction().execute(async (tx) => {
        await repo.ensureOwner(tx, owner.id, owner.type, now);
        await repo.updateOwner(tx, owner.id, { restricted: restricted ? 1 : 0, updated_at: now });
      });
    },
  };
}

export type InferenceService = ReturnType<typeof createInferenceService>;
