/** What an error carries besides its message: where it came from, for the operator's logs. */
export interface HubErrorDetails {
  /** The hub's stable snake_case code (the Router's `error.code`, an OAuth `error`). */
  code: string;
  /** The request field at fault, when the hub names one. */
  field?: string;
  /** The hub's `X-Request-Id`: its log lines carry the same id. */
  requestId?: string;
  /** The Router's `Inference-Id` (`inf_<uuid>`), kept even when the body came from a provider. */
  inferenceId?: string;
  /** The URL of the request that failed. */
  url?: string;
  cause?: unknown;
}

/**
 * The one error type of the SDK: every failed call throws a subclass of it,
 * chosen by HTTP status, carrying the hub's `code`, message and request id
 * (modelled on openai-node's `src/core/error.ts`). `status` is 0 when no HTTP
 * answer arrived at all (see {@link ConnectionError}).
 */
export class HubError extends Error {
  readonly status: number;
  readonly code: string;
  readonly field: string | undefined;
  readonly requestId: string | undefined;
  readonly inferenceId: string | undefined;
  readonly url: string | undefined;

  constructor(status: number, message: string, details: HubErrorDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.status = status;
    this.code = details.code;
    this.field = details.field;
    this.requestId = details.requestId;
    this.inferenceId = details.inferenceId;
    this.url = details.url;
  }
}

/** 400 (and 413, 415, 422): the request itself is wrong; fix it before retrying. */
export class BadRequestError extends HubError {}
/** 401: no credential, a bad one, or (code `reauthentication_required`) one that needs the password again. */
export class AuthenticationError extends HubError {}
/** 402: the Router refuses routed inference (no credit, monthly limit, restricted account). */
export class PaymentRequiredError extends HubError {}
/** 403: the credential may not do this. */
export class PermissionError extends HubError {}
/** 404: no such thing, or one the caller may not see. */
export class NotFoundError extends HubError {}
/** 409: it exists already, or a concurrent writer won. */
export class ConflictError extends HubError {}
/** 412: a precondition (such as a commit's parent) no longer holds. */
export class PreconditionFailedError extends HubError {}
/** 429: the quota is spent; `retryAfter` says for how many seconds, when the hub says. */
export class RateLimitError extends HubError {
  constructor(
    status: number,
    message: string,
    details: HubErrorDetails,
    readonly retryAfter: number | undefined,
  ) {
    super(status, message, details);
  }
}
/** 5xx: the hub or every provider behind the Router failed; retrying later may work. */
export class ServerError extends HubError {}
/** No HTTP answer: the hub could not be reached, or the connection broke mid-way. */
export class ConnectionError extends HubError {}
/** The caller stopped the operation (an AbortSignal fired). */
export class AbortedError extends HubError {}

/** The error class for an HTTP status, with its details. */
export function errorForStatus(
  status: number,
  message: string,
  details: HubErrorDetails,
  retryAfter?: number,
): HubError {
  switch (status) {
    case 400:
    case 413:
    case 415:
    case 422:
      return new BadRequestError(status, message, details);
    case 401:
      return new AuthenticationError(status, message, details);
    case 402:
      return new PaymentRequiredError(status, message, details);
    case 403:
      return new PermissionError(status, message, details);
    case 404:
      return new NotFoundError(status, message, details);
    case 409:
      return new ConflictError(status, message, details);
    case 412:
      return new PreconditionFailedError(status, message, details);
    case 429:
      return new RateLimitError(status, message, details, retryAfter);
  }
  return status >= 500 ? new ServerError(status, message, details) : new HubError(status, message, details);
}

/** The code and message of an error body, whichever of the hub's dialects it speaks. */
export function describeErrorBody(body: unknown): { code?: string; message?: string; field?: string } {
  if (typeof body !== "object" || body === null) return {};
  const record = body as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === "string" && value.length > 0 ? value : undefined);
  // The Router: the OpenAI error object.
  if (typeof record.error === "object" && record.error !== null) {
    const inner = record.error as Record<string, unknown>;
    return {
      code: text(inner.code) ?? text(inner.type),
      message: text(inner.message),
      field: text(inner.param),
    };
  }
  // OAuth (RFC 6749 section 5.2, RFC 8628): `error` is the code, `error_description` the message.
  if (text(record.code) === undefined && /^[a-z_]+$/.test(text(record.error) ?? "")) {
    return { code: text(record.error), message: text(record.error_description) ?? text(record.error) };
  }
  // The Hub API: `{error, code, field}`; Git LFS: `{message}`.
  return {
    code: text(record.code),
    message: text(record.error) ?? text(record.message),
    field: text(record.field),
  };
}

/** Builds the error for a failed response from its already-read body. */
export function errorFromResponse(response: Response, body: unknown, url: string): HubError {
  const described = describeErrorBody(body);
  const headers = response.headers;
  const retryAfterHeader = headers.get("retry-after");
  const retryAfter =
    retryAfterHeader !== null && /^\d+$/.test(retryAfterHeader.trim()) ? Number(retryAfterHeader) : undefined;
  const message =
    described.message ??
    headers.get("x-error-message") ??
    `The hub answered ${response.status} ${response.statusText || ""}`.trim() + ".";
  return errorForStatus(
    response.status,
    message,
    {
      code: described.code ?? headers.get("x-error-code") ?? `http_${response.status}`,
      field: described.field,
      requestId: headers.get("x-request-id") ?? undefined,
      inferenceId: headers.get("inference-id") ?? undefined,
      url,
    },
    retryAfter,
  );
}
