import { Type, type Static } from "@sinclair/typebox";

/** The plans an account can be on; the operator sets them (`hubd billing plan`). `pro` shows as `isPro`. */
export const ACCOUNT_PLANS = ["free", "pro"] as const;
export type AccountPlan = (typeof ACCOUNT_PLANS)[number];

/** Card brands a payment method on file may name. */
export const CARD_BRANDS = ["visa", "mastercard", "amex", "discover", "jcb", "diners", "unionpay"] as const;
export type CardBrand = (typeof CARD_BRANDS)[number];

/** Why routed (hub-paid) inference is refused right now; the Router answers 402 with the same code. */
export const ROUTED_REFUSALS = [
  "account_restricted",
  "monthly_limit_reached",
  "insufficient_credit",
] as const;

const Usage = {
  requests: Type.Integer(),
  inputTokens: Type.Integer(),
  outputTokens: Type.Integer(),
  spendUsd: Type.Number({ description: "Routed spend; requests paid with the account's own key cost 0." }),
};

/** `GET /api/me/billing`: the plan, credit and this month's usage and spend from the Router's ledger. */
export const AccountBilling = Type.Object(
  {
    plan: Type.Union(
      ACCOUNT_PLANS.map((p) => Type.Literal(p)),
      { description: "Set by the operator; `free` until then." },
    ),
    canPay: Type.Boolean({ description: "Whether a payment method is on file." }),
    credit: Type.Object({
      balanceUsd: Type.Number({ description: "Credit left for routed inference." }),
      grantedUsd: Type.Number({ description: "All credit ever granted to the account." }),
      recentGrants: Type.Array(
        Type.Object({
          amountUsd: Type.Number(),
          note: Type.String(),
          grantedAt: Type.String({ format: "date-time" }),
        }),
        { description: "The 20 newest grants, newest first." },
      ),
    }),
    currentPeriod: Type.Object(
      {
        month: Type.String({ pattern: "^\\d{4}-\\d{2}$" }),
        start: Type.String({ format: "date-time" }),
        end: Type.String({ format: "date-time", description: "Exclusive: the next month's start." }),
        ...Usage,
        byProvider: Type.Array(Type.Object({ provider: Type.String(), ...Usage })),
        byModel: Type.Array(Type.Object({ model: Type.String(), ...Usage })),
      },
      { description: "The calendar month (UTC) spend and the hard limit count in." },
    ),
    monthlyHardLimitUsd: Type.Union([Type.Number(), Type.Null()], {
      description: "Set in the inference preferences; null for none.",
    }),
    monthlyHardLimitRemainingUsd: Type.Union([Type.Number(), Type.Null()], {
      description: "What routed inference may still spend this month; null without a limit.",
    }),
    restricted: Type.Boolean({ description: "The operator stopped the account's routed inference." }),
    routedInference: Type.Object({
      allowed: Type.Boolean({ description: "Whether a paid routed request would be dispatched now." }),
      refusal: Type.Union([...ROUTED_REFUSALS.map((r) => Type.Literal(r)), Type.Null()]),
    }),
  },
  { title: "AccountBilling" },
);
export type AccountBilling = Static<typeof AccountBilling>;

/** A card on file, masked: the hub never holds a card number, only what identifies the card to its owner. */
export const PaymentMethod = Type.Object(
  {
    type: Type.Literal("card"),
    brand: Type.Union(CARD_BRANDS.map((b) => Type.Literal(b))),
    last4: Type.String({ pattern: "^\\d{4}$" }),
    masked: Type.String({ description: "How to show it, e.g. `visa •••• 4242`." }),
    expMonth: Type.Integer({ minimum: 1, maximum: 12 }),
    expYear: Type.Integer(),
    expired: Type.Boolean(),
    holder: Type.Union([Type.String(), Type.Null()]),
    billingEmail: Type.Union([Type.String(), Type.Null()]),
    country: Type.Union([Type.String({ pattern: "^[A-Z]{2}$" }), Type.Null()], {
      description: "ISO 3166-1 alpha-2.",
    }),
    addedAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "PaymentMethod" },
);
export type PaymentMethod = Static<typeof PaymentMethod>;

/** `GET /api/me/billing/payment-information`: the payment method on file, or null when none is. */
export const PaymentInformation = Type.Object(
  { paymentMethod: Type.Union([PaymentMethod, Type.Null()]) },
  { title: "PaymentInformation" },
);
export type PaymentInformation = Static<typeof PaymentInformation>;
