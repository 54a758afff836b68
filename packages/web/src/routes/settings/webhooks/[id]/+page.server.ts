import { fail, redirect } from "@sveltejs/kit";
import {
  WEBHOOK_DOMAINS,
  type RotatedWebhookSecret,
  type Webhook,
  type WebhookDelivery,
  type WebhookDeliveryList,
} from "@hub/api";
import { call, load as loadApi } from "$lib/server/api";
import { refused } from "$lib/server/refused";
import { parseWatched, watchedLine } from "$lib/webhooks";
import type { Actions, PageServerLoad } from "./$types";

const path = (id: string) => `/api/me/webhooks/${encodeURIComponent(id)}`;

/** One webhook route (`GET /api/me/webhooks/{id}`) and its newest deliveries with their last receipt. */
export const load: PageServerLoad = async ({ fetch, params, url }) => {
  const cursor = url.searchParams.get("cursor");
  const [{ data: webhook }, { data: deliveries }] = await Promise.all([
    loadApi<Webhook>(fetch, path(params.id)),
    loadApi<WebhookDeliveryList>(
      fetch,
      `${path(params.id)}/deliveries?limit=30${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    ),
  ]);
  return {
    webhook,
    watchedText: webhook.watched.map(watchedLine).join("\n"),
    deliveries: deliveries.deliveries,
    nextCursor: deliveries.next_cursor,
    domains: [...WEBHOOK_DOMAINS],
  };
};

export const actions: Actions = {
  /** Changes the target, what it watches, its events and description (`PATCH /api/me/webhooks/{id}`). */
  update: async ({ request, fetch, params }) => {
    const form = await request.formData();
    const url = String(form.get("url") ?? "").trim();
    const watchedText = String(form.get("watched") ?? "");
    const domains = form.getAll("domains").map(String);
    const description = String(form.get("description") ?? "").trim();
    const values = { url, watched: watchedText, domains, description };
    const watched = parseWatched(watchedText);
    if ("bad" in watched) {
      return fail(400, {
        message: `Cannot read “${watched.bad}”: write one “type name” a line, e.g. “model alice/bert”.`,
        field: "watched",
        values,
      });
    }
    try {
      await call<Webhook>(fetch, path(params.id), {
        method: "PATCH",
        body: JSON.stringify({ url, watched: watched.items, domains, description }),
      });
      return { saved: true as const };
    } catch (err) {
      return refused(err, values);
    }
  },

  /** Switches the route on (`POST …/enable`): failures reset, pending deliveries resume. */
  enable: async ({ fetch, params }) => {
    try {
      await call<Webhook>(fetch, `${path(params.id)}/enable`, { method: "POST" });
      return { switched: "on" as const };
    } catch (err) {
      return refused(err);
    }
  },

  /** Switches the route off (`POST …/disable`): no events are recorded for it meanwhile. */
  disable: async ({ fetch, params }) => {
    try {
      await call<Webhook>(fetch, `${path(params.id)}/disable`, { method: "POST" });
      return { switched: "off" as const };
    } catch (err) {
      return refused(err);
    }
  },

  /** Replaces the signing secret (`POST …/secret`); the new one is in this answer only. */
  rotate: async ({ fetch, params }) => {
    try {
      const { data } = await call<RotatedWebhookSecret>(fetch, `${path(params.id)}/secret`, {
        method: "POST",
      });
      return { secret: data.secret };
    } catch (err) {
      return refused(err);
    }
  },

  /** Sends a delivery again, same id and body (`POST …/deliveries/{deliveryId}/redeliver`). */
  redeliver: async ({ request, fetch, params }) => {
    const form = await request.formData();
    const deliveryId = String(form.get("delivery_id") ?? "");
    try {
      const { data } = await call<WebhookDelivery>(
        fetch,
        `${path(params.id)}/deliveries/${encodeURIComponent(deliveryId)}/redeliver`,
        { method: "POST" },
      );
      return { redelivered: data.id };
    } catch (err) {
      return refused(err);
    }
  },

  /** Deletes the route with its pending deliveries and receipts (`DELETE /api/me/webhooks/{id}`). */
  delete: async ({ fetch, params }) => {
    try {
      await call(fetch, path(params.id), { method: "DELETE" });
    } catch (err) {
      return refused(err);
    }
    redirect(303, "/settings/webhooks");
  },
};
