import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  DeviceAuthorizationRequest,
  DeviceAuthorizationResponse,
  OAuthErrorRef,
  TokenRequest,
  TokenResponse,
} from "@hub/api";
import type { FastifyContextConfig } from "fastify";
import { renderOAuthError } from "../../../errors.js";
import { addFormBodyParser } from "../../../http/form-body.js";
import type { DeviceService } from "./device.service.js";

/** OAuth endpoints are public, take form or JSON bodies (RFC 6749 §3.2), and answer errors in OAuth's shape. */
const oauthEndpoint: FastifyContextConfig = {
  access: "public",
  formBody: true,
  renderError: (error, _request, reply) => reply.send(renderOAuthError(error)),
};
const oauthErrors = { 400: OAuthErrorRef, 429: OAuthErrorRef };
const consumes = ["application/x-www-form-urlencoded", "application/json"];

/** The device authorization grant's endpoints (RFC 8628 §3.1 and §3.4). */
export function deviceRoutes({
  device,
  publicUrl,
}: {
  device: DeviceService;
  publicUrl: string;
}): FastifyPluginAsyncTypebox {
  const verificationUri = `${publicUrl}/device`;
  return async (app) => {
    addFormBodyParser(app);

    app.post(
      "/oauth/device/code",
      {
        schema: {
          operationId: "oauth_device_code",
          tags: ["OAuth"],
          summary:
            "Start a device sign-in: a code to poll with, and one the person approves at verification_uri.",
          consumes,
          body: DeviceAuthorizationRequest,
          response: { 200: DeviceAuthorizationResponse, ...oauthErrors },
        },
        config: oauthEndpoint,
      },
      async (request) => {
        const issued = await device.issue(request.body.client_id, request.body.scope);
        return {
          device_code: issued.deviceCode,
          user_code: issued.userCode,
          verification_uri: verificationUri,
          verification_uri_complete: `${verificationUri}?user_code=${issued.userCode}`,
          expires_in: issued.expiresIn,
          interval: issued.interval,
        };
      },
    );

    app.post(
      "/oauth/token",
      {
        schema: {
          operationId: "oauth_token",
          tags: ["OAuth"],
          summary:
            "Poll with a device code: authorization_pending until approved, then the access token, once.",
          consumes,
          body: TokenRequest,
          response: { 200: TokenResponse, ...oauthErrors },
        },
        config: oauthEndpoint,
      },
      async (request, reply) => {
        reply.header("pragma", "no-cache");
        return device.exchange(request.body);
      },
    );
  };
}
