import http from "node:http";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { InferenceOverview } from "@hub/api";
import { FakeProvider, writeProvidersFile } from "../test-support/fake-provider.js";
import { readJson, startHub, type TestHub } from "../test-support/hub-process.js";

const alpha = new FakeProvider("alpha");
const beta = new FakeProvider("beta");
const gamma = new FakeProvider("gamma");

/** alpha, beta and gamma all serve acme/chat-1, at different prices; alpha alone serves the other tasks. */
function providersFile(): string {
  const chat = (input: number, output: number) => ({
    id: "acme/chat-1",
    providerModel: "upstream-chat",
    task: "chat",
    pricing: { input, output },
  });
  // Served by all three and called only by the :fastest test, so no other test's traffic moves its figures.
  const speed = {
    id: "acme/speed-1",
    providerModel: "upstream-speed",
    task: "chat",
    pricing: { input: 1, output: 1 },
  };
  const file = writeProvidersFile("router", [
    {
      slug: "alpha",
      baseUrl: alpha.url,
      apiKey: "env:ALPHA_KEY",
      models: [
        chat(1, 2),
        {
          id: "acme/resp-1",
          providerModel: "upstream-resp",
          task: "responses",
          pricing: { input: 1, output: 2 },
        },
        {
          id: "acme/embed-1",
          providerModel: "upstream-embed",
          task: "embeddings",
          pricing: { input: 1, output: 0 },
        },
        {
          id: "acme/free-1",
          providerModel: "upstream-free",
          task: "chat",
          pricing: { input: 0, output: 0 },
        },
        speed,
      ],
    },
    { slug: "beta", baseUrl: beta.url, apiKey: "sk-beta-hub-key", models: [chat(0.5, 1), speed] },
    { slug: "gamma", baseUrl: gamma.url, apiKey: "sk-gamma-hub-key", models: [chat(3, 4), speed] },
  ]);
  return file;
}

let hub: TestHub;
let token: string;
let client: OpenAI;

