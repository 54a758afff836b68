import { fail } from "@sveltejs/kit";
import type { CreatedWebhook, RotatedWebhookSecret, Webhook, WebhookList } from "@hub/api";
import { call } from "$lib/server/api";
import { orgApi, refusal, refusePage } from "$lib/server/org";
import { DOMAIN_CHOICES, domainsOf, watchedItems, webhookValues } from "$lib/server/webhook-form";
import { watchedLine } from "$lib/webhooks";
import type { Actions, PageServerLoad } from "./$types";

/** The organization's webhook routes (`GET …/webhooks`); their secrets are never part of the answer. */
export const load: PageServerLoad = async ({ params, fetch }) => {
  try {
    const { data } = await call<WebhookList>(fetch, `${orgApi(params.org)}/webhooks`);
    return {
      webhooks: data.webhooks.map((hook) => ({ ...hook, watchedLines: hook.watched.map(watchedLine) })),
      domainChoices: DOMAIN_CHOICES,
    };
  } catch (err) {
    refusePage(err);
  }
};

const hookPath = (org: string, id: string) => `${orgApi(org)}/webhooks/${encodeURIComponent(id)}`;

export const actions: Actions = {
  /** `POST …/webhooks`: the answer holds the signing secret, shown this once. */
  create: async ({ request, params, fetch }) => {
    const values = webhookValues(await request.formData());
    const keep = { values };
    if (!values.url)
      return fail(400, { action: "create", field: "url", message: "URL: where to send events.", ...keep });
    const watched = watchedItems(values.watched);
    if (typeof watched === "string")
      return fail(400, { action: "create", field: "watched", message: watched, ...keep });
    try {
      const { data } = await call<CreatedWebhook>(fetch, `${orgApi(params.org)}/webhooks`, {
        method: "POST",
        body: JSON.stringify({
          url: values.url,
          watched,
          domains: domainsOf(values),
          ...(values.description ? { description: values.description } : {}),
        }),
      });
      return { action: "create", secret: { id: data.id, url: data.url, value: data.secret } };
    } catch (err) {
      const { status, ...why } = refusal(err);
      return fail(status, { action: "create", ...why, ...keep });
    }
  },

  /** `POST …/webhooks/{id}/enable` or `/disable`. */
  toggle: async ({ request, params, fetch }) => {
    const form = await request.formData();
    const id = String(form.get("id") ?? "");
    const verb = form.get("enable") === "true" ? "enable" : "disable";
    try {
      const { data } = await call<Webhook>(fetch, `${hookPath(params.org, id)}/${verb}`, { method: "POST" });
      return { action: "toggle", done: `${data.url} is ${data.disabled ? "switched off" : "switched on"}.` };
    } catch (err) {
      const { status, ...why } = refusal(err);
      return fail(status, { action: "toggle", ...why });
    }
  },

  /** `POST …/webhooks/{id}/secret`: the new secret, shown this once; the old one stops signing. */
  rotate: async ({ request, params, fetch }) => {
    const form = await request.formData();
    const id = String(form.get("id") ?? "");
    const url = String(form.get("url") ?? "");
    try {
      const { data } = await call<RotatedWebhookSecret>(fetch, `${hookPath(params.org, id)}/secret`, {
        method: "POST",
      });
      return { action: "rotate", secret: { id, url, value: data.secret } };
    } catch (err) {
      const { status, ...why } = refusal(err);
      return fail(status, { action: "rotate", ...why });
    }
  },

  /** `DELETE …/webhooks/{id}`, with its pending deliveries and receipts. */
  remove: async ({ request, params, fetch }) => {
    const form = await request.formData();
    const id = String(form.get("id") ?? "");
    try {
      await call(fetch, hookPath(params.org, id), { method: "DELETE" });
      return { action: "remove", done: `Deleted the webhook to ${String(form.get("url") ?? "")}.` };
    } catch (err) {
      const { status, ...why } = refusal(err);
      return fail(status, { action: "remove", ...why });
    }
  },
};
