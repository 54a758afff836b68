import type { IncomingMessage } from "node:http";
import type { ROUTED_REFUSALS } from "@hub/api";
import type { SettingsOwner } from "../auth/authorize.js";
import type { Principal } from "../auth/credential.js";
import { HubError } from "../errors.js";
import { parseModel, rankCandidates, type Candidate, type RouteDecision } from "./candidates.js";
import type { BillingContext, BillingMode, RouterDeps } from "./contracts.js";
import type { ModelMapping, Task } from "./providers-file.js";
import { sessionIdOf } from "./session-affinity.js";

/** The account or organization a request is billed to. */
export type BillOwner = SettingsOwner;

/** One provider to try, with the key it is called with and how it is paid. */
export interface Attempt {
  candidate: Candidate;
  billing: "routed" | "byok";
  apiKey: string;
}

/** Everything decided before dispatch: who pays, which providers in which order, and why. */
export interface Route {
  owner: BillOwner;
  attempts: Attempt[];
  decision: RouteDecision;
  /** The conversation's affinity key, when the request names a session. */
  sessionKey: string | null;
}

const REFUSALS: Record<(typeof ROUTED_REFUSALS)[number], string> = {
  account_restricted:
    "Routed inference is restricted for this billing owner; ask the operator, or use byok billing with your own provider key.",
  monthly_limit_reached:
    "The monthly hard limit of this billing owner is reached; raise it in the inference preferences or wait for next month.",
  insufficient_credit:
    "The billing owner has no credit left for routed inference; add credit, bill another owner, or use byok billing.",
};

/** Why routed billing is refused for this owner right now, or null when it may spend; billing shows it too. */
export function routedRefusal(context: BillingContext): keyof typeof REFUSALS | null {
  if (context.restricted) return "account_restricted";
  if (context.monthlyLimitNanos !== null && context.periodSpendNanos >= context.monthlyLimitNanos) {
    return "monthly_limit_reached";
  }
  return context.balanceNanos <= 0 ? "insufficient_credit" : null;
}

const isFree = (c: Candidate) => c.mapping.pricing.input === 0 && c.mapping.pricing.output === 0;

/**
 * Decides the route of one request: validates the model, ranks its
 * candidates under the owner's preferences and the policy, and pairs each
 * with a key under the billing mode (byok: the owner's saved key; routed: the
 * hub's key, if the owner may spend; auto: byok where a key is saved).
 */
export async function chooseRoute(input: {
  deps: RouterDeps;
  req: IncomingMessage;
  body: Record<string, unknown>;
  task: Task;
  mode: BillingMode;
  principal: Principal;
  owner: BillOwner;
}): Promise<Route> {
  const { deps, task, mode, owner } = input;
  const requested = parseModel(input.body.model);
  const candidates = deps.catalog.candidates(requested, task);
  const context = await deps.inference.billingContext(owner.id);
  const sessionId = task === "embeddings" ? null : sessionIdOf(input.req.headers, input.body);
  const sessionKey = sessionId === null ? null : `${owner.id}\u0000${requested.id}\u0000${sessionId}`;
  const [stats, affinityProvider] = await Promise.all([
    deps.stats.view(candidates.map((c) => ({ provider: c.provider.slug, model: c.mapping.id }))),
    sessionKey === null ? null : deps.affinity.providerOf(sessionKey),
  ]);
  const { ordered, decision } = rankCandidates({
    candidates,
    requested,
    task,
    preferences: context.preferences,
    stats,
    affinityProvider,
  });

  const refusal = routedRefusal(context);
  const attempts: Attempt[] = [];
  for (const candidate of ordered) {
    const sealed = context.sealedKeys.get(candidate.provider.slug);
    if (sealed !== undefined && mode !== "routed") {
      attempts.push({ candidate, billing: "byok", apiKey: deps.inference.openKey(sealed) });
    } else if (mode !== "byok" && (refusal === null || isFree(candidate))) {
      attempts.push({ candidate, billing: "routed", apiKey: candidate.provider.apiKey });
    }
  }
  if (attempts.length === 0) {
    if (mode === "byok") {
      const slugs = ordered.map((c) => c.provider.slug).join(", ");
      throw new HubError(
        409,
        "provider_key_missing",
        `No provider key is saved for ${slugs}; save one at PUT /api/me/inference/provider-keys/{provider}, or use routed billing.`,
      );
    }
    if (refusal) throw new HubError(402, refusal, REFUSALS[refusal]);
    throw new HubError(409, "no_billing_route", "No provider can be paid for this request.");
  }
  return { owner, attempts, decision, sessionKey };
}

/** What a response cost under a mapping's price (USD per million tokens), in nano-USD. */
export function costNanos(pricing: ModelMapping["pricing"], input: number, output: number): number {
  return Math.round(input * pricing.input * 1000 + output * pricing.output * 1000);
}
