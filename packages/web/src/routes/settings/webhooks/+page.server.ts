import { fail } from "@sveltejs/kit";
import { WEBHOOK_DOMAINS, type CreatedWebhook, type WebhookList } from "@hub/api";
import { call } from "$lib/server/api";
import { refused } from "$lib/server/refused";
import { parseWatched } from "$lib/webhooks";
import type { Actions, PageServerLoad } from "./$types";

/** The viewer's webhook routes (`GET /api/me/webhooks`); secrets never leave the API after creation. */
export const load: PageServerLoad = async ({ fetch }) => {
  const { data } = await call<WebhookList>(fetch, "/api/me/webhooks");
  return { webhooks: data.webhooks, domains: [...WEBHOOK_DOMAINS] };
};

export const actions: Actions = {
  /** Creates a route (`POST /api/me/webhooks`); its signing secret is in this one answer, shown once. */
  create: async ({ request, fetch }) => {
    const form = await request.formData();
    const url = String(form.get("url") ?? "").trim();
    const watchedText = String(form.get("watched") ?? "");
    const domains = form.getAll("domains").map(String);
    const description = String(form.get("description") ?? "").trim();
    const disabled = form.get("disabled") === "on";
    const values = { url, watched: watchedText, domains, description, disabled };
    const watched = parseWatched(watchedText);
    if ("bad" in watched) {
      return fail(400, {
        message: `Cannot read “${watched.bad}”: write one “type name” a line, e.g. “model alice/bert”.`,
        field: "watched",
        values,
      });
    }
    try {
      const { data } = await call<CreatedWebhook>(fetch, "/api/me/webhooks", {
        method: "POST",
        body: JSON.stringify({
          url,
          watched: watched.items,
          domains,
          ...(description ? { description } : {}),
          ...(disabled ? { disabled } : {}),
        }),
      });
      return { created: { id: data.id, url: data.url, secret: data.secret } };
    } catch (err) {
      return refused(err, values);
    }
  },
};
