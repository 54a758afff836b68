import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  LoginRequest,
  LoginResponse,
  ReauthenticateRequest,
  ReauthenticateResponse,
  SessionInferenceToken,
} from "@hub/api";
import { SESSION_COOKIE } from "../../../auth/authenticate.js";
import { csrfCookie, type Csrf } from "../../../auth/csrf.js";
import { principalOf } from "../../../http/access.js";
import type { AuthService } from "./auth.service.js";
import type { SessionInferenceService } from "./session-inference.service.js";

/** The Set-Cookie value of a browser session; the device sign-in page sets the same one. */
export function sessionCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return [
    `${SESSION_COOKIE}=${value}`,
    "Path=/",
    "HttpOnly",
    "SameSite=Lax",
    `Max-Age=${maxAgeSeconds}`,
    ...(secure ? ["Secure"] : []),
  ].join("; ");
}

/** The cookies a new browser session sets: the HttpOnly session, and its request-forgery token for the pages. */
export function sessionCookies(
  session: { id: string; secret: string },
  csrf: Csrf,
  maxAgeSeconds: number,
  secure: boolean,
): string[] {
  return [
    sessionCookie(session.secret, maxAgeSeconds, secure),
    csrfCookie(csrf.token(session.id), maxAgeSeconds, secure),
  ];
}

/** The cookies that end a browser session. */
export function clearedSessionCookies(secure: boolean): string[] {
  return [sessionCookie("", 0, secure), csrfCookie("", 0, secure)];
}

/**
 * Password sign-in for the web, sign-out, reauthentication of any credential, and the browser
 * session's short-lived Router credential.
 */
export function authRoutes({
  auth,
  sessionInference,
  csrf,
  secureCookies,
  sessionTtlSeconds,
}: {
  auth: AuthService;
  sessionInference: SessionInferenceService;
  csrf: Csrf;
  secureCookies: boolean;
  sessionTtlSeconds: number;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      "/api/auth/login",
      {
        schema: {
          operationId: "auth_login",
          tags: ["Account"],
          summary:
            "Sign in with a handle or email and a password (and `otp` when two-factor authentication is on); sets an HttpOnly session cookie.",
          body: LoginRequest,
          response: { 200: LoginResponse },
        },
        config: { access: "public" },
      },
      async (request, reply) => {
        const { username, password, otp } = request.body;
        const session = await auth.login(username, password, otp);
        reply.header("set-cookie", sessionCookies(session, csrf, sessionTtlSeconds, secureCookies));
        return { name: session.handle, expiresAt: session.expiresAt };
      },
    );

    app.post(
      "/api/auth/logout",
      {
        schema: {
          operationId: "auth_logout",
          tags: ["Account"],
          summary: "End the browser session and clear its cookie.",
          response: { 204: { type: "null", description: "Signed out." } },
        },
        config: { access: { action: "account:read" } },
      },
      async (request, reply) => {
        await auth.logout(principalOf(request));
        return reply.header("set-cookie", clearedSessionCookies(secureCookies)).status(204).send();
      },
    );

    app.post(
      "/api/auth/session-inference-token",
      {
        schema: {
          operationId: "auth_session_inference_token",
          tags: ["Account"],
          summary:
            "For a signed-in browser only: a Router credential holding only `inference:run` that lives a few minutes and ends with the session (the web's playground). Tokens call the Router themselves.",
          response: { 200: SessionInferenceToken },
        },
        config: { access: { action: "account:mint-session-inference-token" } },
      },
      async (request, reply) => {
        reply.header("cache-control", "no-store");
        return sessionInference.mint(principalOf(request));
      },
    );

    app.post(
      "/api/auth/reauthenticate",
      {
        schema: {
          operationId: "auth_reauthenticate",
          tags: ["Account"],
          summary:
            "Confirm your password (and `otp` when two-factor authentication is on) so this credential may make sensitive changes for a few minutes.",
          body: ReauthenticateRequest,
          response: { 200: ReauthenticateResponse },
        },
        config: { access: { action: "account:read" } },
      },
      async (request) => ({
        reauthenticatedUntil: await auth.reauthenticate(
          principalOf(request),
          request.body.password,
          request.body.otp,
        ),
      }),
    );
  };
}
