import { HubError, badRequest } from "../errors.js";
import type { LiveView } from "./live-stats.js";
import {
  POLICIES,
  TASK_ENDPOINTS,
  type ModelMapping,
  type Policy,
  type ProviderConfig,
  type Task,
} from "./providers-file.js";

/** One provider able to serve the requested model on this endpoint. */
export interface Candidate {
  provider: ProviderConfig;
  mapping: ModelMapping;
}

/** The `model` field taken apart: `<owner>/<model>` and at most one suffix. */
export interface RequestedModel {
  id: string;
  policy: Policy | null;
  provider: string | null;
}

/** The owner's saved routing preferences. */
export interface RoutingPreferences {
  providerOrder: string[];
  disabledProviders: string[];
  defaultPolicy: Policy | null;
}

/** Why the candidates are in this order: shown to the caller in a response header. */
export interface RouteDecision {
  policy: Policy | "pinned";
  metric: string;
  values: Array<{ provider: string; value: number | null }>;
  affinity: string | null;
}

export const MAX_MODEL_ID = 256;
/** The policy when neither the model suffix nor the owner's preferences name one. */
export const DEFAULT_POLICY: Policy = "fastest";
const MODEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*(?::([a-z0-9][a-z0-9-]*))?$/;

/** Validates `model` before anything is routed (400 invalid_model). */
export function parseModel(model: unknown): RequestedModel {
  if (typeof model !== "string" || model.length === 0) {
    throw badRequest("invalid_model", "Set `model` to a model id such as owner/model.", "model");
  }
  if (model.length > MAX_MODEL_ID) {
    throw badRequest("invalid_model", `The model id is longer than ${MAX_MODEL_ID} characters.`, "model");
  }
  const match = MODEL_PATTERN.exec(model);
  if (!match) {
    throw badRequest(
      "invalid_model",
      "The model id must be <owner>/<model> with at most one suffix (:fastest, :cheapest, :preferred or :<provider>).",
      "model",
    );
  }
  const suffix = match[1] ?? null;
  const id = suffix === null ? model : model.slice(0, -(suffix.length + 1));
  const policy = POLICIES.find((p) => p === suffix) ?? null;
  return { id, policy, provider: suffix !== null && policy === null ? suffix : null };
}

/** The configured providers and their model mappings, indexed for routing. */
export function createCatalog(providers: readonly ProviderConfig[]) {
  const byModel = new Map<string, Candidate[]>();
  for (const provider of providers) {
    for (const mapping of provider.models) {
      const list = byModel.get(mapping.id) ?? [];
      list.push({ provider, mapping });
      byModel.set(mapping.id, list);
    }
  }
  const bySlug = new Map(providers.map((p) => [p.slug, p]));

  return {
    providers,
    provider: (slug: string) => bySlug.get(slug) ?? null,
    /** Every mapping of a model, across tasks. */
    mappings: (id: string): readonly Candidate[] => byModel.get(id) ?? [],
    models: () => [...byModel.keys()].sort(),
    /** The mappings that serve `id` on this task; 404 model_not_found when there are none. */
    candidates(requested: RequestedModel, task: Task): Candidate[] {
      const all = byModel.get(requested.id) ?? [];
      const forTask = all.filter((c) => c.mapping.task === task);
      if (forTask.length === 0) {
        const other = all[0]?.mapping.task;
        throw new HubError(
          404,
          "model_not_found",
          other
            ? `${requested.id} is a ${other} model; call ${TASK_ENDPOINTS[other]}.`
            : `No provider serves ${requested.id}; list the models at GET /v1/models.`,
          { field: "model" },
        );
      }
      if (requested.provider === null) return forTask;
      const pinned = forTask.filter((c) => c.provider.slug === requested.provider);
      if (pinned.length === 0) {
        throw new HubError(
          404,
          "model_not_found",
          bySlug.has(requested.provider)
            ? `Provider ${requested.provider} does not serve ${requested.id} for this task; drop the suffix or pick another provider.`
            : `There is no provider ${requested.provider}; list the providers at GET /v1/models.`,
          { field: "model" },
        );
      }
      return pinned;
    },
  };
}

