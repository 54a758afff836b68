import { Type, type Static } from "@sinclair/typebox";
import { SCOPES } from "./scopes.js";

/** The roles a device sign-in may ask for, as a whole `scope` value. */
export const DEVICE_ROLES = ["read", "write"] as const;

/** Every value a `scope` request may name: one role, or spec scopes. */
export const SCOPES_SUPPORTED = [...SCOPES, ...DEVICE_ROLES];

/** The `grant_type` of the device authorization grant (RFC 8628 §3.4). */
export const DEVICE_CODE_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code";

/**
 * `GET /.well-known/hub-configuration`: every address a client needs, found
 * from the hub's base URL alone, so one endpoint setting is enough.
 */
export const HubConfiguration = Type.Object(
  {
    api_url: Type.String({ description: "Base URL of the Hub API (paths start with /api)." }),
    git_url: Type.String({ description: "Base URL of git over HTTPS." }),
    ssh_url: Type.String({ description: "Git over SSH, `ssh://git@host:port`." }),
    inference_url: Type.String({
      description: "Base URL of the inference Router; OpenAI clients use it + `/v1` as their base URL.",
    }),
    device_authorization_endpoint: Type.String({ description: "RFC 8628 device authorization endpoint." }),
    token_endpoint: Type.String({ description: "OAuth 2.0 token endpoint (device code grant)." }),
    mcp_url: Type.String({
      description:
        "The hub's MCP server (Streamable HTTP): assistants search models, datasets, spaces and papers, read cards and list files with it.",
    }),
    scopes_supported: Type.Array(Type.String(), {
      description: "Values a device sign-in's `scope` may hold: `read` or `write` alone, or spec scopes.",
    }),
    version: Type.String({ description: "The hub server's version." }),
  },
  { title: "HubConfiguration" },
);
export type HubConfiguration = Static<typeof HubConfiguration>;

/**
 * `POST /oauth/device/code` (RFC 8628 §3.1), form-encoded or JSON. Unknown
 * parameters are ignored, as RFC 6749 §3.1 requires of OAuth endpoints.
 */
export const DeviceAuthorizationRequest = Type.Object(
  {
    client_id: Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: "^[A-Za-z0-9._-]+$",
      description: "Names the client to the person approving, e.g. `hub-cli`.",
    }),
    scope: Type.Optional(
      Type.String({
        maxLength: 1024,
        description:
          "`read` or `write` alone for a role token, or space-separated spec scopes for a fine-grained token. Default `write`.",
      }),
    ),
  },
  { title: "DeviceAuthorizationRequest" },
);
export type DeviceAuthorizationRequest = Static<typeof DeviceAuthorizationRequest>;

export const DeviceAuthorizationResponse = Type.Object(
  {
    device_code: Type.String({ description: "The client's secret for polling the token endpoint." }),
    user_code: Type.String({ description: "What the person types on the verification page, `ABCD-EFGH`." }),
    verification_uri: Type.String(),
    verification_uri_complete: Type.String({ description: "The verification page with the code filled in." }),
    expires_in: Type.Integer({ description: "Seconds until both codes expire." }),
    interval: Type.Integer({ description: "Seconds to wait between polls of the token endpoint." }),
  },
  { title: "DeviceAuthorizationResponse" },
);
export type DeviceAuthorizationResponse = Static<typeof DeviceAuthorizationResponse>;

/**
 * `POST /oauth/token` (RFC 8628 §3.4), form-encoded or JSON. Only `grant_type`
 * is required by the schema so that another grant type is answered with
 * `unsupported_grant_type`; the device grant's own fields are checked after it.
 */
export const TokenRequest = Type.Object(
  {
    grant_type: Type.String({ maxLength: 256, description: DEVICE_CODE_GRANT_TYPE }),
    device_code: Type.Optional(Type.String({ maxLength: 256 })),
    client_id: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { title: "TokenRequest" },
);
export type TokenRequest = Static<typeof TokenRequest>;

/** The access token an approved device code is exchanged for, once (RFC 6749 §5.1). */
export const TokenResponse = Type.Object(
  {
    access_token: Type.String(),
    token_type: Type.Literal("bearer"),
    scope: Type.String({
      description: "What was granted: the role (`read`, `write`), or the approved scopes space-separated.",
    }),
    expires_in: Type.Integer({ description: "Seconds until the token expires." }),
  },
  { title: "TokenResponse" },
);
export type TokenResponse = Static<typeof TokenResponse>;

/**
 * The error body of the OAuth endpoints (RFC 6749 §5.2, RFC 8628 §3.5). `error`
 * is one of `invalid_request`, `invalid_scope`, `invalid_grant`,
 * `unsupported_grant_type`, `authorization_pending`, `slow_down`,
 * `access_denied`, `expired_token` (with status 400), or the hub's own code
 * on other statuses (`rate_limited`, `internal_error`).
 */
export const OAuthError = Type.Object(
  {
    error: Type.String(),
    error_description: Type.String({ description: "What went wrong and what to do about it." }),
  },
  { $id: "OAuthError", title: "OAuthError" },
);
export type OAuthError = Static<typeof OAuthError>;

/** A reference to the OAuth error schema, for route response tables. */
export const OAuthErrorRef = Type.Ref(OAuthError);
