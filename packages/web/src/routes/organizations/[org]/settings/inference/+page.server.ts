import { fail } from "@sveltejs/kit";
import type {
  CatalogModelList,
  InferenceOverview,
  InferencePreferences,
  ProviderKey,
  ProviderKeyList,
} from "@hub/api";
import { call } from "$lib/server/api";
import { orgApi, refusal, refusePage } from "$lib/server/org";
import type { Actions, PageServerLoad } from "./$types";

const POLICIES = ["fastest", "cheapest", "preferred"] as const;

/** Every day of the overview's month with its routed spend, so the chart has a slot for quiet days too. */
function spendByDay(overview: InferenceOverview): { day: string; value: number }[] {
  const days: { day: string; value: number }[] = [];
  const { start, end } = overview.period;
  for (let t = Date.parse(start); t < Date.parse(end); t += 86_400_000) {
    const day = new Date(t).toISOString().slice(0, 10);
    days.push({ day, value: overview.by_day.find((row) => row.day.slice(0, 10) === day)?.cost_usd ?? 0 });
  }
  return days;
}

/**
 * The organization's Router settings (`…/inference/preferences`, `…/provider-keys`, `…/overview`) and the
 * providers the Router serves (`GET /api/inference/models`), to choose among.
 */
export const load: PageServerLoad = async ({ params, fetch, url }) => {
  const base = `${orgApi(params.org)}/inference`;
  const month = /^\d{4}-(0[1-9]|1[0-2])$/.test(url.searchParams.get("month") ?? "")
    ? (url.searchParams.get("month") ?? "")
    : "";
  try {
    const [preferences, keys, overview, catalog] = await Promise.all([
      call<InferencePreferences>(fetch, `${base}/preferences`),
      call<ProviderKeyList>(fetch, `${base}/provider-keys`),
      call<InferenceOverview>(fetch, `${base}/overview${month ? `?month=${month}` : ""}`),
      call<CatalogModelList>(fetch, "/api/inference/models"),
    ]);
    const served = catalog.data.data.flatMap((model) => model.providers.map((p) => p.provider));
    const providers = [
      ...new Set([...served, ...preferences.data.provider_order, ...preferences.data.disabled_providers]),
    ].sort();
    return {
      preferences: preferences.data,
      keys: keys.data.keys,
      overview: overview.data,
      chart: spendByDay(overview.data),
      providers,
      policies: [...POLICIES],
    };
  } catch (err) {
    refusePage(err);
  }
};

export const actions: Actions = {
  /** `PUT …/inference/preferences`: the whole set, as the form holds it. */
  preferences: async ({ request, params, fetch }) => {
    const form = await request.formData();
    const order = String(form.get("provider_order") ?? "")
      .split(/[\s,]+/)
      .filter(Boolean);
    const disabled = form.getAll("disabled_providers").map(String);
    const policy = POLICIES.find((p) => p === form.get("default_policy")) ?? null;
    const limitText = String(form.get("monthly_hard_limit_usd") ?? "").trim();
    const limit = limitText === "" ? null : Number(limitText);
    if (limit !== null && (!Number.isFinite(limit) || limit < 0))
      return fail(400, {
        action: "preferences",
        field: "monthly_hard_limit_usd",
        message: "Monthly limit: a number of US dollars, 0 or more, or empty for none.",
      });
    try {
      await call<InferencePreferences>(fetch, `${orgApi(params.org)}/inference/preferences`, {
        method: "PUT",
        body: JSON.stringify({
          provider_order: [...new Set(order)],
          disabled_providers: disabled,
          default_policy: policy,
          monthly_hard_limit_usd: limit,
        }),
      });
    } catch (err) {
      const { status, ...why } = refusal(err);
      return fail(status, { action: "preferences", ...why });
    }
    return { action: "preferences", done: "The inference preferences are saved." };
  },

  /** `PUT …/provider-keys/{provider}`: the key is sealed by the hub and only its last four characters come back. */
  saveKey: async ({ request, params, fetch }) => {
    const form = await request.formData();
    const provider = String(form.get("provider") ?? "");
    const key = String(form.get("key") ?? "").trim();
    if (!provider) return fail(400, { action: "saveKey", field: "provider", message: "Choose a provider." });
    try {
      const { data } = await call<ProviderKey>(
        fetch,
        `${orgApi(params.org)}/inference/provider-keys/${encodeURIComponent(provider)}`,
        { method: "PUT", body: JSON.stringify({ key }) },
      );
      return {
        action: "saveKey",
        done: `Saved the ${data.provider} key (${data.key_hint}); it is never shown again.`,
      };
    } catch (err) {
      const { status, ...why } = refusal(err);
      return fail(status, { action: "saveKey", ...why });
    }
  },

  /** `DELETE …/provider-keys/{provider}`. */
  deleteKey: async ({ request, params, fetch }) => {
    const provider = String((await request.formData()).get("provider") ?? "");
    try {
      await call(fetch, `${orgApi(params.org)}/inference/provider-keys/${encodeURIComponent(provider)}`, {
        method: "DELETE",
      });
    } catch (err) {
      const { status, ...why } = refusal(err);
      return fail(status, { action: "deleteKey", ...why });
    }
    return { action: "deleteKey", done: `Forgot the ${provider} key.` };
  },
};
