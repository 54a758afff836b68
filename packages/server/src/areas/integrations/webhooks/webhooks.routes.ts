import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  ApiErrorRef,
  CreateWebhook,
  CreatedWebhook,
  RotatedWebhookSecret,
  UpdateWebhook,
  Webhook,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookDeliveryList,
  WebhookDeliveryQuery,
  WebhookList,
} from "@hub/api";
import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { principalOf } from "../../../http/access.js";
import { ownerSettingsRoute, type OwnerSettingsRoute } from "../../../http/owner-settings.js";
import type { OrgsService } from "../../organizations/orgs/orgs.service.js";
import type { WebhooksService } from "./webhooks.service.js";

const tags = ["Webhooks"];
const WebhookParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
const DeliveryParams = Type.Object({
  id: Type.String({ maxLength: 64 }),
  deliveryId: Type.String({ maxLength: 64 }),
});
const errors = { 400: ApiErrorRef, 404: ApiErrorRef };

const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;
const deliveryIdOf = (request: FastifyRequest) => (request.params as { deliveryId: string }).deliveryId;

/**
 * Webhook routes and their delivery receipts, for the caller's account under
 * `/api/me/webhooks` and for organizations their admins manage under
 * `/api/organizations/{handle}/webhooks`; every operation needs the
 * `webhooks:manage` scope (or a session or write token).
 */
export function webhooksRoutes(deps: {
  webhooks: WebhooksService;
  orgs: OrgsService;
}): FastifyPluginAsyncTypebox {
  const { webhooks } = deps;
  return async (app) => {
    const route = (r: Omit<OwnerSettingsRoute, "tags" | "action">) =>
      ownerSettingsRoute(app, deps.orgs, { ...r, tags, action: "webhooks:manage" });

    route({
      method: "GET",
      path: "/webhooks",
      operationId: "webhooks_list",
      summary: "The webhook routes of this owner.",
      response: { 200: WebhookList },
      handler: async (owner) => ({ webhooks: await webhooks.list(owner) }),
    });
    route({
      method: "POST",
      path: "/webhooks",
      operationId: "webhooks_create",
      summary: "Create a webhook route; the response holds its signing secret, shown only this once.",
      body: CreateWebhook,
      response: { 201: CreatedWebhook, ...errors, 409: ApiErrorRef },
      handler: async (owner, request, reply) =>
        reply
          .status(201)
          .send(await webhooks.create(owner, principalOf(request), request.body as CreateWebhook)),
    });
    route({
      method: "GET",
      path: "/webhooks/:id",
      operationId: "webhooks_get",
      summary: "One webhook route, with why it was switched off if it was.",
      params: WebhookParams,
      response: { 200: Webhook, 404: ApiErrorRef },
      handler: (owner, request) => webhooks.get(owner, idOf(request)),
    });
    route({
      method: "PATCH",
      path: "/webhooks/:id",
      operationId: "webhooks_update",
      summary: "Change a route's target, what it watches, its domains or its description.",
      params: WebhookParams,
      body: UpdateWebhook,
      response: { 200: Webhook, ...errors },
      handler: (owner, request) =>
        webhooks.update(owner, principalOf(request), idOf(request), request.body as UpdateWebhook),
    });
    route({
      method: "DELETE",
      path: "/webhooks/:id",
      operationId: "webhooks_delete",
      summary: "Delete a route with its pending deliveries and receipts.",
      params: WebhookParams,
      response: { 204: { type: "null", description: "Deleted." }, 404: ApiErrorRef },
      handler: async (owner, request, reply) => {
        await webhooks.remove(owner, idOf(request));
        return reply.status(204).send();
      },
    });
    for (const [verb, disabled] of [
      ["enable", false],
      ["disable", true],
    ] as const) {
      route({
        method: "POST",
        path: `/webhooks/:id/${verb}`,
        operationId: `webhooks_${verb}`,
        summary: disabled
          ? "Switch a route off; events are not recorded for it until it is enabled."
          : "Switch a route on again; its failure count resets and its pending deliveries resume.",
        params: WebhookParams,
        response: { 200: Webhook, 404: ApiErrorRef },
        handler: (owner, request) => webhooks.setDisabled(owner, idOf(request), disabled),
      });
    }
    route({
      method: "POST",
      path: "/webhooks/:id/secret",
      operationId: "webhooks_rotate_secret",
      summary: "Replace the signing secret; the new one is shown only this once.",
      params: WebhookParams,
      response: { 200: RotatedWebhookSecret, 404: ApiErrorRef },
      handler: (owner, request) => webhooks.rotateSecret(owner, idOf(request)),
    });
    route({
      method: "GET",
      path: "/webhooks/:id/deliveries",
      operationId: "webhooks_deliveries_list",
      summary: "The route's deliveries, newest first, each with its last attempt.",
      params: WebhookParams,
      querystring: WebhookDeliveryQuery,
      response: { 200: WebhookDeliveryList, ...errors },
      handler: (owner, request) =>
        webhooks.deliveries(owner, idOf(request), request.query as WebhookDeliveryQuery),
    });
    route({
      method: "GET",
      path: "/webhooks/:id/deliveries/:deliveryId",
      operationId: "webhooks_delivery_get",
      summary: "One delivery: the payload sent and the receipt of every attempt.",
      params: DeliveryParams,
      response: { 200: WebhookDeliveryDetail, 404: ApiErrorRef },
      handler: (owner, request) => webhooks.delivery(owner, idOf(request), deliveryIdOf(request)),
    });
    route({
      method: "POST",
      path: "/webhooks/:id/deliveries/:deliveryId/redeliver",
      operationId: "webhooks_delivery_redeliver",
      summary: "Send a delivery again, same id and body, as soon as possible.",
      params: DeliveryParams,
      response: { 202: WebhookDelivery, 404: ApiErrorRef, 409: ApiErrorRef },
      handler: async (owner, request, reply) =>
        reply.status(202).send(await webhooks.redeliver(owner, idOf(request), deliveryIdOf(request))),
    });
  };
}
