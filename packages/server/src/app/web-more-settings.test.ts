import type {
  ContentPreferences,
  GatedRepositoryList,
  InferenceOverview,
  InferencePreferences,
  ProviderKeyList,
  RecommendationSuppressionList,
  WebhookDeliveryDetail,
  WebhookDeliveryList,
  WebhookList,
} from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeProvider, writeProvidersFile } from "../test-support/fake-provider.js";
import { readJson, startHub, type TestHub } from "../test-support/hub-process.js";
import { startInProcessHub, type InProcessHub } from "../test-support/hub-inprocess.js";
import { WebhookReceiver } from "../test-support/webhook-receiver.js";
import { commitFiles, postForm, readPage } from "../test-support/web.js";

/** Text as Svelte writes it into an element. */
const escaped = (text: string) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;");

/** Polls until the check passes or the time is up; the last failure is rethrown. */
async function eventually<T>(check: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Page requests and form posts with a browser's session cookie, on either kind of test hub. */
function browserOf(hub: InProcessHub | TestHub, cookies: Map<string, string>) {
  return {
    page: (user: string, pathname: string) => readPage(hub, pathname, { cookie: cookies.get(user) }),
    text: async (user: string, pathname: string) => {
      const response = await readPage(hub, pathname, { cookie: cookies.get(user) });
      expect(response.status, pathname).toBe(200);
      return response.text();
    },
    action: (user: string, pathname: string, fields: [string, string][] | Record<string, string>) =>
      postForm(hub, pathname, fields, { cookie: cookies.get(user) }),
    api: async <T>(user: string, pathname: string) => {
      const response = await hub.request(pathname, { headers: { cookie: cookies.get(user) ?? "" } });
      expect(response.status, pathname).toBe(200);
      return readJson<T>(response);
    },
  };
}

/** The pages beside the account settings: webhooks, inference, billing, gated repositories, content. */
describe("the more settings pages", () => {
  let hub: InProcessHub;
  const receiver = new WebhookReceiver();
  const provider = new FakeProvider("solo");
  const cookies = new Map<string, string>();
  const tokens = new Map<string, string>();
  const b = () => browserOf(hub, cookies);

  beforeAll(async () => {
    await receiver.start();
    await provider.start();
    const providers = writeProvidersFile("web-more-settings", [
      {
        slug: "solo",
        baseUrl: provider.url,
        apiKey: "sk-solo-operator-key",
        models: [{ id: "acme/chat", providerModel: "m", task: "chat", pricing: { input: 1, output: 1 } }],
      },
    ]);
    hub = await startInProcessHub({
      env: {
        HUB_WEBHOOKS_ALLOW_PRIVATE: "1",
        HUB_WEBHOOKS_RETRY_BASE_MS: "50",
        HUB_PROVIDERS: providers,
      },
    });
    hub.secrets.add("sk-solo-operator-key");
    for (const name of ["alice", "bob"]) {
      const { password } = await hub.createUser(name);
      cookies.set(name, await hub.signIn(name, password));
      tokens.set(name, await hub.createToken(name));
    }
  });
  afterAll(async () => {
    await hub?.stop();
    await receiver.stop();
    await provider.stop();
  });

  const createRepo = async (repoId: string) => {
    const response = await hub.request("/api/repos", {
      method: "POST",
      token: tokens.get("alice"),
      json: { repo_id: repoId },
    });
    expect(response.status).toBe(201);
  };
  const commit = async (repoId: string, text: string) => {
    await commitFiles(hub, tokens.get("alice"), repoId, { "README.md": text }, { summary: "edit the card" });
  };

  it("opens the profile at /settings and sends visitors who are not signed in to the sign-in page", async () => {
    const settings = await b().page("alice", "/settings");
    expect(settings.url).toBe(`${hub.url}/settings/profile`);
    for (const name of ["webhooks", "inference", "billing", "gated", "content"]) {
      const response = await readPage(hub, `/settings/${name}`, { redirect: "manual" });
      expect(response.status).toBe(303);
      expect(response.headers.get("location")).toBe(`/login?next=%2Fsettings%2F${name}`);
      const page = await b().text("alice", `/settings/${name}`);
      expect(page).toContain(`href="/settings/${name}" aria-current="page"`);
    }
  });

  it("creates a webhook whose secret is shown once, lists its deliveries and redelivers one", async () => {
    await createRepo("alice/hooked");
    const created = await b().action("alice", "/settings/webhooks?/create", [
      ["url", receiver.url],
      ["watched", "model alice/hooked\nuser bob"],
      ["domains", "repo.content"],
      ["description", "CI <builds>"],
    ]);
    const createdPage = await created.text();
    expect(created.status, createdPage.slice(0, 500)).toBe(200);
    const secret = /data-testid="webhook-secret"[^>]*>([^<]+)</.exec(createdPage)?.[1] ?? "";
    expect(secret).toMatch(/^whsec_/);
    hub.secrets.add(secret);
    receiver.verifyWith(secret);

    const [hook, ...others] = (await b().api<WebhookList>("alice", "/api/me/webhooks")).webhooks;
    expect(others).toEqual([]);
    expect(hook).toMatchObject({
      url: receiver.url,
      watched: [
        { type: "model", name: "alice/hooked" },
        { type: "user", name: "bob" },
      ],
      domains: ["repo.content"],
      description: "CI <builds>",
      disabled: false,
    });
    const id = hook?.id ?? "";
    const list = await b().text("alice", "/settings/webhooks");
    expect(list).toContain(`href="/settings/webhooks/${id}"`);
    expect(list).toContain(escaped("CI <builds>"));
    expect(list).not.toContain(secret);

    await commit("alice/hooked", "# hooked\n");
    await receiver.waitFor(1);
    expect(receiver.received[0]).toMatchObject({ verified: true, status: 204 });
    const delivery = await eventually(async () => {
      const { deliveries } = await b().api<WebhookDeliveryList>("alice", `/api/me/webhooks/${id}/deliveries`);
      expect(deliveries[0]?.status).toBe("delivered");
      return deliveries[0];
    });
    const detail = await b().text("alice", `/settings/webhooks/${id}`);
    expect(detail).not.toContain(secret);
    const row = /<tr data-testid="delivery">([\s\S]*?)<\/tr>/.exec(detail)?.[1] ?? "";
    expect(row).toContain("repo.content");
    expect(row).toContain("delivered");
    expect(row).toContain("204");
    expect(row).toContain(delivery?.last_attempt?.attempted_at.slice(0, 19).replace("T", " "));

    const redelivered = await b().action("alice", `/settings/webhooks/${id}?/redeliver`, {
      delivery_id: delivery?.id ?? "",
    });
    expect(redelivered.status).toBe(200);
    expect(await redelivered.text()).toContain("is sent again");
    await receiver.waitFor(2);
    expect(receiver.received[1]).toMatchObject({ id: delivery?.id, verified: true });
    const receipts = await eventually(async () => {
      const found = await b().api<WebhookDeliveryDetail>(
        "alice",
        `/api/me/webhooks/${id}/deliveries/${delivery?.id}`,
      );
      expect(found.receipts).toHaveLength(2);
      return found.receipts;
    });
    expect(receipts.map((r) => [r.redelivery, r.status_code])).toEqual([
      [false, 204],
      [true, 204],
    ]);
    expect(await b().text("alice", `/settings/webhooks/${id}`)).toContain("(redelivery)");

    // Edit, switch off and on, and delete, each through the page.
    const edited = await b().action("alice", `/settings/webhooks/${id}?/update`, [
      ["url", receiver.url],
      ["watched", "alice/hooked"],
      ["domains", "repo"],
      ["description", "every event"],
    ]);
    expect(edited.status).toBe(200);
    const bad = await b().action("alice", `/settings/webhooks/${id}?/update`, [
      ["url", "ftp://example.com/hook"],
      ["watched", "alice/hooked"],
      ["domains", "repo"],
    ]);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/role="alert"[^>]*>[^<]*http/);
    expect(await b().action("alice", `/settings/webhooks/${id}?/disable`, {})).toHaveProperty("status", 200);
    const after = (await b().api<WebhookList>("alice", "/api/me/webhooks")).webhooks[0];
    expect(after).toMatchObject({
      watched: [{ type: "model", name: "alice/hooked" }],
      domains: ["repo"],
      description: "every event",
      disabled: true,
    });
    const deleted = await b().action("alice", `/settings/webhooks/${id}?/delete`, {});
    expect(deleted.status).toBe(303);
    expect(deleted.headers.get("location")).toBe("/settings/webhooks");
    expect((await b().api<WebhookList>("alice", "/api/me/webhooks")).webhooks).toEqual([]);
  });

  it("saves a provider key that the API keeps but the page never shows, and the preferences and limit", async () => {
    const key = "sk-alice-own-provider-key-7xq2";
    hub.secrets.add(key);
    const saved = await b().action("alice", "/settings/inference?/saveKey", { provider: "solo", key });
    const savedPage = await saved.text();
    expect(saved.status).toBe(200);
    expect(savedPage).toContain("…7xq2");
    expect(savedPage).not.toContain(key);
    const { keys } = await b().api<ProviderKeyList>("alice", "/api/me/inference/provider-keys");
    expect(keys.map((k) => [k.provider, k.key_hint])).toEqual([["solo", "…7xq2"]]);
    expect(await b().text("alice", "/settings/inference")).not.toContain(key);

    const prefs = await b().action("alice", "/settings/inference?/preferences", {
      default_policy: "cheapest",
      "position:solo": "1",
    });
    expect(prefs.status).toBe(200);
    const limit = await b().action("alice", "/settings/inference?/limit", { monthly_hard_limit_usd: "12.5" });
    expect(limit.status).toBe(200);
    expect(await b().api<InferencePreferences>("alice", "/api/me/inference/preferences")).toEqual({
      provider_order: ["solo"],
      disabled_providers: [],
      default_policy: "cheapest",
      monthly_hard_limit_usd: 12.5,
    });
    const refused = await b().action("alice", "/settings/inference?/saveKey", { provider: "nobody", key });
    expect(refused.status).toBe(404);
    expect(await refused.text()).not.toContain(key);

    const removed = await b().action("alice", "/settings/inference?/deleteKey", { provider: "solo" });
    expect(removed.status).toBe(200);
    expect((await b().api<ProviderKeyList>("alice", "/api/me/inference/provider-keys")).keys).toEqual([]);
  });

  it("shows the plan, credit and card on file the operator recorded", async () => {
    const before = await b().text("bob", "/settings/billing");
    expect(before).toContain("No payment method is on file.");
    expect(before).toMatch(/data-testid="plan"[^>]*>Free</);
    expect((await hub.cli(["credit", "add", "bob", "2.5", "--note", "welcome"])).code).toBe(0);
    expect((await hub.cli(["billing", "plan", "bob", "pro"])).code).toBe(0);
    const set = await hub.cli([
      "billing",
      "payment-method",
      "set",
      "bob",
      "--brand",
      "visa",
      "--last4",
      "4242",
      "--expires",
      `${new Date().getUTCFullYear() + 2}-07`,
    ]);
    expect(set.code, set.stderr).toBe(0);
    const page = await b().text("bob", "/settings/billing");
    expect(page).toMatch(/data-testid="plan"[^>]*>Pro</);
    expect(page).toMatch(/data-testid="balance"[^>]*>\$2\.50</);
    expect(page).toContain("welcome");
    expect(page).toMatch(/data-testid="card"[^>]*>visa •••• 4242</);
  });

  it("lists gated requests on both sides: mine with their status, and those waiting on my repositories", async () => {
    await createRepo("alice/gated");
    const gate = await hub.request("/api/models/alice/gated/settings", {
      method: "PUT",
      token: tokens.get("alice"),
      json: { gated: "manual" },
    });
    expect(gate.status).toBe(200);
    const asked = await hub.request("/api/models/alice/gated/ask-access", {
      method: "POST",
      token: tokens.get("bob"),
      json: {},
    });
    expect(asked.status).toBe(201);

    const bobs = await b().text("bob", "/settings/gated");
    const mine = /<li[^>]*data-testid="my-request"[^>]*>([\s\S]*?)<\/li>/.exec(bobs)?.[1] ?? "";
    expect(mine).toContain('href="/alice/gated"');
    expect(mine).toContain("pending");
    expect(bobs).toContain("None of your repositories is gated.");

    const alices = await b().text("alice", "/settings/gated");
    const theirs = /<li[^>]*data-testid="gated-repo"[^>]*>([\s\S]*?)<\/li>/.exec(alices)?.[1] ?? "";
    expect(theirs).toContain("alice/gated");
    expect(theirs).toContain("1 pending");
    expect(theirs).toContain("bob (");
    expect(theirs).toContain('href="/alice/gated/settings"');
    expect(alices).toContain("You have not asked for access to any gated repository.");

    const withdrawn = await b().action("bob", "/settings/gated?/withdraw", {
      kind: "model",
      repo: "alice/gated",
    });
    expect(withdrawn.status).toBe(200);
    expect((await b().api<GatedRepositoryList>("bob", "/api/me/gated-repositories")).requests).toEqual([]);
    expect(await b().text("alice", "/settings/gated")).toContain("0 pending");
  });

  it("saves content preferences and recommendation suppressions, and names what the API refuses", async () => {
    const saved = await b().action("alice", "/settings/content?/save", [
      ["hiddenTags", "license:other, text-to-image"],
      ["languages", "en pt-BR"],
      ["contentFilters", "not-for-all-audiences"],
      ["contentFilters", "without-license"],
    ]);
    expect(saved.status).toBe(200);
    expect(await b().api<ContentPreferences>("alice", "/api/me/content-preferences")).toMatchObject({
      hiddenTags: ["license:other", "text-to-image"],
      languages: ["en", "pt-BR"],
      contentFilters: ["not-for-all-audiences", "without-license"],
    });
    const page = await b().text("alice", "/settings/content");
    expect(page).toContain("license:other text-to-image");
    expect(page).toMatch(/value="without-license" checked/);

    const refused = await b().action("alice", "/settings/content?/save", { languages: "not a language!" });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('value="not a language!"');

    const suppressed = await b().action("alice", "/settings/content?/suppress", {
      kind: "tag",
      value: "text-to-image",
    });
    expect(suppressed.status).toBe(200);
    const { suppressions } = await b().api<RecommendationSuppressionList>(
      "alice",
      "/api/me/recommendation-suppressions",
    );
    expect(suppressions.map((s) => [s.kind, s.value])).toEqual([["tag", "text-to-image"]]);
    const unsuppressed = await b().action("alice", "/settings/content?/unsuppress", {
      suppression_id: suppressions[0]?.id ?? "",
      value: "text-to-image",
    });
    expect(unsuppressed.status).toBe(200);
    expect(
      (await b().api<RecommendationSuppressionList>("alice", "/api/me/recommendation-suppressions"))
        .suppressions,
    ).toEqual([]);
  });
});

