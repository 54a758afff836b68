import { fail } from "@sveltejs/kit";
import type {
  CatalogModelList,
  InferenceOverview,
  InferencePreferences,
  ProviderKey,
  ProviderKeyList,
  UpdateInferencePreferences,
} from "@hub/api";
import { call } from "$lib/server/api";
import { refused } from "$lib/server/refused";
import type { Actions, PageServerLoad } from "./$types";

const POLICIES = ["fastest", "cheapest", "preferred"] as const;
const METRICS = ["requests", "spend", "tokens"] as const;
type Metric = (typeof METRICS)[number];

/** Every day of the overview's month, `YYYY-MM-DD`, so the chart has a slot for days without usage too. */
function daysOf(period: InferenceOverview["period"]): string[] {
  const days: string[] = [];
  for (let t = Date.parse(period.start); t < Date.parse(period.end); t += 86_400_000) {
    days.push(new Date(t).toISOString().slice(0, 10));
  }
  return days;
}

/**
 * The Router's control plane for the viewer: preferences (`GET /api/me/inference/preferences`), saved
 * provider keys (masked), the providers of the catalog, and one month's usage overview for the chart.
 */
export const load: PageServerLoad = async ({ fetch, url }) => {
  const month = url.searchParams.get("month");
  const requested = url.searchParams.get("metric");
  const metric: Metric = METRICS.find((m) => m === requested) ?? "requests";
  const validMonth = month && /^\d{4}-(0[1-9]|1[0-2])$/.test(month) ? month : null;
  const [preferences, keys, catalog, overview] = await Promise.all([
    call<InferencePreferences>(fetch, "/api/me/inference/preferences"),
    call<ProviderKeyList>(fetch, "/api/me/inference/provider-keys"),
    call<CatalogModelList>(fetch, "/api/inference/models"),
    call<InferenceOverview>(fetch, `/api/me/inference/overview${validMonth ? `?month=${validMonth}` : ""}`),
  ]);
  const providers = [
    ...new Set(catalog.data.data.flatMap((model) => model.providers.map((p) => p.provider))),
  ];
  const byDay = new Map(overview.data.by_day.map((d) => [d.day.slice(0, 10), d]));
  const figure = (day: string) => {
    const d = byDay.get(day);
    if (!d) return 0;
    return metric === "spend"
      ? d.cost_usd
      : metric === "tokens"
        ? d.input_tokens + d.output_tokens
        : d.requests;
  };
  return {
    preferences: preferences.data,
    keys: keys.data.keys.map(({ provider, key_hint, updated_at }) => ({ provider, key_hint, updated_at })),
    providers,
    policies: [...POLICIES],
    overview: overview.data,
    metric,
    metrics: [...METRICS],
    chart: daysOf(overview.data.period).map((day) => ({ day, value: figure(day) })),
  };
};

/** The preferences as they are, so a form that changes one part keeps the rest (PUT replaces them all). */
async function current(fetch: typeof globalThis.fetch): Promise<UpdateInferencePreferences> {
  return (await call<InferencePreferences>(fetch, "/api/me/inference/preferences")).data;
}

async function save(fetch: typeof globalThis.fetch, preferences: UpdateInferencePreferences) {
  await call<InferencePreferences>(fetch, "/api/me/inference/preferences", {
    method: "PUT",
    body: JSON.stringify(preferences),
  });
}

export const actions: Actions = {
  /**
   * Saves the provider order (the providers given a position, by position), the disabled providers and the
   * default policy (`PUT /api/me/inference/preferences`), keeping the monthly limit.
   */
  preferences: async ({ request, fetch }) => {
    const form = await request.formData();
    const positions: { provider: string; position: number }[] = [];
    for (const [name, value] of form.entries()) {
      if (!name.startsWith("position:") || String(value).trim() === "") continue;
      const position = Number(value);
      if (!Number.isInteger(position) || position < 1) {
        return fail(400, { message: "Positions are whole numbers from 1.", field: "provider_order" });
      }
      positions.push({ provider: name.slice("position:".length), position });
    }
    const order = positions.sort((a, b) => a.position - b.position).map((p) => p.provider);
    const disabled = form.getAll("disabled").map(String);
    const policy = String(form.get("default_policy") ?? "");
    try {
      const kept = await current(fetch);
      await save(fetch, {
        ...kept,
        provider_order: order,
        disabled_providers: disabled,
        default_policy: POLICIES.find((p) => p === policy) ?? null,
      });
      return { saved: "preferences" as const };
    } catch (err) {
      return refused(err);
    }
  },

  /** Sets or clears the monthly hard limit on routed spend, keeping the other preferences. */
  limit: async ({ request, fetch }) => {
    const form = await request.formData();
    const text = String(form.get("monthly_hard_limit_usd") ?? "").trim();
    const limit = text === "" ? null : Number(text);
    if (limit !== null && (!Number.isFinite(limit) || limit < 0)) {
      return fail(400, { message: "Give the limit in US dollars, 0 or more, or leave it empty for none." });
    }
    try {
      await save(fetch, { ...(await current(fetch)), monthly_hard_limit_usd: limit });
      return { saved: "limit" as const };
    } catch (err) {
      return refused(err);
    }
  },

  /** Saves or replaces a provider key (`PUT /api/me/inference/provider-keys/{provider}`); never shown again. */
  saveKey: async ({ request, fetch }) => {
    const form = await request.formData();
    const provider = String(form.get("provider") ?? "");
    const key = String(form.get("key") ?? "").trim();
    if (!key)
      return fail(400, { message: "Paste the provider's API key.", field: "key", values: { provider } });
    try {
      const { data } = await call<ProviderKey>(
        fetch,
        `/api/me/inference/provider-keys/${encodeURIComponent(provider)}`,
        { method: "PUT", body: JSON.stringify({ key }) },
      );
      return { savedKey: { provider: data.provider, hint: data.key_hint } };
    } catch (err) {
      // What was typed comes back without the key: a secret is never rendered into the page.
      return refused(err, { provider });
    }
  },

  /** Forgets a provider key (`DELETE /api/me/inference/provider-keys/{provider}`). */
  deleteKey: async ({ request, fetch }) => {
    const form = await request.formData();
    const provider = String(form.get("provider") ?? "");
    try {
      await call(fetch, `/api/me/inference/provider-keys/${encodeURIComponent(provider)}`, {
        method: "DELETE",
      });
      return { deletedKey: provider };
    } catch (err) {
      return refused(err);
    }
  },
};
