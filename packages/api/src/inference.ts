import { Type, type Static } from "@sinclair/typebox";

const Policy = Type.Union([Type.Literal("fastest"), Type.Literal("cheapest"), Type.Literal("preferred")]);
const Slug = Type.String({ pattern: "^[a-z0-9][a-z0-9-]{0,62}$" });

/** How the Router picks providers for an owner, and the owner's monthly spending limit. */
export const InferencePreferences = Type.Object(
  {
    provider_order: Type.Array(Slug, {
      uniqueItems: true,
      maxItems: 100,
      description: "Provider slugs in the order `:preferred` tries them.",
    }),
    disabled_providers: Type.Array(Slug, {
      uniqueItems: true,
      maxItems: 100,
      description: "Providers never used for this owner; pinning one answers 404.",
    }),
    default_policy: Type.Union([Policy, Type.Null()], {
      description: "The policy when a model id carries no suffix; null means the hub default, fastest.",
    }),
    monthly_hard_limit_usd: Type.Union([Type.Number({ minimum: 0, maximum: 1e9 }), Type.Null()], {
      description: "Routed spend per calendar month (UTC) above which requests answer 402; null for none.",
    }),
  },
  { title: "InferencePreferences", additionalProperties: false },
);
export type InferencePreferences = Static<typeof InferencePreferences>;

/** `PUT .../inference/preferences` replaces the preferences; fields left out take their defaults. */
export const UpdateInferencePreferences = Type.Partial(InferencePreferences, {
  title: "UpdateInferencePreferences",
  additionalProperties: false,
});
export type UpdateInferencePreferences = Static<typeof UpdateInferencePreferences>;

/** A saved provider key, never shown whole again. */
export const ProviderKey = Type.Object(
  {
    provider: Type.String(),
    key_hint: Type.String({ description: "The key masked to its last four characters." }),
    created_at: Type.String({ format: "date-time" }),
    updated_at: Type.String({ format: "date-time" }),
  },
  { title: "ProviderKey" },
);
export type ProviderKey = Static<typeof ProviderKey>;

export const ProviderKeyList = Type.Object({ keys: Type.Array(ProviderKey) }, { title: "ProviderKeyList" });
export type ProviderKeyList = Static<typeof ProviderKeyList>;

export const SaveProviderKey = Type.Object(
  { key: Type.String({ minLength: 8, maxLength: 4096, description: "The provider API key (BYOK)." }) },
  { title: "SaveProviderKey", additionalProperties: false },
);
export type SaveProviderKey = Static<typeof SaveProviderKey>;

/** One provider serving a model, with its price and the hub's live measurements. */
export const CatalogProvider = Type.Object({
  provider: Type.String(),
  task: Type.Union([Type.Literal("chat"), Type.Literal("responses"), Type.Literal("embeddings")]),
  status: Type.Union([Type.Literal("live"), Type.Literal("cooling_down")]),
  pricing: Type.Object({
    input: Type.Number({ description: "USD per million input tokens." }),
    output: Type.Number({ description: "USD per million output tokens." }),
  }),
  context_length: Type.Union([Type.Integer(), Type.Null()]),
  first_token_latency_ms: Type.Union([Type.Number(), Type.Null()], {
    description: "Exponentially weighted time to first byte from live traffic; null until measured.",
  }),
  throughput: Type.Union([Type.Number(), Type.Null()], {
    description: "Exponentially weighted output tokens per second from live traffic; null until measured.",
  }),
});

export const CatalogModel = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal("model"),
    created: Type.Integer(),
    owned_by: Type.String(),
    providers: Type.Array(CatalogProvider),
  },
  { title: "CatalogModel" },
);
export type CatalogModel = Static<typeof CatalogModel>;

export const CatalogModelList = Type.Object(
  { object: Type.Literal("list"), data: Type.Array(CatalogModel) },
  { title: "CatalogModelList" },
);
export type CatalogModelList = Static<typeof CatalogModelList>;

const UsageTotals = {
  requests: Type.Integer(),
  input_tokens: Type.Integer(),
  output_tokens: Type.Integer(),
  cost_usd: Type.Number(),
};

/** Spend and usage of an owner over one calendar month (UTC), from the usage ledger. */
export const InferenceOverview = Type.Object(
  {
    period: Type.Object({
      month: Type.String({ pattern: "^\\d{4}-\\d{2}$" }),
      start: Type.String({ format: "date-time" }),
      end: Type.String({ format: "date-time" }),
    }),
    balance_usd: Type.Number({ description: "Credit left for routed requests." }),
    monthly_hard_limit_usd: Type.Union([Type.Number(), Type.Null()]),
    restricted: Type.Boolean(),
    totals: Type.Object(UsageTotals),
    by_model: Type.Array(Type.Object({ model: Type.String(), ...UsageTotals })),
    by_provider: Type.Array(Type.Object({ provider: Type.String(), ...UsageTotals })),
    by_day: Type.Array(Type.Object({ day: Type.String(), ...UsageTotals })),
  },
  { title: "InferenceOverview" },
);
export type InferenceOverview = Static<typeof InferenceOverview>;
