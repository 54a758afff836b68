import type { OAuthError, RouterError } from "@hub/api";
import type { ErrorCode } from "./error-codes.js";

/** What an error carries beyond its status, code and message. */
export interface HubErrorOptions {
  /** The request field at fault, when one is. */
  field?: string;
  /** Headers the answer carries (`www-authenticate`, `x-error-code`, `location`, `retry-after` …). */
  headers?: Record<string, string>;
  /** The error behind this one, for the log; never sent to the client. */
  cause?: unknown;
}

/**
 * The one error type of the hub. `code` is a stable snake_case key from the
 * catalog (`error-codes.ts`, documented in docs/errors.md) that clients can
 * branch on; `message` tells the user what went wrong and what to do.
 */
export class HubError extends Error {
  readonly field: string | undefined;
  readonly headers: Record<string, string>;

  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    { field, headers = {}, cause }: HubErrorOptions = {},
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "HubError";
    this.field = field;
    this.headers = headers;
  }
}

export const badRequest = (code: ErrorCode, message: string, field?: string) =>
  new HubError(400, code, message, { field });

export const notFound = (message: string) => new HubError(404, "not_found", message);

/** A repository that does not exist or that the caller may not see; Hugging Face clients read the X-Error-Code. */
export const repoNotFound = (fullName: string) =>
  new HubError(
    404,
    "repo_not_found",
    `Repository ${fullName} was not found, or you may not see it; check the name and your token.`,
    {
      headers: {
        "x-error-code": "RepoNotFound",
        "x-error-message": "Repository Not Found",
      },
    },
  );

export const unauthenticated = (code: ErrorCode, message: string) =>
  new HubError(401, code, message, { headers: { "www-authenticate": 'Bearer realm="hub"' } });

/** A presented credential the hub does not accept; the Python client keys on this exact X-Error-Message. */
export const invalidCredentials = (code: ErrorCode, message: string) =>
  new HubError(401, code, message, {
    headers: {
      "www-authenticate": 'Bearer realm="hub"',
      "x-error-message": "Invalid credentials in Authorization header",
    },
  });

export const forbidden = (code: ErrorCode, message: string) => new HubError(403, code, message);

export const conflict = (code: ErrorCode, message: string, field?: string) =>
  new HubError(409, code, message, { field });

const OPENAI_ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "insufficient_quota",
  403: "permission_error",
  404: "not_found_error",
  409: "conflict_error",
  413: "invalid_request_error",
  429: "rate_limit_error",
};

/** A HubError as the Router's OpenAI error object. */
export function renderRouterError(error: HubError): RouterError {
  return {
    error: {
      message: error.message,
      type: OPENAI_ERROR_TYPES[error.status] ?? (error.status >= 500 ? "api_error" : "invalid_request_error"),
      param: error.field ?? null,
      code: error.code,
    },
  };
}

/** The error codes OAuth 2.0 defines for the device authorization and token endpoints (RFC 6749 §5.2, RFC 8628 §3.5). */
const OAUTH_ERROR_CODES = new Set([
  "invalid_request",
  "invalid_scope",
  "invalid_grant",
  "unsupported_grant_type",
  "authorization_pending",
  "slow_down",
  "access_denied",
  "expired_token",
]);

/**
 * A HubError as the OAuth error body. Other client errors (validation, media
 * type, JSON syntax) are OAuth's `invalid_request`; rate limits and server
 * failures keep the hub's code, which OAuth clients treat as fatal.
 */
export function renderOAuthError(error: HubError): OAuthError {
  const keep = OAUTH_ERROR_CODES.has(error.code) || error.status === 429 || error.status >= 500;
  return { error: keep ? error.code : "invalid_request", error_description: error.message };
}
