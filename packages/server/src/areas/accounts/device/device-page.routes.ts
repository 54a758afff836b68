import { createHmac, timingSafeEqual } from "node:crypto";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { LoginRequest } from "@hub/api";
import { Type } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { cookieValue, credentialKey } from "../../../auth/authenticate.js";
import type { Authorize } from "../../../auth/authorizer.js";
import type { Principal } from "../../../auth/credential.js";
import { randomBase62 } from "../../../auth/secrets.js";
import { HubError, forbidden } from "../../../errors.js";
import { principalOf } from "../../../http/access.js";
import { addFormBodyParser } from "../../../http/form-body.js";
import { sessionCookies } from "../auth/auth.routes.js";
import { createCsrf } from "../../../auth/csrf.js";
import type { AuthService } from "../auth/auth.service.js";
import { devicePage, pageHeaders } from "./device-page.js";
import type { DeviceService } from "./device.service.js";

/** Binds the sign-in form to the browser before there is a session (login CSRF). */
const CSRF_COOKIE = "hub_device_csrf";
const USER_CODE_ERRORS = new Set(["unknown_user_code", "expired_user_code", "user_code_used"]);
/** What the sign-in form says for errors whose API wording names request fields. */
const SIGN_IN_MESSAGES: Record<string, string> = {
  unauthenticated: "Sign in to continue.",
  mfa_required:
    "This account uses two-factor authentication: enter your password again with the code your authenticator app shows, or a recovery code.",
};

const UserCode = Type.String({ maxLength: 32 });
const Csrf = Type.String({ maxLength: 128 });

const SignInForm = Type.Object(
  {
    ...LoginRequest.properties,
    // The field is on the form for everyone; those without two-factor authentication leave it empty.
    otp: Type.Optional(Type.String({ maxLength: 64 })),
    csrf: Csrf,
    user_code: Type.Optional(UserCode),
  },
  { additionalProperties: false },
);
const DecisionForm = Type.Object(
  {
    csrf: Csrf,
    user_code: UserCode,
    decision: Type.Union([Type.Literal("approve"), Type.Literal("deny")]),
    // A checkbox left alone sends nothing, one checked sends a value, several send a list.
    scope: Type.Optional(
      Type.Union([
        Type.String({ maxLength: 64 }),
        Type.Array(Type.String({ maxLength: 64 }), { maxItems: 32 }),
      ]),
    ),
  },
  { additionalProperties: false },
);

export interface DevicePageRoutesDeps {
  device: DeviceService;
  auth: AuthService;
  authorize: Authorize;
  serverKey: Buffer;
  secureCookies: boolean;
  sessionTtlSeconds: number;
}

/**
 * `/device`: where a person signs in, enters the user code and approves or
 * denies a device sign-in (RFC 8628 §3.3). Plain server-rendered HTML with
 * no script; every form post carries a token bound to the session (or, before
 * sign-in, to a cookie of this browser), and approving goes through `decide()`.
 */
