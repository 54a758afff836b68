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
    renderError?: (error: HubError, request: FastifyRequest, reply: FastifyReply) => FastifyReply;
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

/** Installs the error and not-found handlers: every failure leaves in the shared error schema. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const error = toHubError(err);
    if (error.status >= 500) request.log.error({ err }, "request failed");
    reply.status(error.status).headers(error.headers);
    const render = request.routeOptions.config.renderError;
    return render ? render(error, request, reply) : reply.send(renderHubError(error));
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .status(404)
      .send(
        renderHubError(
          new HubError(
            404,
            "route_not_found",
            `No route ${request.method} ${request.url.split("?")[0]}; see /api/openapi.json for the API.`,
          ),
        ),
      ),
  );
}
