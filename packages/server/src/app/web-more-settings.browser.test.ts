import { mkdirSync } from "node:fs";
import type { WebhookList } from "@hub/api";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../test-support/browser.js";
import { FakeProvider, writeProvidersFile } from "../test-support/fake-provider.js";
import { readJson, startHub, type TestHub } from "../test-support/hub-process.js";
import {
  commitFiles,
  screenshotAtWidths,
  SCREENSHOTS,
  signInOnPage,
  watchedPage,
} from "../test-support/web.js";
import { WebhookReceiver } from "../test-support/webhook-receiver.js";

/**
 * Webhooks and inference settings in Chromium against a real hubd: a webhook made in the page against a
 * receiver on loopback, its delivery after a commit, a redelivery, and the usage chart after Router calls;
 * watched for dialogs, console errors and requests to any other origin.
 */
describe("webhooks and inference settings in a browser", () => {
  const receiver = new WebhookReceiver();
  const provider = new FakeProvider("solo");
  let hub: TestHub;
  let browser: Browser;
  let password: string;
  let token: string;

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    await receiver.start();
    await provider.start();
    const providers = writeProvidersFile("web-more-browser", [
      {
        slug: "solo",
        baseUrl: provider.url,
        apiKey: "sk-solo-operator-key",
        models: [
          { id: "acme/chat", providerModel: "m", task: "chat", pricing: { input: 1000, output: 1000 } },
        ],
      },
    ]);
    hub = await startHub({ env: { HUB_WEBHOOKS_ALLOW_PRIVATE: "1", HUB_PROVIDERS: providers } });
    hub.secrets.add("sk-solo-operator-key");
    ({ password } = await hub.createUser("alice"));
    token = await hub.createToken("alice");
    expect((await hub.cli(["credit", "add", "alice", "5"])).code).toBe(0);
    const created = await hub.request("/api/repos", {
      method: "POST",
      token,
      json: { repo_id: "alice/watched" },
    });
    expect(created.status).toBe(201);
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await hub?.stop();
    await receiver.stop();
    await provider.stop();
  });

  it("creates a webhook, sees its delivery after a commit, redelivers it, and charts inference usage", async () => {
    const { context, page, problems } = await watchedPage(browser, hub, 1440);

    await page.goto(`${hub.url}/settings/webhooks`);
    await signInOnPage(page, "alice", password);
    await page.getByRole("heading", { name: "Webhooks", exact: true }).waitFor();

    // A webhook on the receiver, its secret shown this once.
    await page.getByLabel("Target URL").fill(receiver.url);
    await page.getByLabel(/^Watched/).fill("model alice/watched");
    await page.getByLabel(/^Description/).fill("journey");
    await page.getByRole("button", { name: "Add webhook" }).click();
    const secret = (await page.getByTestId("webhook-secret").textContent()) ?? "";
    expect(secret).toMatch(/^whsec_/);
    hub.secrets.add(secret);
    receiver.verifyWith(secret);
    const [hook] = (await readJson<WebhookList>(await hub.request("/api/me/webhooks", { token }))).webhooks;
    expect(hook).toMatchObject({ url: receiver.url, domains: ["repo"], description: "journey" });
    await screenshotAtWidths(page, "settings-webhooks");

    // A commit is delivered; the webhook's page shows the receipt.
    const committed = await commitFiles(
      hub,
      token,
      "alice/watched",
      { "README.md": "# watched\n" },
      { summary: "card" },
    );
    expect(committed.status).toBe(200);
    await receiver.waitFor(1);
    expect(receiver.received[0]?.verified).toBe(true);
    await page.getByRole("link", { name: "Open the webhook" }).click();
    await page.waitForURL(`${hub.url}/settings/webhooks/${hook?.id}`);
    const delivered = page.getByTestId("delivery").filter({ hasText: "delivered" });
    for (let i = 0; i < 50 && (await delivered.count()) === 0; i++) {
      await page.waitForTimeout(200);
      await page.reload();
    }
    await delivered.first().waitFor();
    expect(await delivered.first().textContent()).toContain("204");
    expect(await page.content()).not.toContain(secret);
    await screenshotAtWidths(page, "settings-webhook-deliveries");

    // Redelivery: the same delivery arrives again and its receipt says so.
    await page
      .getByRole("button", { name: /^Redeliver / })
      .first()
      .click();
    await page.getByText("is sent again").waitFor();
    await receiver.waitFor(2);
    expect(receiver.received[1]?.id).toBe(receiver.received[0]?.id);
    const redelivered = page.getByTestId("delivery").filter({ hasText: "(redelivery)" });
    for (let i = 0; i < 50 && (await redelivered.count()) === 0; i++) {
      await page.waitForTimeout(200);
      await page.reload();
    }
    await redelivered.first().waitFor();

    // The Router's ledger drawn as bars, with the table of the same figures.
    for (let i = 0; i < 2; i++) {
      const answer = await fetch(`${hub.routerUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "acme/chat", messages: [{ role: "user", content: "hi" }] }),
      });
      expect(answer.status).toBe(200);
    }
    await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Inference" }).click();
    await page.getByRole("heading", { name: /^Usage in / }).waitFor();
    const bar = page.getByTestId("usage-bar");
    for (let i = 0; i < 50 && (await bar.count()) === 0; i++) {
      await page.waitForTimeout(200);
      await page.reload();
    }
    await bar.first().waitFor();
    const today = new Date().toISOString().slice(0, 10);
    expect(await bar.first().getAttribute("data-day")).toBe(today);
    await page.getByRole("cell", { name: today }).waitFor();
    expect(await page.getByRole("img", { name: /^Requests by day/ }).count()).toBe(1);
    await screenshotAtWidths(page, "settings-inference");

    await page.getByRole("link", { name: "Spend (USD)" }).click();
    await page.waitForURL(/metric=spend/);
    await page.getByTestId("usage-bar").first().waitFor();

    for (const [link, heading, name] of [
      ["Billing", "Billing", "settings-billing"],
      ["Gated repositories", "Gated repositories", "settings-gated"],
      ["Content preferences", "Content preferences", "settings-content"],
    ] as const) {
      await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: link }).click();
      await page.getByRole("heading", { name: heading, exact: true, level: 2 }).waitFor();
      await screenshotAtWidths(page, name);
    }

    expect(problems).toEqual([]);
    await context.close();
  });
});