function clientFor(apiKey: string, headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${hub.routerUrl}/v1`, maxRetries: 0, defaultHeaders: headers });
}

function routerFetch(pathname: string, init: RequestInit & { token?: string; json?: unknown } = {}) {
  const headers = new Headers(init.headers);
  if (init.token) headers.set("authorization", `Bearer ${init.token}`);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(init.json);
  }
  return fetch(`${hub.routerUrl}${pathname}`, { method: "POST", ...init, headers, body });
}

async function routerError(response: Response) {
  return (
    (await response.json()) as { error: { code: string; message: string; type: string; param: unknown } }
  ).error;
}

async function overview(owner = "/api/me"): Promise<InferenceOverview> {
  // Ledger rows are written in batches every 50 ms; let the last batch land.
  await new Promise((resolve) => setTimeout(resolve, 120));
  const response = await hub.request(`${owner}/inference/overview`, { token });
  expect(response.status).toBe(200);
  return readJson<InferenceOverview>(response);
}

/** The ledger is written right after the response; give it a moment. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let i = 0; i < 50; i++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return read();
}

const chat = (model: string) => ({ model, messages: [{ role: "user" as const, content: "hi" }] });

beforeAll(async () => {
  await Promise.all([alpha.start(), beta.start(), gamma.start()]);
  hub = await startHub({
    env: {
      HUB_PROVIDERS: providersFile(),
      ALPHA_KEY: "sk-alpha-hub-key",
      HUB_ROUTER_HEADERS_TIMEOUT_MS: "1500",
      HUB_ROUTER_FIRST_BYTE_TIMEOUT_MS: "1500",
      HUB_ROUTER_COOLDOWN_MS: "0",
    },
  });
  hub.secrets.add("sk-alpha-hub-key");
  hub.secrets.add("sk-beta-hub-key");
  await hub.createUser("ann");
  token = await hub.createToken("ann", ["--role", "write"]);
  expect((await hub.cli(["credit", "add", "ann", "10"])).code).toBe(0);
  client = clientFor(token);
}, 60_000);

afterEach(() => {
  for (const fake of [alpha, beta, gamma]) {
    fake.behavior = { kind: "ok" };
    fake.requests.length = 0;
  }
});

afterAll(async () => {
  await hub?.stop();
  await Promise.all([alpha.stop(), beta.stop(), gamma.stop()]);
});

describe("the Router's tasks through the official openai client", () => {
  it("relays a chat completion with the provider's model name and the hub's key, and says who served it", async () => {
    const { data, response } = await client.chat.completions.create(chat("acme/chat-1:alpha")).withResponse();
    expect(data.choices[0]?.message.content).toBe("hello from alpha");
    expect(response.headers.get("inference-id")).toMatch(/^inf_[0-9a-f-]{36}$/);
    expect(response.headers.get("x-service-provider")).toBe("alpha");
    expect(response.headers.get("x-service-route")).toContain("policy=pinned");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("x-fake-provider")).toBe("yes");
    expect(alpha.requests[0]?.body.model).toBe("upstream-chat");
    expect(alpha.requests[0]?.authorization).toBe("Bearer sk-alpha-hub-key");
  });

  it("serves the Responses API and embeddings", async () => {
    const response = await client.responses.create({ model: "acme/resp-1", input: "hi" });
    expect(response.output_text).toBe("hello from alpha");
    expect(alpha.requests[0]?.path).toBe("/v1/responses");
    const embedding = await client.embeddings.create({ model: "acme/embed-1", input: "hi" });
    expect(embedding.data[0]?.embedding.map((v) => Math.round(v * 10) / 10)).toEqual([0.1, 0.2, 0.3]);
    expect(alpha.requests[1]?.body.model).toBe("upstream-embed");
  });

  it("streams chat chunks as they arrive, asks for usage, and charges the streamed usage", async () => {
    const before = await overview();
    alpha.behavior = { kind: "ok", chunks: 4, chunkDelayMs: 30 };
    const stream = await client.chat.completions.create({ ...chat("acme/chat-1:alpha"), stream: true });
    const pieces: string[] = [];
    for await (const chunk of stream) pieces.push(chunk.choices[0]?.delta.content ?? "");
    expect(pieces.join("")).toBe("t0 t1 t2 t3 ");
    expect(alpha.requests[0]?.body.stream_options).toEqual({ include_usage: true });
    const after = await eventually(overview, (o) => o.totals.requests > before.totals.requests);
    // 12 input tokens at $1/M and 4 output tokens at $2/M.
    expect(after.totals.cost_usd - before.totals.cost_usd).toBeCloseTo((12 * 1 + 4 * 2) / 1e6, 12);
    expect(after.balance_usd).toBeCloseTo(before.balance_usd - (12 + 8) / 1e6, 9);
  });

  it("relays a stream byte for byte", async () => {
    const body = JSON.stringify({
      ...chat("upstream-chat"),
      stream: true,
      stream_options: { include_usage: true },
    });
    const direct = await (
      await fetch(`${alpha.url}/chat/completions`, {
        method: "POST",
        body,
        headers: { "content-type": "application/json" },
      })
    ).text();
    const routed = await (
      await routerFetch("/v1/chat/completions", {
        token,
        json: { ...chat("acme/chat-1:alpha"), stream: true, stream_options: { include_usage: true } },
      })
    ).text();
    expect(routed).toBe(direct);
  });

  it("streams the Responses API and charges the usage of its completed event", async () => {
    const before = await overview();
    const stream = await client.responses.create({ model: "acme/resp-1", input: "hi", stream: true });
    let text = "";
    for await (const event of stream) if (event.type === "response.output_text.delta") text += event.delta;
    expect(text).toBe("t0 t1 t2 t3 t4 ");
    const after = await eventually(overview, (o) => o.totals.requests > before.totals.requests);
    expect(after.totals.output_tokens - before.totals.output_tokens).toBe(5);
  });

  it("lists the live catalog at /v1/models for a token with inference:run", async () => {
    const models = await client.models.list();
    const ids = models.data.map((m) => m.id);
    expect(ids).toEqual(["acme/chat-1", "acme/embed-1", "acme/free-1", "acme/resp-1", "acme/speed-1"]);
    const chatModel = models.data.find((m) => m.id === "acme/chat-1") as unknown as {
      providers: Array<{ provider: string; pricing: { output: number }; status: string }>;
    };
    expect(chatModel.providers.map((p) => [p.provider, p.pricing.output, p.status])).toEqual([
      ["alpha", 2, "live"],
      ["beta", 1, "live"],
      ["gamma", 4, "live"],
    ]);
    const catalog = await hub.request("/api/inference/providers/beta/models");
    expect(((await catalog.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id)).toEqual([
      "acme/chat-1",
      "acme/speed-1",
    ]);
    expect((await hub.request("/api/inference/providers/nope/models")).status).toBe(404);
  });
});

describe("policies, failover and affinity", () => {
  it(":cheapest picks the lowest output price and explains it", async () => {
    const { response } = await client.chat.completions.create(chat("acme/chat-1:cheapest")).withResponse();
    expect(response.headers.get("x-service-provider")).toBe("beta");
    const route = response.headers.get("x-service-route") ?? "";
    expect(route).toContain("policy=cheapest");
    expect(route).toContain('candidates="beta=1, alpha=2, gamma=4"');
    expect(route).toContain("chosen=beta");
  });

  it(":preferred follows the saved order; a disabled provider is skipped, and 404 when pinned", async () => {
    const put = await hub.request("/api/me/inference/preferences", {
      method: "PUT",
      token,
      json: { provider_order: ["gamma", "alpha"], disabled_providers: ["beta"] },
    });
    expect(put.status).toBe(200);
    try {
      const { response } = await client.chat.completions.create(chat("acme/chat-1:preferred")).withResponse();
      expect(response.headers.get("x-service-provider")).toBe("gamma");
      const cheapest = await client.chat.completions.create(chat("acme/chat-1:cheapest")).withResponse();
      expect(cheapest.response.headers.get("x-service-provider")).toBe("alpha");
      const pinned = await routerFetch("/v1/chat/completions", { token, json: chat("acme/chat-1:beta") });
      expect(pinned.status).toBe(404);
      expect((await routerError(pinned)).message).toContain("disabled");
    } finally {
      await hub.request("/api/me/inference/preferences", { method: "PUT", token, json: {} });
    }
  });

  it(":fastest ranks by the tokens per second measured on live traffic", async () => {
    alpha.behavior = { kind: "ok", chunks: 5, chunkDelayMs: 40 };
    gamma.behavior = { kind: "ok", chunks: 5, chunkDelayMs: 1 };
    for (const model of ["acme/speed-1:alpha", "acme/speed-1:gamma", "acme/speed-1:beta"]) {
      if (model.endsWith("beta")) beta.behavior = { kind: "ok", chunks: 5, chunkDelayMs: 20 };
      const stream = await client.chat.completions.create({ ...chat(model), stream: true });
      for await (const _ of stream);
    }
    const { response } = await client.chat.completions.create(chat("acme/speed-1:fastest")).withResponse();
    expect(response.headers.get("x-service-provider")).toBe("gamma");
    expect(response.headers.get("x-service-route")).toMatch(
      /metric=tokens_per_second; candidates="gamma=[\d.]+, beta=[\d.]+, alpha=[\d.]+"/,
    );
  });

  it("fails over before the first byte: 5xx, reset connections and silent providers", async () => {
    beta.behavior = { kind: "status", status: 503 };
    alpha.behavior = { kind: "reset" };
    const { data, response } = await client.chat.completions
      .create(chat("acme/chat-1:cheapest"))
      .withResponse();
    expect(data.choices[0]?.message.content).toBe("hello from gamma");
    expect(response.headers.get("x-service-route")).toContain("attempt=3");
    beta.behavior = { kind: "hang" };
    alpha.behavior = { kind: "ok" };
    const slow = await client.chat.completions.create(chat("acme/chat-1:cheapest")).withResponse();
    expect(slow.response.headers.get("x-service-provider")).toBe("alpha");
  });

  it("cancels the provider's call when the client goes away, and tries no other provider", async () => {
    for (const fake of [alpha, beta, gamma]) {
      fake.behavior = { kind: "hang" };
      fake.hangsClosedAt.length = 0;
    }
    const leaving = new AbortController();
    const answer = fetch(`${hub.routerUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(chat("acme/chat-1:cheapest")),
      signal: leaving.signal,
    });
    const waiting = [alpha, beta, gamma];
    const calledOne = async () => waiting.some((fake) => fake.requests.length === 1);
    expect(await eventually(calledOne, Boolean)).toBe(true);
    const called = waiting.find((fake) => fake.requests.length === 1);
    const leftAt = performance.now();
    leaving.abort();
    await expect(answer).rejects.toThrow();
    // Well before the 1.5 s the Router would wait for headers, the provider's call is closed.
    const closed = async () => called?.hangsClosedAt.length === 1;
    expect(await eventually(closed, Boolean)).toBe(true);
    expect((called?.hangsClosedAt[0] ?? Infinity) - leftAt).toBeLessThan(1000);
    await new Promise((resolve) => setTimeout(resolve, 1700));
    expect(waiting.reduce((sum, fake) => sum + fake.requests.length, 0)).toBe(1);
  });

  it("fails over when a stream's first byte never comes", async () => {
    beta.behavior = { kind: "stall-mid-stream", chunks: 0 };
    const stream = await client.chat.completions.create({ ...chat("acme/chat-1:cheapest"), stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("t0 t1 t2 t3 t4 ");
    expect(beta.requests).toHaveLength(1);
    expect(alpha.requests).toHaveLength(1);
  });

  it("never switches after the first byte: a broken stream ends with an error event the client sees", async () => {
    beta.behavior = { kind: "drop-mid-stream", chunks: 2 };
    const stream = await client.chat.completions.create({ ...chat("acme/chat-1:cheapest"), stream: true });
    let text = "";
    const failure = await (async () => {
      try {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
        return null;
      } catch (err) {
        return err as Error;
      }
    })();
    expect(text).toBe("t0 t1 ");
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect(failure?.message).toContain("mid-stream");
    expect(alpha.requests).toHaveLength(0);
  });

  it("ends a stalled stream with an error event after the idle timeout", async () => {
    beta.behavior = { kind: "stall-mid-stream", chunks: 1 };
    const raw = await (
      await routerFetch("/v1/chat/completions", {
        token,
        json: { ...chat("acme/chat-1:beta"), stream: true },
      })
    ).text();
    expect(raw).toMatch(/^data: .*t0 .*\n\nevent: error\ndata: .*"code":"stream_interrupted"/s);
  });

  it("keeps a session on the provider it started on", async () => {
    const session = clientFor(token, { "X-Service-Session-Id": `s-${Date.now()}` });
    const first = await session.chat.completions.create(chat("acme/chat-1:preferred")).withResponse();
    expect(first.response.headers.get("x-service-provider")).toBe("alpha");
    await hub.request("/api/me/inference/preferences", {
      method: "PUT",
      token,
      json: { provider_order: ["gamma"] },
    });
    try {
      const second = await session.chat.completions.create(chat("acme/chat-1:preferred")).withResponse();
      expect(second.response.headers.get("x-service-provider")).toBe("alpha");
      expect(second.response.headers.get("x-service-route")).toContain("affinity=alpha");
      const other = await client.chat.completions.create(chat("acme/chat-1:preferred")).withResponse();
      expect(other.response.headers.get("x-service-provider")).toBe("gamma");
      const byBody = await client.chat.completions
        .create({ ...chat("acme/chat-1:preferred"), metadata: { session_id: "body-session" } })
        .withResponse();
      expect(byBody.response.headers.get("x-service-provider")).toBe("gamma");
    } finally {
      await hub.request("/api/me/inference/preferences", { method: "PUT", token, json: {} });
    }
  });

  it("answers 502 when every candidate fails, and 429 with Retry-After when every one is at capacity", async () => {
    for (const fake of [alpha, beta, gamma]) fake.behavior = { kind: "status", status: 500 };
    const failed = await routerFetch("/v1/chat/completions", { token, json: chat("acme/chat-1") });
    expect(failed.status).toBe(502);
    expect(failed.headers.get("inference-id")).toMatch(/^inf_/);
    expect((await routerError(failed)).code).toBe("all_providers_failed");
    for (const fake of [alpha, beta, gamma]) {
      fake.behavior = { kind: "status", status: 429, headers: { "retry-after": "7" } };
    }
    const limited = await routerFetch("/v1/chat/completions", { token, json: chat("acme/chat-1") });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("7");
    expect((await routerError(limited)).type).toBe("rate_limit_error");
  });

  it("relays a provider's own 4xx answer without failing over", async () => {
    beta.behavior = {
      kind: "status",
      status: 400,
      body: JSON.stringify({ error: { message: "bad temperature" } }),
    };
    const response = await routerFetch("/v1/chat/completions", { token, json: chat("acme/chat-1:cheapest") });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: { message: "bad temperature" } });
    expect(response.headers.get("x-service-provider")).toBe("beta");
    expect(alpha.requests).toHaveLength(0);
  });
});

