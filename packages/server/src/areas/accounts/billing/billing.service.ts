import {
  ACCOUNT_PLANS,
  CARD_BRANDS,
  type AccountBilling,
  type AccountPlan,
  type PaymentInformation,
  type PaymentMethod,
} from "@hub/api";
import type { SettingsOwner } from "../../../auth/authorize.js";
import type { Db } from "../../../db/database.js";
import type { PaymentMethodRow } from "../../../db/schema.js";
import { badRequest, notFound } from "../../../errors.js";
import { routedRefusal } from "../../../router/billing.js";
import { EMAIL_PATTERN } from "../account/account.service.js";
import { usersRepository } from "../account/users.repository.js";
import { toUsd, type InferenceService } from "../../inference/settings/inference.service.js";
import { billingRepository } from "./billing.repository.js";

/** What the operator gives to record a payment method (`hubd billing payment-method set`). */
export interface PaymentMethodInput {
  brand: string;
  last4: string;
  /** `YYYY-MM`. */
  expires: string;
  holder?: string;
  email?: string;
  country?: string;
}

/** Twelve or more digits, perhaps grouped by spaces or dashes: the shape of a card number (PAN). */
const CARD_NUMBER = /\d(?:[ -]?\d){11,}/;
/** One line of 1 to 100 characters, without control characters. */
const isLine = (value: string) => value.length >= 1 && value.length <= 100 && !/\p{Cc}/u.test(value);
/** How many years ahead a card's expiry may lie. */
const MAX_CARD_YEARS = 20;

function usage(totals: { requests: number; input_tokens: number; output_tokens: number; cost_usd: number }) {
  return {
    requests: totals.requests,
    inputTokens: totals.input_tokens,
    outputTokens: totals.output_tokens,
    spendUsd: totals.cost_usd,
  };
}

function expiredAt(row: Pick<PaymentMethodRow, "exp_month" | "exp_year">, now: Date): boolean {
  return row.exp_year * 12 + row.exp_month < now.getUTCFullYear() * 12 + now.getUTCMonth() + 1;
}

