import type { OAuthError, RouterError } from "@hub/api";
import type { ErrorCode } from "./error-codes.js";

/** The most of a quoted value an error message repeats back. */
export const MAX_QUOTED_LENGTH = 100;

/**
 * Cuts every quoted run ("…" or `…`) longer than MAX_QUOTED_LENGTH down to
 * that many characters and an ellipsis: messages quote what the caller sent,
 * and a 10,000-character name must not come back whole.
 */
export function boundQuotes(message: string): string {
  return message.replace(/(["`])([^"`]{101,})\1/g, (_match, quote: string, text: string) => {
    return `${quote}${text.slice(0, MAX_QUOTED_LENGTH)}…${quote}`;
  });
}

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
    super(boundQuotes(message), cause === undefined ? undefined : { cause });
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

/** A collection that does not exist or that the caller may not see. */
export const collectionNotFound = (slug: string) =>
  new HubError(
    404,
    "collection_not_found",
    `Collection ${slug} was not found, or you may not see it; check the slug (owner/title-id) and your token.`,
  );

/** A revision (branch, tag or commit) a repository does not have; the clients read the X-Error-Code. */
export const revisionNotFound = (revision: string, fullName: string) =>
  new HubError(
    404,
    "revision_not_found",
    `Revision ${revision} was not found in ${fullName}; check the branch, tag or commit.`,
    {
      headers: {
        "x-error-code": "RevisionNotFound",
        "x-error-message": "Invalid rev id",
      },
    },
  );

/** A file a revision does not have; X-Repo-Commit names the commit that was searched. */
export const entryNotFound = (path: string, commit: string | null) =>
  new HubError(
    404,
    "entry_not_found",
    `${path} was not found at this revision: a file with this name doesn't exist.`,
    {
      headers: {
        "x-error-code": "EntryNotFound",
        "x-error-message": "Entry not found",
        ...(commit ? { "x-repo-commit": commit } : {}),
      },
    },
  );

/** A repository an anonymous caller may not see: 401 as the Hub answers it, which the Python client reads as RepositoryNotFoundError. */
export const repoNeedsSignIn = (message: string) =>
  new HubError(401, "unauthenticated", message, {
    headers: {
      "www-authenticate": 'Bearer realm="hub"',
      "x-error-code": "RepoNotFound",
      "x-error-message": "Repository Not Found",
    },
  });

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
