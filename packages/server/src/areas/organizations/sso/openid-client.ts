import type { JsonWebKey } from "node:crypto";
import { Agent, request } from "undici";
import { HubError } from "../../../errors.js";
import {
  guardedLookup,
  isTimeout,
  privateHostOf,
  refusalIn,
} from "../../integrations/webhooks/target-guard.js";

/** The largest document (discovery, key set, token response) read from a provider. */
const MAX_BODY_BYTES = 256 * 1024;
const ALLOW_HINT = "the hub's operator can allow such providers with HUB_SSO_ALLOW_PRIVATE=1";

/** What the hub uses of a provider's discovery document (OpenID Connect Discovery 1.0 §3). */
export interface ProviderMetadata {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  jwksUri: string;
  /** Send the client secret in the form body rather than as HTTP Basic (what the provider supports). */
  secretInBody: boolean;
}

/**
 * Why a provider URL is refused, or null: https (plain http only when the
 * operator allows private providers), no credentials or fragment, and not
 * the hub's own network unless allowed. Names are checked again after DNS
 * resolution at every request.
 */
export function providerUrlProblem(raw: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `"${raw}" is not an absolute URL`;
  }
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) {
    return allowPrivate
      ? "it must use https or http"
      : "it must use https (plain http needs HUB_SSO_ALLOW_PRIVATE=1 from the hub's operator)";
  }
  if (url.username || url.password) return "it may not carry credentials";
  if (url.hash) return "it may not carry a fragment";
  const host = privateHostOf(url);
  if (host && !allowPrivate) return `${host} is not a public address; ${ALLOW_HINT}`;
  return null;
}

const providerError = (message: string) => new HubError(502, "sso_provider_error", message);

function endpoint(document: Record<string, unknown>, name: string, allowPrivate: boolean): string {
  const value = document[name];
  if (typeof value !== "string") throw providerError(`The provider's discovery document has no ${name}.`);
  const problem = providerUrlProblem(value, allowPrivate);
  if (problem) throw providerError(`The provider's ${name} is refused: ${problem}.`);
  return value;
}

/**
 * The hub's side of OpenID Connect with organizations' providers: discovery,
 * their signing keys, and the authorization code exchange, over undici with
 * a deadline and a lookup that keeps providers off the hub's own network.
 * Failures are 502 `sso_provider_error` naming what the provider did wrong.
 */
