import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from "fastify";
import { ApiErrorRef } from "@hub/api";
import { anonymousMayAttempt, scopeFor, type Action, type Resource } from "../auth/authorize.js";
import type { Authorize } from "../auth/authorizer.js";
import { credentialKey, type Authenticate } from "../auth/authenticate.js";
import { CSRF_HEADER, type Csrf } from "../auth/csrf.js";
import type { Principal } from "../auth/credential.js";
import { rateLimitHeaders, type RateLimiter } from "../auth/rate-limit/rate-limiter.js";
import type { RateLimitConfig } from "../config.js";
import { HubError, repoNeedsSignIn, unauthenticated } from "../errors.js";

/**
 * What every Hub route declares: `public` (no credential looked at),
 * `optional` (a credential is used when sent; the route filters what it shows
 * through the authorization rules itself), or the action it performs and,
 * when it is not the caller's own account, on which resource. The declaration drives authentication, authorization and the
 * operation's security requirement in the OpenAPI document.
 */
export type Access =
  | "public"
  | "optional"
  | {
      action: Action;
      resource?: (request: FastifyRequest, principal: Principal | null) => Resource | Promise<Resource>;
      /** The resource is a repository the path names: an anonymous refusal says so as the clients read it. */
      repository?: boolean;
      /**
       * A narrower action some requests of the route perform instead (a commit
       * to a pull request needs `community:write`, not `repo:write`); the
       * route's handler then makes whatever further check that case needs.
       */
      orAction?: { action: Action; when: (request: FastifyRequest) => boolean };
    };

declare module "fastify" {
  interface FastifyContextConfig {
    access?: Access;
    /** Exempt from rate limiting (health probes). */
    unmetered?: boolean;
    /** Counted in the file-download bucket (`resolve`, `raw`) instead of the API's. */
    meter?: "downloads";
    /** The body may also come form-encoded (what the Python client sends for paths-info). */
    formBody?: boolean;
    /** The body is raw bytes (an uploaded file) that the route's own content parser reads and checks. */
    rawBody?: boolean;
    /** The route checks a request-forgery token of its own in the form it renders (the device page). */
    formCsrf?: boolean;
    /** The body may be left out (the Python client merges without one): it then reads as null. */
    optionalBody?: boolean;
  }
  interface FastifyRequest {
    principal: Principal | null;
    /** Set once the route's access decision has been made, so it is made once. */
    authorized: boolean;
  }
}

/** The caller of a route that needs one; routes call this to get a typed principal. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal)
    throw unauthenticated("unauthenticated", "Sign in: send Authorization: Bearer <token>.");
  return request.principal;
}

/** Adds to a route's schema what its access declaration implies: security and error responses. */
function documentAccess(route: RouteOptions, access: Access): void {
  const schema = (route.schema ??= {});
  const response = (schema.response ??= {}) as Record<string, unknown>;
  response[400] ??= ApiErrorRef;
  response[429] ??= ApiErrorRef;
  if (access === "public") {
    // A route that admits by a credential of its own (the Xet CAS's tokens) documents it itself.
    schema.security ??= [];
    return;
  }
  if (access === "optional") {
    schema.security = [{}, { bearer: [] }];
    response[401] ??= ApiErrorRef;
    return;
  }
  const scope = scopeFor(access.action);
  const narrower = access.orAction && scopeFor(access.orAction.action);
  schema.security = [{ bearer: scope ? [scope] : [] }, ...(narrower ? [{ bearer: [narrower] }] : [])];
  response[401] ??= ApiErrorRef;
  response[403] ??= ApiErrorRef;
}

/** No stored text may hold NUL: PostgreSQL refuses it and it truncates C strings. Walks without recursion. */
function holdsNul(body: unknown): boolean {
  const pending: unknown[] = [body];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === "string") {
      if (value.includes("\u0000")) return true;
    } else if (Array.isArray(value)) {
      pending.push(...(value as unknown[]));
    } else if (value && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) {
        if (key.includes("\u0000")) return true;
        pending.push(item);
      }
    }
  }
  return false;
}

function isJson(contentType: string | undefined): boolean {
  return /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(contentType ?? "");
}

