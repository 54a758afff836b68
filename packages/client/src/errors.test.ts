import { describe, expect, it } from "vitest";
import {
  BadRequestError,
  HubError,
  NotFoundError,
  RateLimitError,
  ServerError,
  describeErrorBody,
  errorFromResponse,
} from "./errors.js";

describe("errors", () => {
  it("reads the code and message of every error dialect the hub speaks", () => {
    expect(
      describeErrorBody({ error: "Repository x was not found.", code: "repo_not_found", field: "name" }),
    ).toEqual({
      code: "repo_not_found",
      message: "Repository x was not found.",
      field: "name",
    });
    expect(
      describeErrorBody({
        error: { message: "No such model.", type: "not_found_error", param: null, code: "model_not_found" },
      }),
    ).toEqual({ code: "model_not_found", message: "No such model.", field: undefined });
    expect(describeErrorBody({ error: "slow_down", error_description: "Poll less often." })).toEqual({
      code: "slow_down",
      message: "Poll less often.",
    });
    expect(describeErrorBody({ message: "Object does not exist.", request_id: "r" })).toMatchObject({
      message: "Object does not exist.",
    });
    expect(describeErrorBody("not json")).toEqual({});
  });

  it("chooses the class by status and keeps the ids the hub sent", () => {
    const response = (status: number, headers: Record<string, string> = {}) =>
      new Response(null, { status, headers });
    const limited = errorFromResponse(
      response(429, { "retry-after": "7", "x-request-id": "req-1" }),
      { error: "Too many requests.", code: "rate_limited" },
      "http://hub/api/whoami",
    );
    expect(limited).toBeInstanceOf(RateLimitError);
    expect(limited).toMatchObject({ status: 429, retryAfter: 7, requestId: "req-1", code: "rate_limited" });
    const routed = errorFromResponse(
      response(404, { "inference-id": "inf_1" }),
      {
        error: {
          message: "No such model.",
          type: "not_found_error",
          param: "model",
          code: "model_not_found",
        },
      },
      "http://router/v1/chat/completions",
    );
    expect(routed).toBeInstanceOf(NotFoundError);
    expect(routed).toMatchObject({ inferenceId: "inf_1", field: "model" });
    expect(errorFromResponse(response(413), undefined, "u")).toBeInstanceOf(BadRequestError);
    const failed = errorFromResponse(response(502), undefined, "u");
    expect(failed).toBeInstanceOf(ServerError);
    expect(failed).toBeInstanceOf(HubError);
    expect(failed.code).toBe("http_502");
    expect(failed.name).toBe("ServerError");
  });
});