/**
 * The inference page against a real hubd, since the Router needs its own listener: a key saved through the
 * page is the one the Router sends the provider, and the month's ledger rows become the chart's bars.
 */
describe("the inference settings page with the Router", () => {
  const provider = new FakeProvider("solo");
  let hub: TestHub;
  let token: string;
  const cookies = new Map<string, string>();
  const b = () => browserOf(hub, cookies);
  const chat = (headers: Record<string, string> = {}) =>
    fetch(`${hub.routerUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
      body: JSON.stringify({ model: "acme/chat", messages: [{ role: "user", content: "hi" }] }),
    });

  beforeAll(async () => {
    await provider.start();
    const providers = writeProvidersFile("web-more-router", [
      {
        slug: "solo",
        baseUrl: provider.url,
        apiKey: "sk-solo-operator-key",
        models: [
          { id: "acme/chat", providerModel: "m", task: "chat", pricing: { input: 1000, output: 1000 } },
        ],
      },
    ]);
    hub = await startHub({ env: { HUB_PROVIDERS: providers } });
    hub.secrets.add("sk-solo-operator-key");
    const { password } = await hub.createUser("carol");
    cookies.set("carol", await hub.signIn("carol", password));
    token = await hub.createToken("carol", ["--role", "write"]);
    expect((await hub.cli(["credit", "add", "carol", "5"])).code).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await hub?.stop();
    await provider.stop();
  });

  it("routes with the key saved through the page and draws the month's requests as bars", async () => {
    const empty = await b().text("carol", "/settings/inference");
    expect(empty).not.toContain('data-testid="usage-bar"');
    expect(empty).toContain("No usage this month.");

    for (let i = 0; i < 3; i++) expect((await chat()).status).toBe(200);
    expect(provider.requests.map((r) => r.authorization)).toEqual(
      Array(3).fill("Bearer sk-solo-operator-key"),
    );
    const key = "sk-carol-own-key-for-solo";
    hub.secrets.add(key);
    const saved = await b().action("carol", "/settings/inference?/saveKey", { provider: "solo", key });
    expect(saved.status).toBe(200);
    expect(await saved.text()).not.toContain(key);
    const byok = await chat({ "x-service-inference-billing": "byok" });
    expect(byok.status).toBe(200);
    expect(provider.requests.at(-1)?.authorization).toBe(`Bearer ${key}`);

    const overview = await eventually(async () => {
      const body = await b().api<InferenceOverview>("carol", "/api/me/inference/overview");
      expect(body.totals.requests).toBe(4);
      return body;
    });
    const today = new Date().toISOString().slice(0, 10);
    expect(overview.by_day.map((d) => [d.day.slice(0, 10), d.requests])).toEqual([[today, 4]]);

    const page = await b().text("carol", "/settings/inference");
    expect(page).not.toContain(key);
    const bars = [...page.matchAll(/<rect[^>]*data-testid="usage-bar"[^>]*>/g)].map((m) => m[0]);
    expect(bars).toHaveLength(1);
    expect(bars[0]).toContain(`data-day="${today}"`);
    expect(page).toContain(`<title>${today}: 4</title>`);
    expect(page).toMatch(new RegExp(`<td[^>]*>${today}</td><td[^>]*>4</td>`));
    expect(page).toMatch(/<svg[^>]*role="img"[^>]*aria-label="Requests by day: 1 of \d+ days with usage/);

    // Spend: three routed requests at $1,000 per million for 12 + 5 tokens each; the byok one is free.
    const spend = await b().text("carol", `/settings/inference?metric=spend&month=${today.slice(0, 7)}`);
    expect(spend).toContain(`<title>${today}: $0.051</title>`);
  });
});