export interface AccessDeps {
  authenticate: Authenticate;
  authorize: Authorize;
  rateLimiter: RateLimiter;
  rateLimit: RateLimitConfig;
  /** The bucket file downloads count in, apart from the API's. */
  downloadRateLimiter: RateLimiter;
  downloadRateLimit: RateLimitConfig;
  /** Request-forgery tokens of browser sessions. */
  csrf: Csrf;
  /** The hub's own origin, the only one a browser session's write may come from. */
  publicOrigin: string;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Installs the request pipeline every Hub route goes through: authenticate,
 * meter, require JSON bodies, authorize. A route without an access declaration
 * fails at start-up, so none can be forgotten.
 */
export function installAccess(
  app: FastifyInstance,
  {
    authenticate,
    authorize,
    rateLimiter,
    rateLimit,
    downloadRateLimiter,
    downloadRateLimit,
    csrf,
    publicOrigin,
  }: AccessDeps,
): void {
  app.decorateRequest("principal", null);
  app.decorateRequest("authorized", false);

  app.addHook("onRoute", (route) => {
    const access = route.config?.access;
    if (!access) throw new Error(`Route ${String(route.method)} ${route.url} declares no access.`);
    documentAccess(route, access);
  });

  app.addHook("onRequest", async (request, reply) => {
    const access = request.routeOptions.config.access;
    let failure: unknown = null;
    if (access && access !== "public") {
      try {
        request.principal = await authenticate(request.headers);
      } catch (err) {
        failure = err;
      }
    }
    if (!request.routeOptions.config.unmetered) await meter(request, reply);
    if (failure) throw failure;
    checkSameOrigin(request);
    // Authentication comes before reading the body: a caller without a credential learns it needs one,
    // not what the body should look like. Only reading and downloading public repositories can go on.
    if (!request.principal && access && access !== "public" && access !== "optional") {
      if (!anonymousMayAttempt(access.action)) {
        throw access.repository
          ? repoNeedsSignIn("Sign in to use this repository: send Authorization: Bearer <token>.")
          : unauthenticated("unauthenticated", "Sign in: send Authorization: Bearer <token>.");
      }
    }
  });

  /**
   * A browser session's write must prove it comes from the hub's own pages: the browser's Origin (and
   * Sec-Fetch-Site) name this hub when it sends them, and X-CSRF-Token holds the session's token, which only
   * the hub's pages can read. Tokens and SSH keys are not sent by browsers on their own, so they need neither.
   */
  function checkSameOrigin(request: FastifyRequest): void {
    const credential = request.principal?.credential;
    if (credential?.type !== "session" || SAFE_METHODS.has(request.method)) return;
    if (request.routeOptions.config.formCsrf) return;
    const origin = request.headers.origin;
    const site = request.headers["sec-fetch-site"];
    const crossSite =
      (origin !== undefined && origin !== publicOrigin) ||
      (site !== undefined && site !== "same-origin" && site !== "none");
    const header = request.headers[CSRF_HEADER];
    if (crossSite || !csrf.matches(credential.sessionId, Array.isArray(header) ? header[0] : header)) {
      throw new HubError(
        403,
        "invalid_csrf_token",
        "A signed-in browser's change must come from this hub's own pages with the X-CSRF-Token header (the hub_csrf cookie's value); reload the page and try again, or use an access token.",
      );
    }
  }

  /** Counts the request against its bucket: the credential's, or the address's when anonymous or rejected. */
  async function meter(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const bucket = request.principal ? credentialKey(request.principal) : `ip:${request.ip}`;
    const downloads = request.routeOptions.config.meter === "downloads";
    const state = downloads
      ? await downloadRateLimiter.hit(`downloads:${bucket}`)
      : await rateLimiter.hit(bucket);
    const headers = rateLimitHeaders(downloads ? downloadRateLimit : rateLimit, state);
    reply.headers(headers);
    if (!state.allowed) {
      throw new HubError(429, "rate_limited", `Too many requests; retry in ${state.resetSeconds} seconds.`, {
        headers,
      });
    }
  }

  /** The route's one access decision: its resource loaded, then `decide()` through the authorizer. */
  async function authorizeRequest(request: FastifyRequest): Promise<void> {
    const access = request.routeOptions.config.access;
    if (request.authorized || !access || access === "public" || access === "optional") return;
    const principal = request.principal;
    const resource = access.resource
      ? await access.resource(request, principal)
      : { type: "account" as const, userId: principalOf(request).userId };
    const action = access.orAction?.when(request) ? access.orAction.action : access.action;
    await authorize(principal, action, resource);
    request.authorized = true;
  }

  app.addHook("preHandler", authorizeRequest);

  app.addHook("preValidation", async (request) => {
    // An anonymous read is decided from the path before the body is validated, so a private repository
    // answers 401 whatever was sent; everything else is decided once the body is valid.
    if (!request.principal) await authorizeRequest(request);
    if (request.url.includes("%00")) {
      throw new HubError(400, "invalid_request", "The path or query holds a NUL character; remove it.");
    }
    if (!request.routeOptions.schema?.body || request.routeOptions.config.rawBody) return;
    if (request.routeOptions.config.optionalBody && request.body === undefined) {
      request.body = null;
      return;
    }
    const form =
      request.routeOptions.config.formBody &&
      /^application\/x-www-form-urlencoded/i.test(request.headers["content-type"] ?? "");
    if (!isJson(request.headers["content-type"]) && !form) {
      throw new HubError(
        415,
        "unsupported_media_type",
        "Send the body as JSON with Content-Type: application/json.",
      );
    }
    if (holdsNul(request.body)) {
      throw new HubError(
        400,
        "invalid_request",
        "A text field of the body holds a NUL character; remove it.",
      );
    }
  });
}