export type Catalog = ReturnType<typeof createCatalog>;

function fastestOrder(candidates: Candidate[], stats: LiveView, task: Task) {
  // Throughput ranks chat and responses; embeddings have no output tokens, so time to answer ranks them.
  const byThroughput = task !== "embeddings";
  const value = (c: Candidate) => {
    const s = stats.stats(c.provider.slug, c.mapping.id);
    return byThroughput ? s.tokensPerSecond : s.ttftMs;
  };
  // Unmeasured providers go first so each gets measured; then the best figure wins.
  const rankOf = (v: number | null) => (v === null ? -Infinity : byThroughput ? -v : v);
  const ordered = [...candidates].sort((a, b) => rankOf(value(a)) - rankOf(value(b)));
  return {
    ordered,
    metric: byThroughput ? "tokens_per_second" : "ttft_ms",
    values: ordered.map((c) => ({ provider: c.provider.slug, value: value(c) })),
  };
}

/**
 * Orders the candidates by the policy (suffix, else the owner's default, else
 * :fastest), without disabled providers; providers cooling down move to the
 * back; a session's provider moves to the front while it is healthy.
 */
export function rankCandidates(input: {
  candidates: Candidate[];
  requested: RequestedModel;
  task: Task;
  preferences: RoutingPreferences;
  stats: LiveView;
  affinityProvider: string | null;
}): { ordered: Candidate[]; decision: RouteDecision } {
  const { requested, preferences, stats } = input;
  const disabled = new Set(preferences.disabledProviders);
  const enabled = input.candidates.filter((c) => !disabled.has(c.provider.slug));
  if (enabled.length === 0) {
    throw new HubError(
      404,
      "model_not_found",
      requested.provider
        ? `Provider ${requested.provider} is disabled in the inference preferences; enable it or drop the suffix.`
        : `Every provider of ${requested.id} is disabled in the inference preferences; enable one.`,
      { field: "model" },
    );
  }
  if (requested.provider !== null) {
    return {
      ordered: enabled,
      decision: { policy: "pinned", metric: "provider", values: [], affinity: null },
    };
  }
  const policy = requested.policy ?? preferences.defaultPolicy ?? DEFAULT_POLICY;
  let ordered: Candidate[];
  let metric: string;
  let values: RouteDecision["values"];
  if (policy === "cheapest") {
    const price = (c: Candidate) => c.mapping.pricing.output * 1e6 + c.mapping.pricing.input;
    ordered = [...enabled].sort((a, b) => price(a) - price(b));
    metric = "output_usd_per_million";
    values = ordered.map((c) => ({ provider: c.provider.slug, value: c.mapping.pricing.output }));
  } else if (policy === "preferred") {
    const position = (c: Candidate) => {
      const index = preferences.providerOrder.indexOf(c.provider.slug);
      return index === -1 ? Number.MAX_SAFE_INTEGER : index;
    };
    ordered = [...enabled].sort((a, b) => position(a) - position(b));
    metric = "preference_order";
    values = ordered.map((c) => ({
      provider: c.provider.slug,
      value: position(c) === Number.MAX_SAFE_INTEGER ? null : position(c) + 1,
    }));
  } else {
    ({ ordered, metric, values } = fastestOrder(enabled, stats, input.task));
  }
  const healthy = ordered.filter((c) => !stats.isCooling(c.provider.slug));
  ordered = [...healthy, ...ordered.filter((c) => stats.isCooling(c.provider.slug))];
  let affinity: string | null = null;
  const sticky = healthy.find((c) => c.provider.slug === input.affinityProvider);
  if (sticky) {
    affinity = sticky.provider.slug;
    ordered = [sticky, ...ordered.filter((c) => c !== sticky)];
  }
  return { ordered, decision: { policy, metric, values, affinity } };
}
