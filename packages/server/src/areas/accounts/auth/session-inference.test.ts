import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionInferenceToken } from "@hub/api";
import { DIALECTS } from "../../../test-support/databases.js";
import { FakeProvider, writeProvidersFile } from "../../../test-support/fake-provider.js";
import { readJson, startHub, type TestHub } from "../../../test-support/hub-process.js";

/** The shortest life the hub allows a session's Router credential, so the test sees one expire. */
const TTL_SECONDS = 5;

/**
 * The browser session's short-lived Router credential (`POST /api/auth/session-inference-token`), against a
 * real hubd whose Router calls a fake provider: who may mint one, what it may do, and when it stops working.
 */
describe.each(DIALECTS)("a browser session's Router credential on %s", (dialect) => {
  const provider = new FakeProvider("alpha");
  let hub: TestHub;
  let password: string;
  let writeToken: string;

  beforeAll(async () => {
    await provider.start();
    const providers = writeProvidersFile("session-inference", [
      {
        slug: "alpha",
        baseUrl: provider.url,
        apiKey: "sk-alpha-session-inference",
        models: [
          {
            id: "acme/chat-1",
            providerModel: "upstream-chat",
            task: "chat",
            pricing: { input: 0, output: 0 },
          },
        ],
      },
    ]);
    hub = await startHub({
      dialect,
      env: { HUB_PROVIDERS: providers, HUB_SESSION_INFERENCE_TTL: String(TTL_SECONDS) },
    });
    hub.secrets.add("sk-alpha-session-inference");
    ({ password } = await hub.createUser("ann"));
    writeToken = await hub.createToken("ann", ["--role", "write"]);
  }, 60_000);

  afterAll(async () => {
    await hub?.stop();
    await provider.stop();
  });

  async function mint(cookies: string, headers: Record<string, string> = {}): Promise<Response> {
    return hub.request("/api/auth/session-inference-token", {
      method: "POST",
      headers: { cookie: cookies, ...headers },
    });
  }

  async function minted(cookies: string): Promise<SessionInferenceToken> {
    const response = await mint(cookies);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const body = await readJson<SessionInferenceToken>(response);
    hub.secrets.add(body.token);
    return body;
  }

  function chat(token: string, stream = false): Promise<Response> {
    return fetch(`${hub.routerUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "acme/chat-1", stream, messages: [{ role: "user", content: "hi" }] }),
    });
  }

  async function routerCode(response: Response): Promise<string> {
    return ((await response.json()) as { error: { code: string } }).error.code;
  }

  it("gives a signed-in browser a credential of a few minutes that the Router accepts, streaming included", async () => {
    const cookies = await hub.signIn("ann", password);
    const before = Date.now();
    const { token, expiresAt } = await minted(cookies);
    expect(token).toMatch(/^hubsi_[0-9A-Za-z]{43}$/);
    const life = Date.parse(expiresAt) - before;
    expect(life).toBeGreaterThan(0);
    expect(life).toBeLessThanOrEqual(TTL_SECONDS * 1000 + 1000);

    const answer = await chat(token);
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content).toBe("hello from alpha");

    const streamed = await chat(token, true);
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(await streamed.text()).toContain('"content":"t0 "');

    const models = await fetch(`${hub.routerUrl}/v1/models`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(models.status).toBe(200);
  });

  it("is refused by the Hub API for everything: it holds inference:run alone, and only the Router reads it", async () => {
    const cookies = await hub.signIn("ann", password);
    const { token } = await minted(cookies);
    for (const [method, path] of [
      ["GET", "/api/whoami-v2"],
      ["GET", "/api/me/inference/overview"],
      ["GET", "/api/me/tokens"],
      ["POST", "/api/repos/create"],
      ["POST", "/api/auth/session-inference-token"],
    ] as const) {
      const response = await hub.request(path, {
        method,
        token,
        ...(method === "POST" ? { json: { name: "sneaky", type: "model" } } : {}),
      });
      expect(response.status, `${method} ${path}`).toBe(401);
      expect(((await response.json()) as { code: string }).code).toBe("invalid_token");
    }
    // The session that minted it is unharmed.
    expect((await hub.request("/api/whoami-v2", { headers: { cookie: cookies } })).status).toBe(200);
  });

  it("is only for a browser session: a token or an anonymous caller cannot get one", async () => {
    const byToken = await hub.request("/api/auth/session-inference-token", {
      method: "POST",
      token: writeToken,
    });
    expect(byToken.status).toBe(403);
    expect(((await byToken.json()) as { code: string }).code).toBe("session_required");
    const anonymous = await hub.request("/api/auth/session-inference-token", { method: "POST" });
    expect(anonymous.status).toBe(401);
  });

  it("follows the request-forgery rules of every session write", async () => {
    const cookies = await hub.signIn("ann", password);
    const forged: Record<string, string>[] = [
      { "x-csrf-token": "" },
      { "x-csrf-token": "not-the-token" },
      { origin: "https://evil.example" },
      { "sec-fetch-site": "cross-site" },
    ];
    for (const headers of forged) {
      const response = await mint(cookies, headers);
      expect(response.status, JSON.stringify(headers)).toBe(403);
      expect(((await response.json()) as { code: string }).code).toBe("invalid_csrf_token");
    }
  });

  it("stops working on the Router when its session signs out, and sign-out ends only that session's", async () => {
    const leaving = await hub.signIn("ann", password);
    const staying = await hub.signIn("ann", password);
    const first = await minted(leaving);
    const second = await minted(leaving);
    const other = await minted(staying);
    expect((await chat(first.token)).status).toBe(200);

    const logout = await hub.request("/api/auth/logout", { method: "POST", headers: { cookie: leaving } });
    expect(logout.status).toBe(204);
    for (const { token } of [first, second]) {
      const refused = await chat(token);
      expect(refused.status).toBe(401);
      expect(await routerCode(refused)).toBe("invalid_api_key");
    }
    expect((await chat(other.token)).status).toBe(200);
    expect((await mint(leaving)).status).toBe(401);
  });

  it("stops working on the Router once it expires, while its session goes on", async () => {
    const cookies = await hub.signIn("ann", password);
    const { token, expiresAt } = await minted(cookies);
    expect((await chat(token)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, Date.parse(expiresAt) - Date.now() + 250));
    const refused = await chat(token);
    expect(refused.status).toBe(401);
    expect(await routerCode(refused)).toBe("invalid_api_key");
    // A fresh one is a POST away: what the playground does when its credential runs out.
    const fresh = await minted(cookies);
    expect((await chat(fresh.token)).status).toBe(200);
  });
});
