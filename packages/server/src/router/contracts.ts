import type { FastifyBaseLogger } from "fastify";
import type { Authorize } from "../auth/authorizer.js";
import type { Principal } from "../auth/credential.js";
import type { RouterConfig } from "../config.js";
import type { OrganizationRow } from "../db/schema.js";
import type { Catalog, RoutingPreferences } from "./candidates.js";
import type { LiveStats } from "./live-stats.js";
import type { ProviderAdapter } from "./providers/provider-adapter.js";
import type { SessionAffinity } from "./session-affinity.js";
import type { UsageLedger, UsageWriter } from "./usage-writer.js";

/** Who pays for a routed call: `auto` picks routed credit or the owner's own provider key. */
export const BILLING_MODES = ["auto", "routed", "byok"] as const;
export type BillingMode = (typeof BILLING_MODES)[number];

/** What a bill owner's settings and ledger say about routing its next call. */
export interface BillingContext {
  preferences: RoutingPreferences;
  balanceNanos: number;
  periodSpendNanos: number;
  monthlyLimitNanos: number | null;
  restricted: boolean;
  /** Sealed provider keys by provider slug. */
  sealedKeys: Map<string, string>;
}

/**
 * What the Router needs of the hub's control plane (inference settings,
 * credit, provider keys, the usage ledger); the inference area implements it.
 */
export interface RouterControlPlane extends UsageLedger {
  billingContext(ownerId: string): Promise<BillingContext>;
  /** A sealed provider key, opened for one upstream call. */
  openKey(sealed: string): string;
  /** An organization a request bills, by the handle in X-Service-Bill-To or a token's boundary. */
  organization(key: { handle: string } | { id: string }): Promise<OrganizationRow | undefined>;
}

/** Resolves a presented access token to its account; null when unknown or expired. */
export interface RouterTokens {
  resolve(secret: string): Promise<Principal | null>;
}

/** Everything the Router is built from. */
export interface RouterDeps {
  config: RouterConfig;
  logger: FastifyBaseLogger;
  tokens: RouterTokens;
  authorize: Authorize;
  inference: RouterControlPlane;
  catalog: Catalog;
  stats: LiveStats;
  affinity: SessionAffinity;
  usage: UsageWriter;
  adapters: ReadonlyMap<string, ProviderAdapter>;
  startedAt: number;
}
