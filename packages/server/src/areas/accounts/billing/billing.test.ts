import type { AccountBilling, ApiError, PaymentInformation, UserOverview } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { FakeProvider, writeProvidersFile } from "../../../test-support/fake-provider.js";
import { readJson, startHub, type TestHub } from "../../../test-support/hub-process.js";

/** 12 input and 5 output tokens at $1,000 per million each. */
const CHAT_1 = 0.017;
/** 12 input tokens at $2,000 per million, output free. */
const CHAT_2 = 0.024;
const CARD_NUMBER = "4242424242424242";

describe.each(DIALECTS)("billing and payment information on %s", (dialect) => {
  const solo = new FakeProvider("solo");
  const duo = new FakeProvider("duo");
  let hub: TestHub;
  let ann: { handle: string; password: string };
  let write: string;
  let read: string;
  let fineGrained: string;
  let bounded: string;
  let bob: string;

  const billing = async (token = write) => {
    const response = await hub.request("/api/me/billing", { token });
    expect(response.status).toBe(200);
    return readJson<AccountBilling>(response);
  };
  const paymentInformation = async (token = write) => {
    const response = await hub.request("/api/me/billing/payment-information", { token });
    expect(response.status).toBe(200);
    return readJson<PaymentInformation>(response);
  };
  const chat = (model: string, token = write, headers: Record<string, string> = {}) =>
    fetch(`${hub.routerUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
    });
  /** The ledger row is written just after the response: waits until billing counts `requests`. */
  async function settled(requests: number, token = write): Promise<AccountBilling> {
    for (let i = 0; i < 60; i++) {
      const body = await billing(token);
      if (body.currentPeriod.requests === requests) return body;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`billing never counted ${requests} requests`);
  }
  const setLimit = async (usd: number | null) => {
    const response = await hub.request("/api/me/inference/preferences", {
      method: "PUT",
      token: write,
      json: { monthly_hard_limit_usd: usd },
    });
    expect(response.status).toBe(200);
  };

  beforeAll(async () => {
    await solo.start();
    await duo.start();
    const file = writeProvidersFile("account-billing", [
      {
        slug: "solo",
        baseUrl: solo.url,
        apiKey: "sk-solo-billing-key",
        models: [
          { id: "acme/chat-1", providerModel: "m1", task: "chat", pricing: { input: 1000, output: 1000 } },
        ],
      },
      {
        slug: "duo",
        baseUrl: duo.url,
        apiKey: "sk-duo-billing-key",
        models: [
          { id: "acme/chat-2", providerModel: "m2", task: "chat", pricing: { input: 2000, output: 0 } },
        ],
      },
    ]);
    hub = await startHub({ dialect, env: { HUB_PROVIDERS: file } });
    hub.secrets.add("sk-solo-billing-key");
    hub.secrets.add("sk-duo-billing-key");
    hub.secrets.add(CARD_NUMBER);
    ann = await hub.createUser("ann");
    await hub.createUser("bob");
    write = await hub.createToken("ann", ["--role", "write"]);
    read = await hub.createToken("ann", ["--role", "read"]);
    fineGrained = await hub.createToken("ann", ["--scopes", "inference:run,repo:read"]);
    bob = await hub.createToken("bob", ["--role", "read"]);
    expect((await hub.cli(["org", "create", "teamco", "--owner", "bob", "--plan", "team"])).code).toBe(0);
    expect((await hub.cli(["org", "add-member", "teamco", "ann", "--role", "contributor"])).code).toBe(0);
    expect((await hub.cli(["credit", "add", "teamco", "5"])).code).toBe(0);
    bounded = await hub.createToken("ann", ["--role", "write", "--org", "teamco"]);
    // Two hubs, fake providers and a dozen admin commands, each a process of its own.
  }, 180_000);

  afterAll(async () => {
    await hub?.stop();
    await solo.stop();
    await duo.stop();
  });

  it("shows an account that never spent: the free plan, no credit, no usage, no payment method", async () => {
    const body = await billing(bob);
    const month = new Date().toISOString().slice(0, 7);
    expect(body).toEqual({
      plan: "free",
      canPay: false,
      credit: { balanceUsd: 0, grantedUsd: 0, recentGrants: [] },
      currentPeriod: {
        month,
        start: `${month}-01T00:00:00.000Z`,
        end: expect.stringMatching(/^\d{4}-\d{2}-01T00:00:00\.000Z$/),
        requests: 0,
        inputTokens: 0,
        outputTokens: 0,
        spendUsd: 0,
        byProvider: [],
        byModel: [],
      },
      monthlyHardLimitUsd: null,
      monthlyHardLimitRemainingUsd: null,
      restricted: false,
      routedInference: { allowed: false, refusal: "insufficient_credit" },
    });
    expect(Date.parse(body.currentPeriod.end) - Date.parse(body.currentPeriod.start)).toBeGreaterThan(
      27 * 86_400_000,
    );
    expect(await paymentInformation(bob)).toEqual({ paymentMethod: null });
  });

  it("counts credit grants in the balance", async () => {
    expect((await hub.cli(["credit", "add", "ann", "1", "--note", "welcome credit"])).code).toBe(0);
    expect((await hub.cli(["credit", "add", "ann", "0.5"])).code).toBe(0);
    const body = await billing();
    expect(body.credit.balanceUsd).toBeCloseTo(1.5, 9);
    expect(body.credit.grantedUsd).toBeCloseTo(1.5, 9);
    expect(body.credit.recentGrants.map((g) => [g.amountUsd, g.note])).toEqual([
      [0.5, "added with hubd credit add"],
      [1, "welcome credit"],
    ]);
    expect(body.routedInference).toEqual({ allowed: true, refusal: null });
  });

  it("shows this month's usage and spend from real Router calls, by provider and model, and the limit left", async () => {
    await setLimit(0.1);
    for (const model of ["acme/chat-1", "acme/chat-1", "acme/chat-2"]) {
      expect((await chat(model)).status).toBe(200);
    }
    const body = await settled(3);
    const spend = 2 * CHAT_1 + CHAT_2;
    expect(body.currentPeriod).toMatchObject({ requests: 3, inputTokens: 36, outputTokens: 15 });
    expect(body.currentPeriod.spendUsd).toBeCloseTo(spend, 9);
    expect(body.currentPeriod.byProvider).toEqual([
      { provider: "duo", requests: 1, inputTokens: 12, outputTokens: 5, spendUsd: expect.closeTo(CHAT_2, 9) },
      {
        provider: "solo",
        requests: 2,
        inputTokens: 24,
        outputTokens: 10,
        spendUsd: expect.closeTo(2 * CHAT_1, 9),
      },
    ]);
    expect(body.currentPeriod.byModel.map((m) => [m.model, m.requests])).toEqual([
      ["acme/chat-1", 2],
      ["acme/chat-2", 1],
    ]);
    expect(body.credit.balanceUsd).toBeCloseTo(1.5 - spend, 9);
    expect(body.credit.grantedUsd).toBeCloseTo(1.5, 9);
    expect(body.monthlyHardLimitUsd).toBe(0.1);
    expect(body.monthlyHardLimitRemainingUsd).toBeCloseTo(0.1 - spend, 9);

    // Requests billed to an organization are the organization's spend, not the account's.
    const billed = await chat("acme/chat-1", write, { "x-service-bill-to": "teamco" });
    expect(billed.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await billing()).currentPeriod.requests).toBe(3);

    // Under the spend: nothing left, and the Router refuses exactly as billing says.
    await setLimit(0.05);
    const capped = await billing();
    expect(capped.monthlyHardLimitRemainingUsd).toBe(0);
    expect(capped.routedInference).toEqual({ allowed: false, refusal: "monthly_limit_reached" });
    const refused = await chat("acme/chat-1");
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("monthly_limit_reached");
    await setLimit(null);
    expect((await billing()).monthlyHardLimitRemainingUsd).toBeNull();
  });

  it("shows the operator's restriction", async () => {
    expect((await hub.cli(["credit", "restrict", "ann"])).code).toBe(0);
    const restricted = await billing();
    expect(restricted.restricted).toBe(true);
    expect(restricted.routedInference).toEqual({ allowed: false, refusal: "account_restricted" });
    expect((await hub.cli(["credit", "restrict", "ann", "--lift"])).code).toBe(0);
    expect((await billing()).restricted).toBe(false);
  });

  it("puts the account on a plan the operator chooses, shown as isPro on the public profile", async () => {
    const overview = async () => readJson<UserOverview>(await hub.request("/api/users/ann/overview"));
    expect((await overview()).isPro).toBe(false);
    const set = await hub.cli(["billing", "plan", "ann", "pro"]);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe("ann is on the pro plan\n");
    expect((await billing()).plan).toBe("pro");
    expect((await overview()).isPro).toBe(true);
    const unknown = await hub.cli(["billing", "plan", "ann", "platinum"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("free, pro");
    expect((await hub.cli(["billing", "plan", "nobody", "pro"])).code).toBe(1);
    expect((await hub.cli(["billing", "plan", "ann"])).code).toBe(2);
    expect((await hub.cli(["billing", "plan", "ann", "free"])).code).toBe(0);
    expect((await billing()).plan).toBe("free");
  });

  it("shows the payment method the operator recorded, masked, and never takes a card number", async () => {
    const base = ["billing", "payment-method", "set", "ann", "--brand", "visa", "--last4", "4242"];
    const recorded = await hub.cli([
      ...base,
      "--expires",
      "2035-07",
      "--holder",
      "Ann Example",
      "--email",
      "Billing@Example.com",
      "--country",
      "de",
    ]);
    expect(recorded.code, recorded.stderr).toBe(0);
    expect(recorded.stdout).toContain("visa •••• 4242");
    const shown = await paymentInformation();
    expect(shown).toEqual({
      paymentMethod: {
        type: "card",
        brand: "visa",
        last4: "4242",
        masked: "visa •••• 4242",
        expMonth: 7,
        expYear: 2035,
        expired: false,
        holder: "Ann Example",
        billingEmail: "billing@example.com",
        country: "DE",
        addedAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
    expect((await billing()).canPay).toBe(true);
    expect(await paymentInformation(read)).toEqual(shown);

    const refusals: Array<[string[], string]> = [
      [["--brand", "visa", "--last4", CARD_NUMBER, "--expires", "2035-07"], "card number"],
      [
        ["--brand", "visa", "--last4", "4242", "--expires", "2035-07", "--holder", "4242 4242 4242 4242"],
        "card number",
      ],
      [["--brand", "visa", "--last4", "4242-4242-4242-4242", "--expires", "2035-07"], "card number"],
      [["--brand", "paypal", "--last4", "4242", "--expires", "2035-07"], "brand"],
      [["--brand", "visa", "--last4", "42", "--expires", "2035-07"], "last four"],
      [["--brand", "visa", "--last4", "42a2", "--expires", "2035-07"], "last four"],
      [["--brand", "visa", "--last4", "4242", "--expires", "2020-01"], "expired"],
      [["--brand", "visa", "--last4", "4242", "--expires", "2035-13"], "YYYY-MM"],
      [["--brand", "visa", "--last4", "4242", "--expires", "2099-01"], "years"],
      [["--brand", "visa", "--last4", "4242", "--expires", "2035-07", "--email", "not-mail"], "email"],
      [["--brand", "visa", "--last4", "4242", "--expires", "2035-07", "--country", "DEU"], "ISO 3166"],
      [["--brand", "visa", "--last4", "4242", "--expires", "2035-07", "--holder", " "], "holder"],
    ];
    for (const [args, message] of refusals) {
      const result = await hub.cli(["billing", "payment-method", "set", "ann", ...args]);
      expect(result.code, args.join(" ")).toBe(1);
      expect(result.stderr, args.join(" ")).toContain(message);
      expect(result.stderr).not.toContain(CARD_NUMBER);
    }
    expect((await hub.cli(["billing", "payment-method", "set", "ann", "--brand", "visa"])).code).toBe(2);
    expect(await paymentInformation()).toEqual(shown);

    // A new card replaces the old one; removing it leaves none.
    const replaced = await hub.cli([
      "billing",
      "payment-method",
      "set",
      "ann",
      "--brand",
      "Mastercard",
      "--last4",
      "0005",
      "--expires",
      "2031-01",
    ]);
    expect(replaced.code, replaced.stderr).toBe(0);
    const now = await paymentInformation();
    expect(now.paymentMethod).toMatchObject({
      brand: "mastercard",
      last4: "0005",
      masked: "mastercard •••• 0005",
      holder: null,
      billingEmail: null,
      country: null,
      addedAt: shown.paymentMethod?.addedAt,
    });
    expect(JSON.stringify(now)).not.toContain("4242");
    expect((await hub.cli(["billing", "payment-method", "remove", "ann"])).code).toBe(0);
    expect(await paymentInformation()).toEqual({ paymentMethod: null });
    expect((await billing()).canPay).toBe(false);
    const again = await hub.cli(["billing", "payment-method", "remove", "ann"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("no payment method");
    // Every step is an admin command: a hubd process of its own.
  }, 180_000);

  it("needs a signed-in session or a role token; fine-grained and organization-bounded tokens get 403", async () => {
    for (const path of ["/api/me/billing", "/api/me/billing/payment-information"]) {
      expect((await hub.request(path)).status, path).toBe(401);
      expect((await hub.request(path, { token: "hf_not_a_token" })).status, path).toBe(401);
      for (const token of [read, write]) expect((await hub.request(path, { token })).status, path).toBe(200);
      const session = await hub.signIn("ann", ann.password);
      expect((await hub.request(path, { headers: { cookie: session } })).status, path).toBe(200);
      const refused = await hub.request(path, { token: fineGrained });
      expect(refused.status, path).toBe(403);
      expect((await readJson<ApiError>(refused)).code).toBe("insufficient_scope");
      const outside = await hub.request(path, { token: bounded });
      expect(outside.status, path).toBe(403);
      expect((await readJson<ApiError>(outside)).code).toBe("outside_token_bounds");
    }
  });

  it("documents both operations in the OpenAPI document", async () => {
    const doc = (await (await hub.request("/api/openapi.json")).json()) as {
      paths: Record<string, Record<string, { operationId: string; responses: object; security: unknown }>>;
    };
    const get = doc.paths["/api/me/billing"]?.get;
    expect(get?.operationId).toBe("account_billing_get");
    expect(JSON.stringify(get?.responses)).toContain("monthlyHardLimitRemainingUsd");
    const payment = doc.paths["/api/me/billing/payment-information"]?.get;
    expect(payment?.operationId).toBe("account_billing_payment_information_get");
    expect(JSON.stringify(payment?.responses)).toContain("last4");
    for (const operation of [get, payment]) {
      expect(Object.keys(operation?.responses ?? {})).toEqual(expect.arrayContaining(["200", "401", "403"]));
    }
  });
});