export function devicePageRoutes({
  device,
  auth,
  authorize,
  serverKey,
  secureCookies,
  sessionTtlSeconds,
}: DevicePageRoutesDeps): FastifyPluginAsyncTypebox {
  const headers = pageHeaders();

  const csrfToken = (binding: string) =>
    createHmac("sha256", serverKey).update(`device-page\n${binding}`).digest("base64url");

  function checkCsrf(binding: string | null, presented: string): void {
    const expected = Buffer.from(binding === null ? "" : csrfToken(binding));
    const given = Buffer.from(presented);
    if (binding === null || expected.length !== given.length || !timingSafeEqual(expected, given)) {
      throw forbidden(
        "invalid_csrf_token",
        "This form is out of date or came from another site; reload the page and try again.",
      );
    }
  }

  const send = (reply: FastifyReply, html: string) => reply.type("text/html; charset=utf-8").send(html);

  /** The code a request carries, in its form or its query, to keep it through sign-in. */
  function userCodeOf(request: FastifyRequest): string {
    const fields = (request.body ?? request.query) as { user_code?: unknown } | undefined;
    return typeof fields?.user_code === "string" ? fields.user_code : "";
  }

  function signIn(request: FastifyRequest, reply: FastifyReply, error?: string) {
    let nonce = cookieValue(request.headers.cookie, CSRF_COOKIE);
    if (!nonce) {
      nonce = randomBase62(32);
      reply.header(
        "set-cookie",
        [`${CSRF_COOKIE}=${nonce}`, "Path=/device", "HttpOnly", "SameSite=Strict", "Max-Age=3600"]
          .concat(secureCookies ? ["Secure"] : [])
          .join("; "),
      );
    }
    return send(
      reply,
      devicePage.signIn({ userCode: userCodeOf(request), csrf: csrfToken(`anonymous:${nonce}`), error }),
    );
  }

  /** Errors as pages: sign in again, retype the code, or a message. */
  function renderError(error: HubError, request: FastifyRequest, reply: FastifyReply) {
    if (error.status === 401) {
      return signIn(request, reply, SIGN_IN_MESSAGES[error.code] ?? error.message);
    }
    if (USER_CODE_ERRORS.has(error.code) && request.principal) {
      return send(
        reply,
        devicePage.enterCode({
          handle: request.principal.handle,
          userCode: userCodeOf(request),
          error: error.message,
        }),
      );
    }
    return send(reply, devicePage.message({ title: "Device sign-in", message: error.message }));
  }

  const own = (principal: Principal) => ({ type: "account" as const, userId: principal.userId });

  return async (app) => {
    addFormBodyParser(app);
    app.addHook("onRequest", async (_request, reply) => {
      reply.headers(headers);
    });

    app.get(
      "/device",
      {
        schema: { hide: true, querystring: Type.Object({ user_code: Type.Optional(UserCode) }) },
        config: { access: "optional", renderError },
      },
      async (request, reply) => {
        const principal = request.principal;
        if (!principal) return signIn(request, reply);
        await authorize(principal, "account:approve-device", own(principal));
        const typed = request.query.user_code?.trim();
        if (!typed) return send(reply, devicePage.enterCode({ handle: principal.handle, userCode: "" }));
        return send(
          reply,
          devicePage.approve({
            handle: principal.handle,
            request: await device.find(typed),
            csrf: csrfToken(credentialKey(principal)),
          }),
        );
      },
    );

    app.post(
      "/device/sign-in",
      {
        schema: { hide: true, body: SignInForm },
        config: { access: "public", formBody: true, renderError },
      },
      async (request, reply) => {
        const nonce = cookieValue(request.headers.cookie, CSRF_COOKIE);
        checkCsrf(nonce && `anonymous:${nonce}`, request.body.csrf);
        const { username, password, otp } = request.body;
        const session = await auth.login(username, password, otp?.trim() || undefined);
        reply.header(
          "set-cookie",
          sessionCookies(session, createCsrf(serverKey), sessionTtlSeconds, secureCookies),
        );
        const code = request.body.user_code?.trim();
        return reply.redirect(code ? `/device?user_code=${encodeURIComponent(code)}` : "/device", 303);
      },
    );

    app.post(
      "/device",
      {
        schema: { hide: true, body: DecisionForm },
        config: { access: { action: "account:approve-device" }, formBody: true, formCsrf: true, renderError },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const { csrf, user_code: userCode, decision, scope } = request.body;
        checkCsrf(credentialKey(principal), csrf);
        if (decision === "deny") {
          const denied = await device.deny(principal.userId, userCode);
          return send(reply, devicePage.denied({ clientId: denied.clientId }));
        }
        try {
          const approved = await device.approve(principal.userId, userCode, [scope ?? []].flat());
          return send(reply, devicePage.approved({ clientId: approved.clientId, handle: principal.handle }));
        } catch (err) {
          if (!(err instanceof HubError && err.code === "invalid_scope")) throw err;
          // Show the same choice again, with what to fix.
          return send(
            reply.status(400),
            devicePage.approve({
              handle: principal.handle,
              request: await device.find(userCode),
              csrf,
              error: err.message,
            }),
          );
        }
      },
    );
  };
}
