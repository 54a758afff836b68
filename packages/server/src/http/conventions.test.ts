import type { ApiError, Health } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
/** The parts of the OpenAPI document the test reads. */
interface OpenApiDocument {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, { operationId: string }>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, { required?: string[] }> };
}

import { readJson, startInProcessHub, type InProcessHub } from "../test-support/hub-inprocess.js";

describe("conventions shared by every Hub operation", () => {
  let hub: InProcessHub;
  let token: string;

  beforeAll(async () => {
    hub = await startInProcessHub({ env: { HUB_RATE_LIMIT: "40", HUB_RATE_LIMIT_WINDOW: "3600" } });
    await hub.createUser("alice");
    token = await hub.createToken("alice");
  });
  afterAll(() => hub?.stop());

  it("serves health without a token and without metering it", async () => {
    const response = await hub.request("/api/health");
    expect(response.status).toBe(200);
    expect(await readJson<Health>(response)).toMatchObject({ status: "ok" });
    expect(response.headers.get("ratelimit")).toBeNull();
  });

  it("answers unknown API routes with a JSON 404 in the shared error schema", async () => {
    for (const [method, path] of [
      ["GET", "/api/nothing-here"],
      ["DELETE", "/api/whoami"],
      ["GET", "/elsewhere"],
    ] as const) {
      const response = await hub.request(path, { method, token });
      expect(response.status).toBe(404);
      expect(response.headers.get("content-type")).toMatch(/^application\/json/);
      const body = await readJson<ApiError>(response);
      expect(Object.keys(body).sort()).toEqual(["code", "error"]);
      expect(body.code).toBe("route_not_found");
    }
    // A body of a type no route takes (an attachment the Python client posts to /uploads) does not change that.
    const posted = await hub.request("/uploads", {
      method: "POST",
      token,
      headers: { "content-type": "image/png" },
      body: Buffer.from("89504e470d0a1a0a", "hex"),
    });
    expect(posted.status).toBe(404);
    expect((await readJson<ApiError>(posted)).code).toBe("route_not_found");
    expect(posted.headers.get("x-error-message")).toBe("This hub has no such operation");
  });

  it("requires Content-Type: application/json on JSON bodies (415)", async () => {
    for (const contentType of ["text/plain", "application/x-www-form-urlencoded", "application/xml"]) {
      const response = await hub.request("/api/auth/login", {
        method: "POST",
        headers: { "content-type": contentType },
        body: JSON.stringify({ username: "alice", password: "x" }),
      });
      expect(response.status).toBe(415);
      const body = await readJson<ApiError>(response);
      expect(body.code).toBe("unsupported_media_type");
      expect(body.error).toMatch(/application\/json/);
    }
  });

  it("rejects malformed JSON, empty bodies and non-object bodies with 400", async () => {
    for (const body of ["{not json", "", "[1,2]", '"text"']) {
      const response = await hub.request("/api/auth/login", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      expect(response.status).toBe(400);
      expect(typeof (await readJson<ApiError>(response)).error).toBe("string");
    }
  });

  it("refuses NUL characters in paths and in body text with 400, on every dialect's behalf", async () => {
    const inPath = await hub.request("/api/me/tokens/abc%00def", { method: "DELETE", token });
    expect(inPath.status).toBe(400);
    const inBody = await hub.request("/api/auth/login", {
      method: "POST",
      json: { username: "ali\u0000ce", password: "whatever-it-is" },
    });
    expect(inBody.status).toBe(400);
    expect((await readJson<ApiError>(inBody)).code).toBe("invalid_request");
  });

  it("never returns internals in an error", async () => {
    const response = await hub.request("/api/auth/login", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{",
    });
    const text = await response.text();
    expect(text).not.toMatch(/at \w+ \(|node_modules|\.ts:|\.js:/);
  });

  it("puts RateLimit and RateLimit-Policy on 200, 201 and 204 responses", async () => {
    const response = await hub.request("/api/whoami", { token });
    expect(response.status).toBe(200);
    expect(response.headers.get("ratelimit-policy")).toBe('"hub";q=40;w=3600');
    expect(response.headers.get("ratelimit")).toMatch(/^"hub";r=\d+;t=\d+$/);
    expect(response.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers 429 with Retry-After once a credential's bucket is empty, without touching other buckets", async () => {
    const own = await hub.createToken("alice");
    const other = await hub.createToken("alice");
    let last = new Response();
    const remaining: number[] = [];
    for (let i = 0; i < 41; i++) {
      last = await hub.request("/api/whoami", { token: own });
      if (last.status === 200)
        remaining.push(Number(/r=(\d+)/.exec(last.headers.get("ratelimit") ?? "")?.[1]));
    }
    expect(remaining.slice(0, 3)).toEqual([39, 38, 37]);
    expect(last.status).toBe(429);
    const retryAfter = Number(last.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(last.headers.get("ratelimit")).toMatch(/^"hub";r=0;t=\d+$/);
    expect(last.headers.get("ratelimit-policy")).toBe('"hub";q=40;w=3600');
    expect((await readJson<ApiError>(last)).code).toBe("rate_limited");
    expect((await hub.request("/api/whoami", { token: other })).status).toBe(200);
  });

  it("publishes an OpenAPI 3.1.0 document generated from the route schemas", async () => {
    const response = await hub.request("/api/openapi.json");
    expect(response.status).toBe(200);
    const doc = await readJson<OpenApiDocument>(response);
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe("1.0.0");
    const operations = new Map<
      string,
      { security?: unknown; responses: Record<string, unknown>; requestBody?: unknown }
    >();
    for (const methods of Object.values(doc.paths) as Array<Record<string, never>>) {
      for (const operation of Object.values(methods) as Array<{ operationId: string }>)
        operations.set(operation.operationId, operation as never);
    }
    for (const id of [
      "whoami",
      "account_profile_get",
      "account_tokens_list",
      "account_tokens_create",
      "account_tokens_revoke",
    ]) {
      expect(operations.has(id), id).toBe(true);
    }
    expect(doc.paths["/api/me/tokens/{tokenId}"]?.delete?.operationId).toBe("account_tokens_revoke");
    expect(operations.get("account_tokens_list")?.security).toEqual([{ bearer: [] }]);
    expect(operations.get("health")?.security).toEqual([]);
    expect(doc.components.securitySchemes.bearer).toEqual({ type: "http", scheme: "bearer" });
    // The Xet CAS takes the tokens of the xet-*-token routes, not a Hub credential.
    for (const id of ["xet_upload_xorb", "xet_upload_shard", "xet_dedup_chunk", "xet_reconstruction"])
      expect(operations.get(id)?.security, id).toEqual([{ xetToken: [] }]);
    expect(doc.components.securitySchemes.xetToken).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.components.schemas.Error?.required).toEqual(["error", "code"]);
    const created = operations.get("account_tokens_create");
    expect(JSON.stringify(created?.requestBody)).toContain(
      "^[a-z0-9][a-z0-9._-]{0,62}/[a-z0-9][a-z0-9._-]{0,95}$",
    );
    expect(JSON.stringify(created?.responses["401"])).toContain("#/components/schemas/Error");
    expect(JSON.stringify(created?.responses["429"])).toContain("#/components/schemas/Error");
  });
});
