import net from "node:net";
import type { ApiError } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJson, startHub, type TestHub } from "../test-support/hub-process.js";

/** The parts of the OpenAPI document these checks read. */
interface Operation {
  operationId: string;
  security?: Array<Record<string, string[]>>;
  requestBody?: unknown;
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
interface Schema {
  $ref?: string;
  type?: string;
  required?: string[];
  properties?: Record<string, unknown>;
  anyOf?: Schema[];
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
const nestedObject = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

/** Sends raw bytes and returns the first response's status line and body. */
function rawRequest(port: number, request: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let text = "";
    socket.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    socket.on("error", reject);
    socket.on("close", () => {
      const [head = "", body = ""] = text.split("\r\n\r\n");
      resolve({ status: Number(head.split(" ")[1]), body });
    });
    socket.end(request);
  });
}

describe("requests the hub must refuse cleanly", () => {
  let hub: TestHub;
  let token: string;
  let bob: string;
  let document: OpenApiDocument;

  beforeAll(async () => {
    hub = await startHub({ env: { HUB_RATE_LIMIT: "100000" } });
    await hub.createUser("alice");
    token = await hub.createToken("alice");
    const created = await hub.request("/api/repos", {
      method: "POST",
      token,
      json: { repo_id: "alice/secret", private: true },
    });
    expect(created.status).toBe(201);
    document = await readJson<OpenApiDocument>(await hub.request("/api/openapi.json"));
    await hub.createUser("bob");
    bob = await hub.createToken("bob");
  });
  afterAll(() => hub?.stop());

  /** Every operation of the document with a concrete path for it: ids name alice's private repository. */
  function operations() {
    return Object.entries(document.paths).flatMap(([template, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({
        method: method.toUpperCase(),
        path: template.replace(/\{(\w+)\}/g, (_m, name: string) =>
          /owner|namespace|handle|user|org/i.test(name) ? "alice" : /name|repo/i.test(name) ? "secret" : "x1",
        ),
        operation,
      })),
    );
  }

  it("declares the shared error body for every error status of every operation, so none can fail to serialize", () => {
    const accepts = (schema: Schema | undefined): boolean => {
      if (!schema) return true;
      if (schema.$ref) return accepts(document.components.schemas[schema.$ref.split("/").pop() ?? ""]);
      if (schema.anyOf) return schema.anyOf.some(accepts);
      const required = schema.required ?? [];
      const properties = schema.properties ?? {};
      const shared =
        required.every((field) => ["error", "code", "field"].includes(field)) &&
        "error" in properties &&
        "code" in properties;
      // The OAuth endpoints answer RFC 6749's error body instead, by design.
      const oauth =
        required.every((field) => ["error", "error_description"].includes(field)) &&
        "error_description" in properties;
      return shared || oauth;
    };
    const wrong = operations().flatMap(({ method, path, operation }) =>
      Object.entries(operation.responses)
        .filter(([status]) => /^4\d\d$/.test(status))
        .filter(([, response]) => !accepts(response.content?.["application/json"]?.schema))
        .map(([status]) => `${method} ${path} ${status}`),
    );
    expect(wrong).toEqual([]);
  });

  it("answers 401 to an anonymous request with an invalid body on every operation that needs a credential", async () => {
    const failures: string[] = [];
    for (const { method, path, operation } of operations()) {
      const security = operation.security ?? [];
      const needsCredential =
        security.length > 0 && security.every((option) => Object.keys(option).length > 0);
      if (!needsCredential) continue;
      const response = await hub.request(path, {
        method,
        ...(operation.requestBody ? { headers: { "content-type": "application/json" }, body: "[1]" } : {}),
      });
      if (response.status !== 401) failures.push(`${method} ${path}: ${response.status}`);
      else expect((await readJson<ApiError>(response)).code).toBeTruthy();
    }
    expect(failures).toEqual([]);
  });

  it("refuses JSON nested deeper than 64 levels with a 400 naming the limit, anonymously too", async () => {
    const expectTooDeep = async (response: Response, label: string) => {
      expect(response.status, label).toBe(400);
      const body = (await response.json()) as Record<string, unknown>;
      const message = JSON.stringify(body);
      expect(message, label).toMatch(/at most 64 levels/);
    };
    for (const body of [nested(4000), nestedObject(4000), nested(65)]) {
      const post = (path: string, headers: Record<string, string> = {}) =>
        hub.request(path, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body,
        });
      await expectTooDeep(await post("/api/auth/login"), "login");
      await expectTooDeep(await post("/api/validate-yaml"), "validate-yaml");
      await expectTooDeep(await post("/api/repos", { authorization: `Bearer ${token}` }), "repos");
      const oauth = await post("/oauth/token");
      expect(oauth.status).toBe(400);
      expect(await oauth.json()).toMatchObject({ error: "invalid_request" });
      await expectTooDeep(
        await fetch(`${hub.gitUrl}/alice/secret.git/info/lfs/objects/batch`, {
          method: "POST",
          headers: { "content-type": "application/vnd.git-lfs+json", authorization: `Bearer ${token}` },
          body,
        }),
        "lfs batch",
      );
      await expectTooDeep(
        await fetch(`${hub.routerUrl}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body,
        }),
        "router",
      );
    }
    // A body within the limit is judged by its schema, not refused for its depth.
    const shallow = await hub.request("/api/auth/login", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: nestedObject(10),
    });
    expect(shallow.status).toBe(400);
    expect((await readJson<ApiError>(shallow)).code).toBe("validation_failed");
  });

  it("answers what the framework and Node's parser refuse in the shared error schema", async () => {
    const long = await hub.request(`/api/models/${"a".repeat(5000)}/x`);
    expect(long.status).toBe(414);
    const longBody = await readJson<ApiError>(long);
    expect(longBody.code).toBe("uri_too_long");
    expect(longBody.error.length).toBeLessThan(200);
    const badEscape = await hub.request("/api/models/%E0%A4%A/x");
    expect(badEscape.status).toBe(400);
    expect((await readJson<ApiError>(badEscape)).code).toBe("invalid_url");
    const port = Number(new URL(hub.url).port);
    const headers = await rawRequest(
      port,
      `GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: ${"b".repeat(20_000)}\r\n\r\n`,
    );
    expect(headers.status).toBe(431);
    expect(JSON.parse(headers.body)).toMatchObject({ code: "headers_too_large" });
    const malformed = await rawRequest(port, "GET /api/health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n");
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.body)).toMatchObject({ code: "bad_request" });
  });

  it("quotes what the caller sent back cut to 100 characters", async () => {
    const name = "A".repeat(5000);
    const response = await hub.request("/api/repos", {
      method: "POST",
      token,
      json: { repo_id: `alice/${name}` },
    });
    expect(response.status).toBe(400);
    const body = await readJson<ApiError>(response);
    expect(body.error.length).toBeLessThan(600);
    expect(body.error).not.toContain("A".repeat(101));
  });

  it("sends X-Error-Code and X-Error-Message on repository, revision and file lookups, as the clients read them", async () => {
    const api = "/api/models/alice/secret";
    const lookups: Array<[string, RequestInit]> = [
      [api, {}],
      [`${api}/revision/main`, {}],
      [`${api}/tree/main`, {}],
      [`${api}/commits/main`, {}],
      [`${api}/refs`, {}],
      [`${api}/paths-info/main`, { method: "POST", json: { paths: ["a"] } } as RequestInit],
      [`${api}/preupload/main`, { method: "POST", json: { files: [] } } as RequestInit],
      ["/alice/secret/resolve/main/README.md", {}],
      ["/alice/secret/resolve/main/README.md", { method: "HEAD" }],
      ["/alice/secret/raw/main/README.md", {}],
    ];
    for (const [path, init] of lookups) {
      const anonymous = await hub.request(path, init);
      expect(anonymous.status, `anonymous ${path}`).toBe(401);
      expect(anonymous.headers.get("x-error-code"), `anonymous ${path}`).toBe("RepoNotFound");
      expect(anonymous.headers.get("x-error-message"), `anonymous ${path}`).toBe("Repository Not Found");
      const stranger = await hub.request(path, { ...init, token: bob });
      expect(stranger.status, `bob ${path}`).toBe(404);
      expect(stranger.headers.get("x-error-code"), `bob ${path}`).toBe("RepoNotFound");
    }
    for (const path of [
      `${api}/revision/nope`,
      `${api}/tree/nope`,
      `${api}/commits/nope`,
      "/alice/secret/resolve/nope/x",
    ]) {
      const response = await hub.request(path, { token });
      expect(response.status, path).toBe(404);
      expect(response.headers.get("x-error-code"), path).toBe("RevisionNotFound");
      expect(response.headers.get("x-error-message"), path).toBeTruthy();
    }
    for (const init of [{}, { method: "HEAD" }]) {
      const response = await hub.request("/alice/secret/resolve/main/missing.txt", { ...init, token });
      expect(response.status).toBe(404);
      expect(response.headers.get("x-error-code")).toBe("EntryNotFound");
    }
    const tag = await hub.request(`${api}/tag/nope`, { method: "DELETE", token });
    expect(tag.status).toBe(404);
    expect(tag.headers.get("x-error-code")).toBe("RevisionNotFound");
  });
});
