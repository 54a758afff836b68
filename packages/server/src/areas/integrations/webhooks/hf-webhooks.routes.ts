import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { ApiErrorRef, WEBHOOK_DOMAINS, Webhook, WatchedItem, type WebhookDomain } from "@hub/api";
import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import type { SettingsOwner } from "../../../auth/authorize.js";
import { badRequest } from "../../../errors.js";
import { principalOf } from "../../../http/access.js";
import type { WebhooksService } from "./webhooks.service.js";

const tags = ["Webhooks"];
const access = { access: { action: "webhooks:manage" as const } };
const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });
const errors = { 400: ApiErrorRef, 404: ApiErrorRef };

/** A route as `huggingface_hub` reads it (`WebhookInfo`): the hub's fields, the secret only when just created. */
const HfWebhook = Type.Composite([Webhook, Type.Object({ secret: Type.Optional(Type.String()) })], {
  title: "HfWebhook",
});
const Wrapped = Type.Object({ webhook: HfWebhook }, { title: "HfWebhookAnswer" });

/** What `create_webhook` and `update_webhook` send. */
const HfWebhookBody = Type.Object(
  {
    url: Type.Optional(Type.String({ maxLength: 2048 })),
    watched: Type.Optional(Type.Array(WatchedItem, { maxItems: 100 })),
    domains: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 10 })),
    secret: Type.Optional(Type.String({ maxLength: 1024 })),
    jobSourceId: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { title: "HfWebhookBody", additionalProperties: false },
);
type HfWebhookBody = {
  url?: string;
  watched?: WatchedItem[];
  domains?: string[];
  secret?: string;
  jobSourceId?: string;
};

const ownerOf = (request: FastifyRequest): SettingsOwner => {
  const principal = principalOf(request);
  return { type: "user", id: principal.userId, handle: principal.handle };
};
const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;

/**
 * Refuses what the hub would otherwise drop: a secret the caller chose (the hub
 * signs with its own, Standard Webhooks, shown once) and jobs as targets.
 */
function refuseUnsupported(body: HfWebhookBody): void {
  if (body.secret !== undefined) {
    throw badRequest(
      "unsupported_parameter",
      "secret: the hub makes each route's signing secret itself (Standard Webhooks signatures, webhook-signature header) and returns it once when the route is created; leave secret out and store the one it returns.",
      "secret",
    );
  }
  if (body.jobSourceId !== undefined) {
    throw badRequest(
      "unsupported_parameter",
      "job_id: this hub runs no jobs; give a url instead.",
      "jobSourceId",
    );
  }
}

/** The domains asked for, each one the hub delivers, or a 400 naming the first it does not. */
function domainsOf(domains: string[] | undefined): WebhookDomain[] | undefined {
  if (domains === undefined) return undefined;
  for (const domain of domains) {
    if (!WEBHOOK_DOMAINS.some((known) => known === domain)) {
      throw badRequest(
        "unsupported_parameter",
        `domains: "${domain}" events are not delivered by this hub yet; use ${WEBHOOK_DOMAINS.join(", ")}.`,
        "domains",
      );
    }
  }
  return domains as WebhookDomain[];
}

/**
 * The caller's webhook routes at `/api/settings/webhooks`, where
 * `huggingface_hub` manages them (list_webhooks, get_webhook, create_webhook,
 * update_webhook, enable_webhook, disable_webhook, delete_webhook): the same
 * service and decisions as `/api/me/webhooks`, in the client's shapes.
 */
export function hfWebhooksRoutes({ webhooks }: { webhooks: WebhooksService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/api/settings/webhooks",
      {
        schema: {
          operationId: "hf_webhooks_list",
          tags,
          summary: "Your webhook routes, as huggingface_hub lists them.",
          response: { 200: Type.Array(HfWebhook) },
        },
        config: access,
      },
      async (request) => webhooks.list(ownerOf(request)),
    );
    app.post(
      "/api/settings/webhooks",
      {
        schema: {
          operationId: "hf_webhooks_create",
          tags,
          summary: "Create a webhook route; the answer holds its signing secret, shown once.",
          body: HfWebhookBody,
          response: { 200: Wrapped, ...errors },
        },
        config: access,
      },
      async (request) => {
        const body = request.body as HfWebhookBody;
        refuseUnsupported(body);
        if (body.url === undefined)
          throw badRequest("validation_failed", "Give the url deliveries go to.", "url");
        if (!body.watched?.length)
          throw badRequest(
            "validation_failed",
            "Watch at least one user, organization or repository.",
            "watched",
          );
        // Without domains, huggingface_hub means every event: all of a repository's.
        const domains = domainsOf(body.domains) ?? ["repo"];
        const create = { url: body.url, watched: body.watched, domains };
        return { webhook: await webhooks.create(ownerOf(request), principalOf(request), create) };
      },
    );
    app.get(
      "/api/settings/webhooks/:id",
      {
        schema: {
          operationId: "hf_webhooks_get",
          tags,
          summary: "One webhook route.",
          params: Params,
          response: { 200: Wrapped, 404: ApiErrorRef },
        },
        config: access,
      },
      async (request) => ({ webhook: await webhooks.get(ownerOf(request), idOf(request)) }),
    );
    app.post(
      "/api/settings/webhooks/:id",
      {
        schema: {
          operationId: "hf_webhooks_update",
          tags,
          summary: "Change a webhook route's url, watched items or domains.",
          params: Params,
          body: HfWebhookBody,
          response: { 200: Wrapped, ...errors },
        },
        config: access,
      },
      async (request) => {
        const body = request.body as HfWebhookBody;
        refuseUnsupported(body);
        const domains = domainsOf(body.domains);
        // huggingface_hub sends watched: [] when the caller leaves it alone.
        const update = {
          ...(body.url === undefined ? {} : { url: body.url }),
          ...(body.watched?.length ? { watched: body.watched } : {}),
          ...(domains === undefined ? {} : { domains }),
        };
        const owner = ownerOf(request);
        if (Object.keys(update).length === 0) return { webhook: await webhooks.get(owner, idOf(request)) };
        return { webhook: await webhooks.update(owner, principalOf(request), idOf(request), update) };
      },
    );
    for (const [verb, disabled] of [
      ["enable", false],
      ["disable", true],
    ] as const) {
      app.post(
        `/api/settings/webhooks/:id/${verb}`,
        {
          schema: {
            operationId: `hf_webhooks_${verb}`,
            tags,
            summary: `${verb === "enable" ? "Enable" : "Disable"} a webhook route.`,
            params: Params,
            response: { 200: Wrapped, 404: ApiErrorRef },
          },
          config: access,
        },
        async (request) => ({
          webhook: await webhooks.setDisabled(ownerOf(request), idOf(request), disabled),
        }),
      );
    }
    app.delete(
      "/api/settings/webhooks/:id",
      {
        schema: {
          operationId: "hf_webhooks_delete",
          tags,
          summary: "Delete a webhook route.",
          params: Params,
          response: { 200: Type.Object({}), 404: ApiErrorRef },
        },
        config: access,
      },
      async (request) => {
        await webhooks.remove(ownerOf(request), idOf(request));
        return {};
      },
    );
  };
}
