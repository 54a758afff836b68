import type { Duplex } from "node:stream";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ApiError } from "@hub/api";
import { HubError } from "../errors.js";
import { describeValidationError, fieldOf } from "./validation.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * Sends this route's errors in another shape than the shared error schema:
     * OAuth's error body, or a page for a browser. The status and headers are already set.
     */
    renderError?: (
      error: HubError,
      request: FastifyRequest,
      reply: FastifyReply,
    ) => FastifyReply | Promise<FastifyReply>;
  }
}

/** Maps anything thrown while serving a request to the one HubError the client sees. */
export function toHubError(err: FastifyError): HubError {
  if (err instanceof HubError) return err;
  const first = err.validation?.[0];
  if (first) {
    const context = err.validationContext ?? "request";
    return new HubError(400, "validation_failed", describeValidationError(first, context), {
      field: fieldOf(first) || undefined,
    });
  }
  switch (err.code) {
    case "FST_ERR_MAX_PARAM_LENGTH":
      return new HubError(
        414,
        "uri_too_long",
        "A segment of the URL path is longer than the hub accepts; check the names in the URL.",
      );
    case "FST_ERR_BAD_URL":
      return new HubError(
        400,
        "invalid_url",
        "The URL is not valid: a %-escape in its path does not decode to UTF-8 text.",
      );
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new HubError(
        415,
        "unsupported_media_type",
        "Send the body as JSON with Content-Type: application/json.",
      );
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new HubError(400, "invalid_json", "The body is empty; send a JSON object.");
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return new HubError(400, "invalid_json", "The body is not valid JSON; send a JSON object.");
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new HubError(413, "request_too_large", "The body is too large; send a smaller one.");
  }
  if (err instanceof SyntaxError || (err.statusCode === 400 && /JSON/i.test(err.message))) {
    return new HubError(400, "invalid_json", "The body is not valid JSON; send a JSON object.");
  }
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    return new HubError(
      err.statusCode,
      "bad_request",
      "The request could not be understood; check its method, headers and body.",
    );
  }
  return new HubError(
    500,
    "internal_error",
    "The hub failed to handle this request; the operator can find details in its log under this request id.",
  );
}

/** The JSON body of an error, in the shared error schema. */
export function renderHubError(error: HubError): ApiError {
  return { error: error.message, code: error.code, ...(error.field ? { field: error.field } : {}) };
}

/** The status line and body of a client error Node's HTTP parser answers before any route runs. */
const CLIENT_ERRORS: Record<string, { status: number; reason: string; error: HubError }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    reason: "Request Header Fields Too Large",
    error: new HubError(
      431,
      "headers_too_large",
      "The request line and headers are larger than the hub accepts (16 KiB); send a shorter URL or fewer headers.",
    ),
  },
};
const MALFORMED = {
  status: 400,
  reason: "Bad Request",
  error: new HubError(
    400,
    "bad_request",
    "The request is not valid HTTP/1.1; check its request line and headers.",
  ),
};

/**
 * Answers what Node's HTTP parser refuses (an oversized header section, a
 * malformed request) in the shared error schema, then closes the connection;
 * Fastify's own answer here is in another shape.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const { status, reason, error } = CLIENT_ERRORS[err.code ?? ""] ?? MALFORMED;
  const body = JSON.stringify(renderHubError(error));
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** The answer to a request no route matches. */
function routeNotFound(request: FastifyRequest): HubError {
  return new HubError(
    404,
    "route_not_found",
    `No route ${request.method} ${request.url.split("?")[0]}; see /api/openapi.json for the API.`,
    { headers: { "x-error-message": "This hub has no such operation" } },
  );
}

/** Installs the error and not-found handlers: every failure leaves in the shared error schema. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const error = toHubError(err);
    if (error.status >= 500) request.log.error({ err }, "request failed");
    reply.status(error.status).headers(error.headers);
    const render = request.routeOptions.config.renderError;
    return render ? render(error, request, reply) : reply.send(renderHubError(error));
  });
  app.setNotFoundHandler((request, reply) => {
    // A HEAD answer has no body, so its reason also travels in the header the clients print.
    const error = routeNotFound(request);
    return reply.status(404).headers(error.headers).send(renderHubError(error));
  });
}