function present(row: PaymentMethodRow, now: Date): PaymentMethod {
  const brand = CARD_BRANDS.find((b) => b === row.brand);
  if (!brand) throw new Error(`The card brand on file, ${row.brand}, is unknown.`);
  return {
    type: "card",
    brand,
    last4: row.last4,
    masked: `${brand} •••• ${row.last4}`,
    expMonth: row.exp_month,
    expYear: row.exp_year,
    expired: expiredAt(row, now),
    holder: row.holder,
    billingEmail: row.billing_email,
    country: row.country,
    addedAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * Checks what the operator recorded: never anything that looks like a card
 * number (in any field), a brand the hub knows, four digits, an expiry that
 * has not passed, and well-formed holder, email and country.
 */
function checkedPaymentMethod(input: PaymentMethodInput, now: Date) {
  for (const [field, value] of Object.entries(input)) {
    if (typeof value === "string" && CARD_NUMBER.test(value)) {
      throw badRequest(
        "card_number_refused",
        `The ${field} looks like a card number; the hub never stores one. Give only the last four digits (--last4).`,
        field,
      );
    }
  }
  const brand = CARD_BRANDS.find((b) => b === input.brand.toLowerCase());
  if (!brand) {
    throw badRequest("invalid_card_brand", `The brand must be one of ${CARD_BRANDS.join(", ")}.`, "brand");
  }
  if (!/^\d{4}$/.test(input.last4)) {
    throw badRequest("invalid_last4", "Give the card's last four digits, e.g. 4242.", "last4");
  }
  const expiry = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(input.expires);
  if (!expiry) {
    throw badRequest("invalid_expiry", "Give the expiry as YYYY-MM, e.g. 2030-12.", "expires");
  }
  const dates = { exp_year: Number(expiry[1]), exp_month: Number(expiry[2]) };
  if (expiredAt(dates, now)) {
    throw badRequest(
      "card_expired",
      `The card expired in ${input.expires}; record a current one.`,
      "expires",
    );
  }
  if (dates.exp_year > now.getUTCFullYear() + MAX_CARD_YEARS) {
    throw badRequest(
      "invalid_expiry",
      `The expiry is more than ${MAX_CARD_YEARS} years away; check it.`,
      "expires",
    );
  }
  if (input.holder !== undefined && !isLine(input.holder.trim())) {
    throw badRequest("invalid_holder", "The holder is 1 to 100 characters on one line.", "holder");
  }
  if (input.email !== undefined && (input.email.length > 254 || !EMAIL_PATTERN.test(input.email))) {
    throw badRequest("invalid_email", `"${input.email}" is not an email address.`, "email");
  }
  if (input.country !== undefined && !/^[A-Za-z]{2}$/.test(input.country)) {
    throw badRequest(
      "invalid_country",
      "Give the country as its two-letter ISO 3166-1 code, e.g. DE.",
      "country",
    );
  }
  return {
    brand,
    last4: input.last4,
    ...dates,
    holder: input.holder?.trim() ?? null,
    billing_email: input.email?.toLowerCase() ?? null,
    country: input.country?.toUpperCase() ?? null,
  };
}

/**
 * Billing of an account: its plan and payment method on file, which the
 * operator records (there is no payment processor), and its credit, usage and
 * spend, read from the inference Router's ledger through the inference area.
 */
export function createBillingService({
  db,
  clock,
  inference,
}: {
  db: Db;
  clock: () => Date;
  inference: InferenceService;
}) {
  async function userByHandle(handle: string) {
    const user = await usersRepository.findByHandle(db, handle);
    if (!user) throw notFound(`No user is called "${handle}".`);
    return user;
  }

  return {
    /** The plan, credit, this month's usage and spend, and what is left of the monthly hard limit. */
    async billing(owner: SettingsOwner): Promise<AccountBilling> {
      const [overview, context, credit, plan, method] = await Promise.all([
        inference.overview(owner, undefined),
        inference.billingContext(owner.id),
        inference.creditGrants(owner.id),
        billingRepository.plan(db, owner.id),
        billingRepository.paymentMethod(db, owner.id),
      ]);
      const limit = context.monthlyLimitNanos;
      const refusal = routedRefusal(context);
      return {
        plan: ACCOUNT_PLANS.find((p) => p === plan) ?? "free",
        canPay: method !== undefined && !expiredAt(method, clock()),
        credit: { balanceUsd: overview.balance_usd, ...credit },
        currentPeriod: {
          ...overview.period,
          ...usage(overview.totals),
          byProvider: overview.by_provider.map((p) => ({ provider: p.provider, ...usage(p) })),
          byModel: overview.by_model.map((m) => ({ model: m.model, ...usage(m) })),
        },
        monthlyHardLimitUsd: overview.monthly_hard_limit_usd,
        monthlyHardLimitRemainingUsd:
          limit === null ? null : toUsd(Math.max(0, limit - context.periodSpendNanos)),
        restricted: overview.restricted,
        routedInference: { allowed: refusal === null, refusal },
      };
    },

    /** The payment method on file, masked, or null. */
    async paymentInformation(userId: string): Promise<PaymentInformation> {
      const row = await billingRepository.paymentMethod(db, userId);
      return { paymentMethod: row ? present(row, clock()) : null };
    },

    /** `hubd billing plan`: puts the account on a plan. */
    async setPlan(handle: string, plan: string): Promise<AccountPlan> {
      const known = ACCOUNT_PLANS.find((p) => p === plan);
      if (!known) {
        throw badRequest("invalid_plan", `The plan must be one of ${ACCOUNT_PLANS.join(", ")}.`, "plan");
      }
      const user = await userByHandle(handle);
      await billingRepository.setPlan(db, user.id, known, clock().toISOString());
      return known;
    },

    /** `hubd billing payment-method set`: records (or replaces) the masked payment method on file. */
    async setPaymentMethod(handle: string, input: PaymentMethodInput): Promise<PaymentMethod> {
      const now = clock();
      const checked = checkedPaymentMethod(input, now);
      const user = await userByHandle(handle);
      const at = now.toISOString();
      await billingRepository.savePaymentMethod(db, {
        user_id: user.id,
        ...checked,
        created_at: at,
        updated_at: at,
      });
      const saved = await billingRepository.paymentMethod(db, user.id);
      if (!saved) throw new Error("A saved payment method vanished.");
      return present(saved, now);
    },

    /** `hubd billing payment-method remove`: forgets the method on file. */
    async removePaymentMethod(handle: string): Promise<void> {
      const user = await userByHandle(handle);
      if ((await billingRepository.removePaymentMethod(db, user.id)) === 0) {
        throw notFound(`${handle} has no payment method on file.`);
      }
    },
  };
}

export type BillingService = ReturnType<typeof createBillingService>;