describe("answers that are not JSON", () => {
  it.each([
    ["an HTML page", "<html><body>502 Bad Gateway</body></html>", "text/html"],
    ["a body that claims to be JSON but is not", '{"id": "chatcmpl-1", "choices": [', "application/json"],
    ["a bare JSON string", '"ok"', "application/json"],
  ])(
    "treats a provider's 200 with %s as a failure: the next candidate answers",
    async (_label, body, type) => {
      beta.behavior = { kind: "status", status: 200, body, headers: { "content-type": type } };
      const answer = await client.chat.completions.create(chat("acme/chat-1:cheapest")).withResponse();
      expect(beta.requests).toHaveLength(1);
      expect(answer.response.headers.get("x-service-provider")).not.toBe("beta");
      expect(answer.data.choices[0]?.message.content).toBeTruthy();
    },
  );

  it("answers 502 with the OpenAI error object when the only candidate answers a 200 that is not JSON", async () => {
    beta.behavior = {
      kind: "status",
      status: 200,
      body: "<html>oops</html>",
      headers: { "content-type": "text/html" },
    };
    const response = await routerFetch("/v1/chat/completions", { token, json: chat("acme/chat-1:beta") });
    expect(response.status).toBe(502);
    expect(response.headers.get("inference-id")).toMatch(/^inf_/);
    const error = await routerError(response);
    expect(error.code).toBe("all_providers_failed");
    expect(error.message).toContain("beta: HTTP 200 with a body that is not JSON");
  });
});

