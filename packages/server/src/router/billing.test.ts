import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InferenceOverview, InferencePreferences, ProviderKeyList } from "@hub/api";
import { DIALECTS } from "../test-support/databases.js";
import { FakeProvider, writeProvidersFile } from "../test-support/fake-provider.js";
import { readJson, startHub, type TestHub } from "../test-support/hub-process.js";

/** 12 input and 5 output tokens at $1,000 per million each: $0.017 a request. */
const COST = 0.017;

describe.each(DIALECTS)("Router billing and its control plane on %s", (dialect) => {
  const solo = new FakeProvider("solo");
  let hub: TestHub;
  const tokens: Record<string, string> = {};

  const router = (token: string, headers: Record<string, string> = {}) =>
    fetch(`${hub.routerUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
      body: JSON.stringify({ model: "acme/chat-1", messages: [{ role: "user", content: "hi" }] }),
    });

  async function codeOf(response: Response): Promise<string> {
    return ((await response.json()) as { error: { code: string } }).error.code;
  }

  /**
   * The owner's inference overview. The ledger row of a call is written in a batch just after its response,
   * so this waits until two reads agree, or, given `requests`, until the total reaches it (a loaded machine
   * can take longer to write a batch than two reads take).
   */
  async function overview(token: string, owner = "/api/me", requests?: number): Promise<InferenceOverview> {
    let last: InferenceOverview | null = null;
    for (let i = 0; i < 100; i++) {
      const response = await hub.request(`${owner}/inference/overview`, { token });
      expect(response.status).toBe(200);
      last = await readJson<InferenceOverview>(response);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const again = await readJson<InferenceOverview>(
        await hub.request(`${owner}/inference/overview`, { token }),
      );
      if (
        requests !== undefined
          ? again.totals.requests >= requests
          : again.totals.requests === last.totals.requests
      )
        return again;
    }
    return last as InferenceOverview;
  }

  beforeAll(async () => {
    await solo.start();
    const file = writeProvidersFile("billing", [
      {
        slug: "solo",
        baseUrl: solo.url,
        apiKey: "sk-solo-hub-key",
        models: [
          {
            id: "acme/chat-1",
            providerModel: "m",
            task: "chat",
            pricing: { input: 1000, output: 1000 },
          },
        ],
      },
    ]);
    hub = await startHub({ dialect, env: { HUB_PROVIDERS: file } });
    hub.secrets.add("sk-solo-hub-key");
    // The accounts are made side by side (their admin commands take turns in this process).
    await Promise.all(
      ["ann", "bob", "carl", "dan", "rita", "olga"].map(async (name) => {
        await hub.createUser(name);
        tokens[name] = await hub.createToken(name, ["--role", "write"]);
      }),
    );
    expect((await hub.cli(["org", "create", "teamco", "--owner", "ann", "--plan", "team"])).code).toBe(0);
    expect((await hub.cli(["org", "create", "freeco", "--owner", "ann"])).code).toBe(0);
    expect((await hub.cli(["org", "add-member", "teamco", "rita", "--role", "read"])).code).toBe(0);
    expect((await hub.cli(["org", "add-member", "teamco", "bob", "--role", "contributor"])).code).toBe(0);
    const grants: Array<[string, string]> = [
      ["ann", "0.03"],
      ["carl", "1"],
      ["dan", "1"],
      ["teamco", "1"],
    ];
    for (const [handle, usd] of grants) {
      expect((await hub.cli(["credit", "add", handle, usd])).code).toBe(0);
    }
    // About twenty admin commands, each a process: beside the suite's other files this can pass a minute.
  }, 180_000);

  afterAll(async () => {
    await hub?.stop();
    await solo.stop();
  });

  it("charges routed requests from the token usage and refuses with 402 once the credit is gone", async () => {
    const token = tokens.ann ?? "";
    expect((await router(token)).status).toBe(200);
    expect((await router(token)).status).toBe(200);
    const spent = await overview(token, "/api/me", 2);
    expect(spent.totals.requests).toBe(2);
    expect(spent.totals.cost_usd).toBeCloseTo(2 * COST, 9);
    expect(spent.balance_usd).toBeCloseTo(0.03 - 2 * COST, 9);
    expect(spent.by_model).toEqual([
      {
        model: "acme/chat-1",
        requests: 2,
        input_tokens: 24,
        output_tokens: 10,
        cost_usd: spent.totals.cost_usd,
      },
    ]);
    expect(spent.by_provider.map((p) => p.provider)).toEqual(["solo"]);
    expect(spent.by_day).toHaveLength(1);
    const refused = await router(token);
    expect(refused.status).toBe(402);
    expect(await codeOf(refused)).toBe("insufficient_credit");
    expect(refused.headers.get("inference-id")).toMatch(/^inf_/);
    expect(solo.requests.every((r) => r.authorization === "Bearer sk-solo-hub-key")).toBe(true);
  });

  it("uses a saved provider key under auto and byok, charging nothing, and shows it only masked", async () => {
    const token = tokens.ann ?? "";
    const key = "sk-ann-own-provider-key";
    hub.secrets.add(key);
    const saved = await hub.request("/api/me/inference/provider-keys/solo", {
      method: "PUT",
      token,
      json: { key },
    });
    expect(saved.status).toBe(200);
    const savedText = await saved.text();
    expect(savedText).not.toContain(key);
    expect(JSON.parse(savedText)).toMatchObject({ provider: "solo", key_hint: "…-key" });
    const listed = await readJson<ProviderKeyList>(
      await hub.request("/api/me/inference/provider-keys", { token }),
    );
    expect(listed.keys.map((k) => [k.provider, k.key_hint])).toEqual([["solo", "…-key"]]);
    expect(JSON.stringify(listed)).not.toContain(key);

    solo.requests.length = 0;
    const auto = await router(token);
    expect(auto.status).toBe(200);
    expect(auto.headers.get("x-service-route")).toContain("billing=byok");
    const byok = await router(token, { "x-service-inference-billing": "byok" });
    expect(byok.status).toBe(200);
    expect(solo.requests.map((r) => r.authorization)).toEqual([`Bearer ${key}`, `Bearer ${key}`]);
    const after = await overview(token, "/api/me", 4);
    expect(after.totals.requests).toBe(4);
    expect(after.totals.cost_usd).toBeCloseTo(2 * COST, 9);
    const routed = await router(token, { "x-service-inference-billing": "routed" });
    expect(routed.status).toBe(402);

    expect(
      (await hub.request("/api/me/inference/provider-keys/solo", { method: "DELETE", token })).status,
    ).toBe(204);
    expect(
      (await hub.request("/api/me/inference/provider-keys/solo", { method: "DELETE", token })).status,
    ).toBe(404);
    const unknown = await hub.request("/api/me/inference/provider-keys/nobody", {
      method: "PUT",
      token,
      json: { key },
    });
    expect(unknown.status).toBe(404);
  });

  it("answers 409 provider_key_missing for byok without a saved key", async () => {
    const response = await router(tokens.bob ?? "", { "x-service-inference-billing": "byok" });
    expect(response.status).toBe(409);
    expect(await codeOf(response)).toBe("provider_key_missing");
  });

  it("stops routed spend at the monthly hard limit", async () => {
    const token = tokens.carl ?? "";
    const put = await hub.request("/api/me/inference/preferences", {
      method: "PUT",
      token,
      json: { monthly_hard_limit_usd: 0.01 },
    });
    expect(await readJson<InferencePreferences>(put)).toEqual({
      provider_order: [],
      disabled_providers: [],
      default_policy: null,
      monthly_hard_limit_usd: 0.01,
    });
    expect((await router(token)).status).toBe(200);
    await overview(token, "/api/me", 1);
    const refused = await router(token);
    expect(refused.status).toBe(402);
    expect(await codeOf(refused)).toBe("monthly_limit_reached");
  });

  it("refuses a restricted owner with 402 until the operator lifts it", async () => {
    const token = tokens.dan ?? "";
    expect((await hub.cli(["credit", "restrict", "dan"])).code).toBe(0);
    const refused = await router(token);
    expect(refused.status).toBe(402);
    expect(await codeOf(refused)).toBe("account_restricted");
    expect((await hub.cli(["credit", "restrict", "dan", "--lift"])).code).toBe(0);
    expect((await router(token)).status).toBe(200);
  });

  it("bills a team organization with X-Service-Bill-To, for members allowed to spend", async () => {
    const bobBefore = await overview(tokens.bob ?? "");
    const billed = await router(tokens.bob ?? "", { "x-service-bill-to": "teamco" });
    expect(billed.status).toBe(200);
    const org = await overview(tokens.ann ?? "", "/api/organizations/teamco", 1);
    expect(org.totals.requests).toBe(1);
    expect(org.balance_usd).toBeCloseTo(1 - COST, 9);
    expect((await overview(tokens.bob ?? "")).totals.requests).toBe(bobBefore.totals.requests);

    const reader = await router(tokens.rita ?? "", { "x-service-bill-to": "teamco" });
    expect(reader.status).toBe(403);
    const outsider = await router(tokens.olga ?? "", { "x-service-bill-to": "teamco" });
    expect(outsider.status).toBe(403);
    const freePlan = await router(tokens.ann ?? "", { "x-service-bill-to": "freeco" });
    expect(freePlan.status).toBe(403);
    expect(await codeOf(freePlan)).toBe("bill_to_not_allowed");

    const bounded = await hub.createToken("ann", ["--role", "write", "--org", "teamco"]);
    expect((await router(bounded)).status).toBe(200);
    expect((await overview(tokens.ann ?? "", "/api/organizations/teamco", 2)).totals.requests).toBe(2);
  });

  it("serves organization settings to its admins only, with the same operations as /api/me", async () => {
    const path = "/api/organizations/teamco/inference/preferences";
    const put = await hub.request(path, {
      method: "PUT",
      token: tokens.ann,
      json: { default_policy: "cheapest", provider_order: ["solo"] },
    });
    expect(put.status).toBe(200);
    expect(
      (await readJson<InferencePreferences>(await hub.request(path, { token: tokens.ann }))).default_policy,
    ).toBe("cheapest");
    for (const member of ["bob", "rita", "olga"]) {
      expect((await hub.request(path, { token: tokens[member] })).status, member).toBe(403);
    }
    const fineGrained = await hub.createToken("ann", ["--scopes", "inference:run"]);
    const scoped = await hub.request(path, { token: fineGrained });
    expect(scoped.status).toBe(403);
    expect(((await scoped.json()) as { code: string }).code).toBe("insufficient_scope");
    const readToken = await hub.createToken("ann", ["--role", "read"]);
    expect((await hub.request(path, { token: readToken })).status).toBe(200);
    expect((await hub.request(path, { method: "PUT", token: readToken, json: {} })).status).toBe(403);
    expect(
      (await hub.request("/api/organizations/nobody/inference/preferences", { token: tokens.ann })).status,
    ).toBe(404);
    const badProvider = await hub.request(path, {
      method: "PUT",
      token: tokens.ann,
      json: { provider_order: ["x"] },
    });
    expect(badProvider.status).toBe(400);
    expect((await hub.request("/api/me/inference/preferences")).status).toBe(401);

    const openapi = (await (await hub.request("/api/openapi.json")).json()) as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    expect(openapi.paths["/api/me/inference/preferences"]?.put?.operationId).toBe(
      "account_inference_preferences_put",
    );
    expect(openapi.paths["/api/organizations/{handle}/inference/preferences"]?.put?.operationId).toBe(
      "organization_inference_preferences_put",
    );
  });

  it("lists the catalog on the Hub API with prices and live status", async () => {
    const response = await hub.request("/api/inference/models");
    const catalog = (await response.json()) as {
      data: Array<{ id: string; providers: Array<{ provider: string; pricing: unknown; status: string }> }>;
    };
    expect(catalog.data.map((m) => m.id)).toEqual(["acme/chat-1"]);
    expect(catalog.data[0]?.providers[0]).toMatchObject({
      provider: "solo",
      pricing: { input: 1000, output: 1000 },
      status: "live",
    });
  });

  it("rejects unusable credit commands with a clear message", async () => {
    const negative = await hub.cli(["credit", "add", "ann", "-5"]);
    expect(negative.code).not.toBe(0);
    const nobody = await hub.cli(["credit", "add", "nobody", "5"]);
    expect(nobody.code).not.toBe(0);
    expect(nobody.stderr).toContain("nobody");
  });

  it("keeps working for the official client with bill-to as a default header", async () => {
    const client = new OpenAI({
      apiKey: tokens.bob,
      baseURL: `${hub.routerUrl}/v1`,
      maxRetries: 0,
      defaultHeaders: { "X-Service-Bill-To": "teamco" },
    });
    const completion = await client.chat.completions.create({
      model: "acme/chat-1",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(completion.choices[0]?.message.content).toBe("hello from solo");
  });
});
