import { Type, type Static } from "@sinclair/typebox";

/**
 * Event scopes a route can subscribe to. `repo` covers every repository event
 * (created, deleted, moved, and the two below); `repo.content` only pushes and
 * commits; `repo.config` only visibility and settings changes. These are the
 * scopes Hugging Face's webhooks use in their payloads. `discussion` covers
 * discussions and pull requests (opened, renamed, status changes, merges) and
 * their comments (`discussion.comment`).
 */
export const WEBHOOK_DOMAINS = ["repo", "repo.content", "repo.config", "discussion"] as const;
export type WebhookDomain = (typeof WEBHOOK_DOMAINS)[number];

export const WATCHED_TYPES = ["user", "org", "model", "dataset", "space", "mcp"] as const;
export type WatchedType = (typeof WATCHED_TYPES)[number];

/** A namespace (`user`, `org`: every repository in it) or one repository (`model`, `dataset`, `space`, `mcp`). */
export const WatchedItem = Type.Object(
  {
    type: Type.Union(
      WATCHED_TYPES.map((t) => Type.Literal(t)),
      { description: "`user` or `org` watches a namespace; a repository kind watches one repository." },
    ),
    name: Type.String({
      minLength: 1,
      maxLength: 160,
      description: "A handle for namespaces, `owner/name` for repositories.",
    }),
  },
  { title: "WatchedItem", additionalProperties: false },
);
export type WatchedItem = Static<typeof WatchedItem>;

const Domains = Type.Array(Type.Union(WEBHOOK_DOMAINS.map((d) => Type.Literal(d))), {
  minItems: 1,
  maxItems: WEBHOOK_DOMAINS.length,
  uniqueItems: true,
});
const Watched = Type.Array(WatchedItem, { minItems: 1, maxItems: 100, uniqueItems: true });
const TargetUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: "Where deliveries are POSTed: an http or https URL without credentials.",
});
const Description = Type.String({ maxLength: 500 });

export const CreateWebhook = Type.Object(
  {
    url: TargetUrl,
    watched: Watched,
    domains: Domains,
    description: Type.Optional(Description),
    disabled: Type.Optional(Type.Boolean({ description: "Create it switched off." })),
  },
  {
    title: "CreateWebhook",
    // The spec marks this body (F): open, so fields other clients add are accepted and ignored.
    additionalProperties: true,
  },
);
export type CreateWebhook = Static<typeof CreateWebhook>;

/** `PATCH`: the fields given replace the route's; enable and disable have their own operations. */
export const UpdateWebhook = Type.Object(
  {
    url: Type.Optional(TargetUrl),
    watched: Type.Optional(Watched),
    domains: Type.Optional(Domains),
    description: Type.Optional(Description),
  },
  { title: "UpdateWebhook", additionalProperties: false, minProperties: 1 },
);
export type UpdateWebhook = Static<typeof UpdateWebhook>;

const DateTime = Type.String({ format: "date-time" });
const NullableDateTime = Type.Union([DateTime, Type.Null()]);

export const Webhook = Type.Object(
  {
    id: Type.String({ format: "uuid" }),
    url: Type.String(),
    watched: Type.Array(WatchedItem, {
      description: "Current names; a watched repository that was renamed shows its new name.",
    }),
    domains: Type.Array(Type.String()),
    description: Type.String(),
    disabled: Type.Boolean(),
    disabled_reason: Type.Union([Type.String(), Type.Null()], {
      description: "Why the hub switched the route off after repeated failures; null when an owner did.",
    }),
    disabled_at: NullableDateTime,
    consecutive_failures: Type.Integer({ description: "Failed attempts since the last success." }),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { title: "Webhook" },
);
export type Webhook = Static<typeof Webhook>;

/** The create response, the only time the signing secret is shown. */
export const CreatedWebhook = Type.Composite(
  [
    Webhook,
    Type.Object({
      secret: Type.String({
        description:
          "The signing secret (`whsec_` + base64 key, as Standard Webhooks); shown once, store it now.",
      }),
    }),
  ],
  { title: "CreatedWebhook" },
);
export type CreatedWebhook = Static<typeof CreatedWebhook>;

export const RotatedWebhookSecret = Type.Object(
  { secret: Type.String({ description: "The new signing secret; the old one stops signing at once." }) },
  { title: "RotatedWebhookSecret" },
);
export type RotatedWebhookSecret = Static<typeof RotatedWebhookSecret>;

export const WebhookList = Type.Object({ webhooks: Type.Array(Webhook) }, { title: "WebhookList" });
export type WebhookList = Static<typeof WebhookList>;

export const ATTEMPT_OUTCOMES = ["success", "http_error", "timeout", "network_error", "refused"] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/** One try at delivering: a delivery receipt. */
export const DeliveryAttempt = Type.Object(
  {
    attempted_at: DateTime,
    duration_ms: Type.Integer(),
    outcome: Type.Union(ATTEMPT_OUTCOMES.map((o) => Type.Literal(o))),
    status_code: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's HTTP status." }),
    response_excerpt: Type.Union([Type.String(), Type.Null()], {
      description: "The first KiB of the receiver's response body.",
    }),
    error: Type.Union([Type.String(), Type.Null()], { description: "Why no response was received." }),
    redelivery: Type.Boolean({ description: "Asked for by an owner rather than scheduled." }),
  },
  { title: "DeliveryAttempt" },
);
export type DeliveryAttempt = Static<typeof DeliveryAttempt>;

export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const WebhookDelivery = Type.Object(
  {
    id: Type.String({ description: "The `webhook-id` header; the same on every attempt." }),
    event_id: Type.String({ description: "The event's id, shared by every route it was delivered to." }),
    event: Type.Object({ action: Type.String(), scope: Type.String() }),
    status: Type.Union(
      DELIVERY_STATUSES.map((s) => Type.Literal(s)),
      {
        description: "`pending` until a 2xx answer or until the retries run out (`failed`).",
      },
    ),
    attempts: Type.Integer(),
    next_attempt_at: NullableDateTime,
    created_at: DateTime,
    delivered_at: NullableDateTime,
    last_attempt: Type.Union([DeliveryAttempt, Type.Null()]),
  },
  { title: "WebhookDelivery" },
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookDeliveryList = Type.Object(
  {
    deliveries: Type.Array(WebhookDelivery),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: "Pass as `cursor` for older deliveries.",
    }),
  },
  { title: "WebhookDeliveryList" },
);
export type WebhookDeliveryList = Static<typeof WebhookDeliveryList>;

export const WebhookDeliveryDetail = Type.Composite(
  [
    WebhookDelivery,
    Type.Object({
      payload: Type.Unknown({ description: "The JSON body sent, byte for byte the same on every attempt." }),
      receipts: Type.Array(DeliveryAttempt, { description: "Every attempt, oldest first." }),
    }),
  ],
  { title: "WebhookDeliveryDetail" },
);
export type WebhookDeliveryDetail = Static<typeof WebhookDeliveryDetail>;

export const WebhookDeliveryQuery = Type.Object(
  {
    status: Type.Optional(Type.Union(DELIVERY_STATUSES.map((s) => Type.Literal(s)))),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type WebhookDeliveryQuery = Static<typeof WebhookDeliveryQuery>;