describe("the error table", () => {
  it("400 for bad JSON, a bad model id, a bad billing mode and an unknown bill-to", async () => {
    const cases: Array<[RequestInit & { json?: unknown }, string]> = [
      [{ body: "{not json", headers: { "content-type": "application/json" } }, "invalid_json"],
      [{ json: [1, 2] }, "invalid_json"],
      [{ json: chat("no-owner") }, "invalid_model"],
      [{ json: chat("acme/chat-1:fastest:cheapest") }, "invalid_model"],
      [{ json: chat(`acme/${"x".repeat(260)}`) }, "invalid_model"],
      [
        { json: chat("acme/chat-1"), headers: { "x-service-inference-billing": "free" } },
        "invalid_billing_mode",
      ],
      [{ json: chat("acme/chat-1"), headers: { "x-service-bill-to": "no-such-org" } }, "invalid_bill_to"],
    ];
    for (const [init, code] of cases) {
      const response = await routerFetch("/v1/chat/completions", { token, ...init });
      expect(response.status, code).toBe(400);
      const error = await routerError(response);
      expect(error.code).toBe(code);
      expect(error.type).toBe("invalid_request_error");
      expect(response.headers.get("inference-id")).toMatch(/^inf_/);
    }
    await expect(client.chat.completions.create(chat("bad"))).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });

  it("401 invalid_api_key without a token, with a bad one, without inference:run, and for provider keys", async () => {
    const noScope = await hub.createToken("ann", ["--scopes", "repo:read"]);
    for (const bearer of [undefined, "hf_not-a-token", noScope, "sk-beta-hub-key"]) {
      const response = await routerFetch("/v1/chat/completions", {
        token: bearer,
        json: chat("acme/chat-1"),
      });
      expect(response.status).toBe(401);
      const error = await routerError(response);
      expect(error.code).toBe("invalid_api_key");
      if (bearer === "sk-beta-hub-key") expect(error.message).toMatch(/provider credential/);
    }
    await expect(clientFor("hf_nope").models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const fineGrained = await hub.createToken("ann", ["--scopes", "inference:run"]);
    const { response } = await clientFor(fineGrained)
      .chat.completions.create(chat("acme/chat-1:alpha"))
      .withResponse();
    expect(response.status).toBe(200);
  });

  it("404 for unknown models, a task the model does not serve, unknown providers, paths and methods", async () => {
    const cases: Array<[string, string, unknown, string]> = [
      ["POST", "/v1/chat/completions", chat("acme/missing"), "model_not_found"],
      ["POST", "/v1/chat/completions", chat("acme/embed-1"), "model_not_found"],
      ["POST", "/v1/embeddings", { model: "acme/chat-1", input: "x" }, "model_not_found"],
      ["POST", "/v1/chat/completions", chat("acme/chat-1:nobody"), "model_not_found"],
      ["POST", "/v1/completions", chat("acme/chat-1"), "unknown_url"],
      ["GET", "/v1/chat/completions", undefined, "unknown_url"],
      ["DELETE", "/v1/models", undefined, "unknown_url"],
    ];
    for (const [method, pathname, json, code] of cases) {
      const response = await routerFetch(pathname, { method, token, json });
      expect(response.status, `${method} ${pathname}`).toBe(404);
      expect((await routerError(response)).code).toBe(code);
    }
    const wrongTask = await routerFetch("/v1/chat/completions", { token, json: chat("acme/embed-1") });
    expect((await routerError(wrongTask)).message).toContain("/v1/embeddings");
  });

  it("413 for a body over the limit, answered while the body is still arriving", async () => {
    /** Sends `bytes` of a JSON body and never ends it: only a Router that checks as it reads can answer. */
    const answerBeforeEnd = (bytes: number, headers: Record<string, string> = {}) =>
      new Promise<{ status: number; code: string }>((resolve, reject) => {
        const request = http.request(`${hub.routerUrl}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
        });
        request.on("response", (response) => {
          let text = "";
          response.on("data", (chunk: Buffer) => (text += chunk.toString()));
          response.on("end", () => {
            resolve({ status: response.statusCode ?? 0, code: JSON.parse(text).error.code as string });
            request.destroy();
          });
        });
        request.on("error", reject);
        request.write('{"model":"acme/chat-1","pad":"');
        const chunk = Buffer.alloc(256 * 1024, "a");
        for (let sent = 0; sent < bytes; sent += chunk.length) request.write(chunk);
      });
    expect(await answerBeforeEnd(9 * 1024 * 1024)).toEqual({ status: 413, code: "request_too_large" });
    const declared = await answerBeforeEnd(1024 * 1024, { "content-length": String(9 * 1024 * 1024) });
    expect(declared).toEqual({ status: 413, code: "request_too_large" });
  });

  it("rejects streaming embeddings and a non-boolean stream", async () => {
    for (const stream of [true, "yes"]) {
      const response = await routerFetch("/v1/embeddings", {
        token,
        json: { model: "acme/embed-1", input: "x", stream },
      });
      expect(response.status).toBe(400);
    }
  });

  it("puts Inference-Id, no-store and CORS on errors, preflight and health", async () => {
    const preflight = await fetch(`${hub.routerUrl}/v1/chat/completions`, {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type, x-service-session-id",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("inference-id")).toMatch(/^inf_/);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("x-service-session-id");
    expect(preflight.headers.get("access-control-expose-headers")).toContain("X-Service-Provider");
    const error = await routerFetch("/v1/chat/completions", { json: chat("acme/chat-1") });
    expect(error.headers.get("access-control-expose-headers")).toContain("Inference-Id");
    expect(error.headers.get("cache-control")).toBe("no-store");
    expect(error.headers.get("x-content-type-options")).toBe("nosniff");
    const health = await fetch(`${hub.routerUrl}/health`);
    expect(health.status).toBe(204);
    expect(health.headers.get("inference-id")).toMatch(/^inf_/);
  });
});

describe("cooldown, the response limit and the request limit", () => {
  let cooling: TestHub;
  let coolingToken: string;

  beforeAll(async () => {
    cooling = await startHub({
      env: {
        HUB_PROVIDERS: providersFile(),
        ALPHA_KEY: "sk-alpha-hub-key",
        HUB_ROUTER_FAILURES_BEFORE_COOLDOWN: "2",
        HUB_ROUTER_COOLDOWN_MS: "60000",
        HUB_ROUTER_MAX_RESPONSE: "2048",
        HUB_ROUTER_BODY_LIMIT: "4096",
      },
    });
    await cooling.createUser("cal");
    coolingToken = await cooling.createToken("cal", ["--role", "write"]);
    expect((await cooling.cli(["credit", "add", "cal", "5"])).code).toBe(0);
  }, 60_000);

  afterAll(async () => {
    await cooling?.stop();
  });

  it("rests a provider that keeps failing: it moves behind healthy ones and shows as cooling down", async () => {
    beta.behavior = { kind: "status", status: 500 };
    const pinned = () =>
      fetch(`${cooling.routerUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${coolingToken}`, "content-type": "application/json" },
        body: JSON.stringify(chat("acme/chat-1:beta")),
      });
    expect((await pinned()).status).toBe(502);
    expect((await pinned()).status).toBe(502);
    const catalog = (await (await cooling.request("/api/inference/providers/beta/models")).json()) as {
      data: Array<{ providers: Array<{ status: string }> }>;
    };
    expect(catalog.data[0]?.providers[0]?.status).toBe("cooling_down");
    beta.behavior = { kind: "ok" };
    beta.requests.length = 0;
    const cheapest = await new OpenAI({
      apiKey: coolingToken,
      baseURL: `${cooling.routerUrl}/v1`,
      maxRetries: 0,
    }).chat.completions
      .create(chat("acme/chat-1:cheapest"))
      .withResponse();
    expect(cheapest.response.headers.get("x-service-provider")).toBe("alpha");
    expect(beta.requests).toHaveLength(0);
  });

  it("refuses a non-streaming response over the buffered limit as a failed candidate", async () => {
    gamma.behavior = { kind: "status", status: 200, body: JSON.stringify({ padding: "x".repeat(4096) }) };
    const response = await fetch(`${cooling.routerUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${coolingToken}`, "content-type": "application/json" },
      body: JSON.stringify(chat("acme/chat-1:gamma")),
    });
    expect(response.status).toBe(502);
    const error = ((await response.json()) as { error: { message: string } }).error;
    expect(error.message).toContain("larger than 2048 bytes");
  });

  /**
   * Sends an oversized body the way an upload does, still writing when the
   * answer comes, and reads what arrives: a client must always see the 413,
   * never a reset that makes SDKs send the whole body again.
   */
  function oversized(bytes: number, declareLength: boolean) {
    return new Promise<{ status: number; code: string; inferenceId: string | undefined }>(
      (resolve, reject) => {
        const chunk = Buffer.alloc(64 * 1024, "a");
        const prefix = Buffer.from('{"model":"acme/chat-1","pad":"');
        const request = http.request(`${cooling.routerUrl}/v1/chat/completions`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${coolingToken}`,
            "content-type": "application/json",
            ...(declareLength ? { "content-length": String(prefix.length + bytes) } : {}),
          },
        });
        request.on("response", (response) => {
          let text = "";
          response.on("data", (data: Buffer) => (text += data.toString()));
          response.on("end", () =>
            resolve({
              status: response.statusCode ?? 0,
              code: (JSON.parse(text) as { error: { code: string } }).error.code,
              inferenceId: response.headers["inference-id"] as string | undefined,
            }),
          );
          response.on("error", reject);
        });
        request.on("error", reject);
        request.write(prefix);
        let sent = 0;
        const writeMore = () => {
          while (sent < bytes) {
            const piece = chunk.subarray(0, Math.min(chunk.length, bytes - sent));
            sent += piece.length;
            if (!request.write(piece)) return void request.once("drain", writeMore);
          }
          request.end();
        };
        writeMore();
      },
    );
  }

  it("answers every oversized body with its 413, never a reset, while the client is still sending", async () => {
    for (let attempt = 0; attempt < 30; attempt++) {
      const answer = await oversized(2 * 1024 * 1024, attempt % 2 === 0);
      expect(answer, `attempt ${attempt}`).toMatchObject({ status: 413, code: "request_too_large" });
      expect(answer.inferenceId).toMatch(/^inf_/);
    }
  });

  it("gives the openai client its 413 as an APIError, which it does not retry", async () => {
    const openai = new OpenAI({ apiKey: coolingToken, baseURL: `${cooling.routerUrl}/v1`, maxRetries: 2 });
    for (let attempt = 0; attempt < 10; attempt++) {
      const failure = await openai.chat.completions
        .create({ model: "acme/chat-1", messages: [{ role: "user", content: "x".repeat(512 * 1024) }] })
        .then(
          () => null,
          (err: unknown) => err,
        );
      expect(failure).toBeInstanceOf(OpenAI.APIError);
      expect((failure as InstanceType<typeof OpenAI.APIError>).status).toBe(413);
      expect((failure as InstanceType<typeof OpenAI.APIError>).code).toBe("request_too_large");
    }
  });
});