export function createOpenIdClient({
  allowPrivate,
  timeoutMs,
  userAgent,
}: {
  allowPrivate: boolean;
  timeoutMs: number;
  userAgent: string;
}) {
  const agent = new Agent({
    connect: { lookup: guardedLookup(allowPrivate, ALLOW_HINT), timeout: timeoutMs },
    keepAliveTimeout: 4000,
  });

  /** One request to the provider; the parsed JSON object it answered with a 2xx status. */
  async function call(
    url: string,
    what: string,
    init: { method?: "GET" | "POST"; headers?: Record<string, string>; body?: string } = {},
  ): Promise<Record<string, unknown>> {
    const problem = providerUrlProblem(url, allowPrivate);
    if (problem) throw providerError(`The provider's ${what} at ${url} is refused: ${problem}.`);
    let status: number;
    let text: string;
    try {
      const response = await request(url, {
        method: init.method ?? "GET",
        headers: { accept: "application/json", "user-agent": userAgent, ...init.headers },
        body: init.body,
        dispatcher: agent,
        signal: AbortSignal.timeout(timeoutMs),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      status = response.statusCode;
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) throw providerError(`The provider's ${what} is larger than 256 KiB.`);
        chunks.push(chunk);
      }
      text = Buffer.concat(chunks).toString("utf8");
    } catch (err) {
      if (err instanceof HubError) throw err;
      const refusal = refusalIn(err);
      const reason = refusal
        ? refusal.message
        : isTimeout(err)
          ? `no answer within ${timeoutMs} ms`
          : // The error's code only (ECONNREFUSED, ENOTFOUND…): its message may name internal addresses.
            `the connection failed (${(err as NodeJS.ErrnoException).code ?? "no error code"})`;
      throw providerError(`The provider's ${what} at ${url} could not be reached: ${reason}.`);
    }
    let body: unknown = null;
    try {
      body = JSON.parse(text);
    } catch {
      // Reported below with the status.
    }
    const document =
      body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : null;
    if (status < 200 || status >= 300) {
      const code = typeof document?.error === "string" ? `: ${document.error.slice(0, 100)}` : "";
      throw providerError(`The provider's ${what} answered HTTP ${status}${code}.`);
    }
    if (!document) throw providerError(`The provider's ${what} did not answer with a JSON object.`);
    return document;
  }

  return {
    /** The provider's endpoints from `{issuer}/.well-known/openid-configuration`; its issuer must be the one configured. */
    async discover(issuer: string): Promise<ProviderMetadata> {
      const document = await call(
        `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`,
        "discovery document",
      );
      if (document.issuer !== issuer) {
        throw providerError(
          `The provider's discovery document names the issuer ${String(document.issuer)}, not ${issuer}; an admin should set the issuer exactly as the provider names it.`,
        );
      }
      const listed = (name: string) => (Array.isArray(document[name]) ? (document[name] as unknown[]) : null);
      const pkce = listed("code_challenge_methods_supported");
      if (pkce && !pkce.includes("S256"))
        throw providerError("The provider does not support PKCE with S256.");
      const algorithms = listed("id_token_signing_alg_values_supported");
      if (algorithms && !algorithms.includes("RS256")) {
        throw providerError(
          "The provider does not sign ID tokens with RS256, the algorithm the hub verifies.",
        );
      }
      const authMethods = listed("token_endpoint_auth_methods_supported");
      return {
        issuer,
        authorizationEndpoint: endpoint(document, "authorization_endpoint", allowPrivate),
        tokenEndpoint: endpoint(document, "token_endpoint", allowPrivate),
        jwksUri: endpoint(document, "jwks_uri", allowPrivate),
        secretInBody:
          authMethods !== null &&
          !authMethods.includes("client_secret_basic") &&
          authMethods.includes("client_secret_post"),
      };
    },

    /** The provider's public signing keys (its JWK Set, RFC 7517 §5). */
    async keys(provider: ProviderMetadata): Promise<JsonWebKey[]> {
      const document = await call(provider.jwksUri, "key set");
      if (!Array.isArray(document.keys)) throw providerError("The provider's key set has no keys.");
      return document.keys.filter((key): key is JsonWebKey => key !== null && typeof key === "object");
    },

    /**
     * Exchanges an authorization code with its PKCE verifier at the token
     * endpoint (RFC 6749 §4.1.3, RFC 7636 §4.5) and returns the ID token.
     */
    async exchangeCode(
      provider: ProviderMetadata,
      input: {
        clientId: string;
        clientSecret: string;
        code: string;
        redirectUri: string;
        codeVerifier: string;
      },
    ): Promise<string> {
      const form = new URLSearchParams({
        grant_type: "authorization_code",
        code: input.code,
        redirect_uri: input.redirectUri,
        code_verifier: input.codeVerifier,
      });
      const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
      if (provider.secretInBody) {
        form.set("client_id", input.clientId);
        form.set("client_secret", input.clientSecret);
      } else {
        // RFC 6749 §2.3.1: each part form-encoded before Basic encoding.
        const basic = `${encodeURIComponent(input.clientId)}:${encodeURIComponent(input.clientSecret)}`;
        headers.authorization = `Basic ${Buffer.from(basic).toString("base64")}`;
      }
      const document = await call(provider.tokenEndpoint, "token endpoint", {
        method: "POST",
        headers,
        body: form.toString(),
      });
      if (typeof document.id_token !== "string") {
        throw providerError(
          "The provider's token response holds no id_token; is the openid scope allowed for this client?",
        );
      }
      return document.id_token;
    },

    close: () => agent.close(),
  };
}

export type OpenIdClient = ReturnType<typeof createOpenIdClient>;
