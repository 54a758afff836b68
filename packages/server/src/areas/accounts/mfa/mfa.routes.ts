import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { ApiErrorRef, ConfirmTotp, MfaRecoveryCodes, MfaStatus, TotpEnrollment } from "@hub/api";
import { principalOf } from "../../../http/access.js";
import type { MfaService } from "./mfa.service.js";

const tags = ["Account"];

/**
 * Two-factor authentication of the caller's account: its status (a settings
 * read), and enrolling, confirming, regenerating recovery codes and turning it
 * off, which need a session or a write role token, recently reauthenticated.
 */
export function mfaRoutes({ mfa }: { mfa: MfaService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/api/me/mfa",
      {
        schema: {
          operationId: "account_mfa_get",
          tags,
          summary:
            "Whether two-factor authentication is on, since when, and how many recovery codes are left.",
          response: { 200: MfaStatus },
        },
        config: { access: { action: "settings:read" } },
      },
      async (request) => mfa.status(principalOf(request).userId),
    );

    app.post(
      "/api/me/mfa/totp",
      {
        schema: {
          operationId: "account_mfa_totp_enroll",
          tags,
          summary:
            "Start enrolling an authenticator app: a new TOTP secret and its otpauth:// URI, shown this once. Two-factor authentication turns on when a code confirms it.",
          response: { 200: TotpEnrollment, 409: ApiErrorRef },
        },
        config: { access: { action: "account:manage-mfa" } },
      },
      async (request) => mfa.startTotp(principalOf(request)),
    );

    app.post(
      "/api/me/mfa/totp/confirm",
      {
        schema: {
          operationId: "account_mfa_totp_confirm",
          tags,
          summary:
            "Confirm the enrollment with a code the app shows: turns two-factor authentication on and returns 10 one-time recovery codes, shown this once.",
          body: ConfirmTotp,
          response: { 200: MfaRecoveryCodes, 409: ApiErrorRef },
        },
        config: { access: { action: "account:manage-mfa" } },
      },
      async (request) => mfa.confirmTotp(principalOf(request).userId, request.body.otp),
    );

    app.post(
      "/api/me/mfa/recovery-codes",
      {
        schema: {
          operationId: "account_mfa_recovery_codes_regenerate",
          tags,
          summary:
            "Replace every recovery code with 10 new ones, shown this once; the old ones stop working.",
          response: { 200: MfaRecoveryCodes, 409: ApiErrorRef },
        },
        config: { access: { action: "account:manage-mfa" } },
      },
      async (request) => mfa.regenerateRecoveryCodes(principalOf(request).userId),
    );

    app.delete(
      "/api/me/mfa",
      {
        schema: {
          operationId: "account_mfa_disable",
          tags,
          summary:
            "Turn two-factor authentication off (or drop an unconfirmed enrollment); the secret and recovery codes are deleted.",
          response: { 204: { type: "null", description: "Turned off." }, 409: ApiErrorRef },
        },
        config: { access: { action: "account:manage-mfa" } },
      },
      async (request, reply) => {
        await mfa.disable(principalOf(request).userId);
        return reply.status(204).send();
      },
    );
  };
}
