import { fail } from "@sveltejs/kit";
import type { Webhook, WebhookDelivery, WebhookDeliveryDetail, WebhookDeliveryList } from "@hub/api";
import { call } from "$lib/server/api";
import { orgApi, refusal, refusePage } from "$lib/server/org";
import { DOMAIN_CHOICES, domainsOf, watchedItems, webhookValues } from "$lib/server/webhook-form";
import { watchedLine } from "$lib/webhooks";
import type { Actions, PageServerLoad } from "./$types";

const hookPath = (org: string, id: string) => `${orgApi(org)}/webhooks/${encodeURIComponent(id)}`;

/**
 * One webhook: its settings to edit, its delivery receipts newest first (`?cursor=` pages to older ones), and
 * with `?delivery=` one delivery's payload and every attempt.
 */
export const load: PageServerLoad = async ({ params, fetch, url }) => {
  const path = hookPath(params.org, params.id);
  const query = new URLSearchParams({ limit: "50" });
  const cursor = url.searchParams.get("cursor");
  if (cursor) query.set("cursor", cursor);
  const chosen = url.searchParams.get("delivery");
  try {
    const [{ data: hook }, { data: list }, detail] = await Promise.all([
      call<Webhook>(fetch, path),
      call<WebhookDeliveryList>(fetch, `${path}/deliveries?${query}`),
      chosen
        ? call<WebhookDeliveryDetail>(fetch, `${path}/deliveries/${encodeURIComponent(chosen)}`).then(
            ({ data }) => data,
          )
        : Promise.resolve(null),
    ]);
    return {
      hook,
      values: {
        url: hook.url,
        watched: hook.watched.map(watchedLine).join("\n"),
        domains: hook.domains,
        description: hook.description,
      },
      deliveries: list.deliveries,
      nextCursor: list.next_cursor,
      detail: detail ? { ...detail, payloadText: JSON.stringify(detail.payload, null, 2) } : null,
      domainChoices: DOMAIN_CHOICES,
    };
  } catch (err) {
    refusePage(err);
  }
};

export const actions: Actions = {
  /** `PATCH …/webhooks/{id}`: the target, what it watches, its events and description. */
  update: async ({ request, params, fetch }) => {
    const values = webhookValues(await request.formData());
    const keep = { values };
    if (!values.url)
      return fail(400, { action: "update", field: "url", message: "URL: where to send events.", ...keep });
    const watched = watchedItems(values.watched);
    if (typeof watched === "string")
      return fail(400, { action: "update", field: "watched", message: watched, ...keep });
    try {
      await call<Webhook>(fetch, hookPath(params.org, params.id), {
        method: "PATCH",
        body: JSON.stringify({
          url: values.url,
          watched,
          domains: domainsOf(values),
          description: values.description,
        }),
      });
    } catch (err) {
      const { status, ...why } = refusal(err);
      return fail(status, { action: "update", ...why, ...keep });
    }
    return { action: "update", done: "The webhook is saved." };
  },

  /** `POST …/deliveries/{deliveryId}/redeliver`: sent again, same id and body, as soon as possible. */
  redeliver: async ({ request, params, fetch }) => {
    const delivery = String((await request.formData()).get("delivery") ?? "");
    try {
      const { data } = await call<WebhookDelivery>(
        fetch,
        `${hookPath(params.org, params.id)}/deliveries/${encodeURIComponent(delivery)}/redeliver`,
        { method: "POST" },
      );
      return { action: "redeliver", done: `Delivery ${data.id} will be sent again in a moment.` };
    } catch (err) {
      const { status, ...why } = refusal(err);
      return fail(status, { action: "redeliver", ...why });
    }
  },
};
