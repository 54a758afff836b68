import { mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { SessionInferenceToken } from "@hub/api";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../test-support/browser.js";
import { FakeProvider, writeProvidersFile } from "../test-support/fake-provider.js";
import { startHub, type TestHub } from "../test-support/hub-process.js";

const SCREENSHOTS = fileURLToPath(new URL("../../../web/screenshots/", import.meta.url));

/**
 * The Inference tab and the playground in Chromium against a real hubd whose Router calls a fake
 * provider: sign in, stream an answer, stop one midway, sign out, and the page's credential is dead.
 */
describe("the playground in a browser", () => {
  const provider = new FakeProvider("alpha");
  let hub: TestHub;
  let browser: Browser;
  let password: string;

  async function shot(page: Page, name: string) {
    await page.screenshot({
      path: path.join(SCREENSHOTS, `${name}-${page.viewportSize()?.width}.png`),
      fullPage: true,
    });
  }

  /** A fresh context that reports dialogs, console errors, and requests anywhere but the hub and its Router. */
  async function watchedContext(width: number) {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const problems: string[] = [];
    const routerCalls: string[] = [];
    const allowed = [new URL(hub.url).origin, new URL(hub.routerUrl).origin];
    context.on("request", (request) => {
      const url = new URL(request.url());
      if (url.origin === allowed[1]) routerCalls.push(`${request.method()} ${url.pathname}`);
      else if (url.protocol !== "data:" && !allowed.includes(url.origin))
        problems.push(`request to ${url.href}`);
    });
    context.on("page", (page) => {
      page.on("dialog", (dialog) => {
        problems.push(`dialog: ${dialog.message()}`);
        void dialog.dismiss();
      });
      page.on("console", (message) => {
        if (message.type() === "error") problems.push(`console: ${message.text()}`);
      });
      page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
    });
    return { context, problems, routerCalls };
  }

  function routerChat(token: string): Promise<Response> {
    return fetch(`${hub.routerUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "acme/chat-1", messages: [{ role: "user", content: "hi" }] }),
    });
  }

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    await provider.start();
    const chat = (input: number, output: number) => ({
      id: "acme/chat-1",
      providerModel: "upstream-chat",
      task: "chat",
      pricing: { input, output },
    });
    const providers = writeProvidersFile("web-infer-browser", [
      { slug: "alpha", baseUrl: provider.url, apiKey: "sk-alpha-browser", models: [chat(0.5, 1.5)] },
      {
        slug: "beta",
        baseUrl: provider.url,
        apiKey: "sk-beta-browser",
        models: [{ ...chat(0.2, 0.6), contextLength: 32768 }],
      },
    ]);
    hub = await startHub({ env: { HUB_PROVIDERS: providers } });
    hub.secrets.add("sk-alpha-browser");
    hub.secrets.add("sk-beta-browser");
    ({ password } = await hub.createUser("acme"));
    const token = await hub.createToken("acme");
    const created = await hub.request("/api/repos", {
      method: "POST",
      token,
      json: { repo_id: "acme/chat-1", repo_type: "model" },
    });
    expect(created.status).toBe(201);
    expect((await hub.cli(["credit", "add", "acme", "10"])).code).toBe(0);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await hub?.stop();
    await provider.stop();
  });

  for (const width of [1440, 375]) {
    it(`streams a chat at ${width}px, stops one midway, and the credential dies at sign-out`, async () => {
      provider.behavior = { kind: "ok", chunks: 6, chunkDelayMs: 60 };
      const { context, problems, routerCalls } = await watchedContext(width);
      const page = await context.newPage();

      await page.goto(`${hub.url}/acme/chat-1`);
      await page.getByRole("link", { name: "Inference" }).click();
      await page.getByRole("heading", { name: "Inference providers" }).waitFor();
      await page.getByRole("row", { name: /beta/ }).getByText("Live").waitFor();
      expect(await page.getByText("32,768").count()).toBe(1);
      await shot(page, "inference");

      await page.getByRole("link", { name: "Try it in the playground" }).click();
      await page.getByRole("heading", { name: "Playground" }).waitFor();
      await page.getByRole("link", { name: "Sign in" }).first().click();
      await page.getByLabel("User name or email").fill("acme");
      await page.getByLabel("Password").fill(password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByLabel("Message").waitFor();
      expect(new URL(page.url()).pathname).toBe("/acme/chat-1/playground");

      const minted = page.waitForResponse((response) =>
        response.url().endsWith("/api/auth/session-inference-token"),
      );
      await page.getByLabel("Message").fill("Say something");
      await page.getByRole("button", { name: "Send" }).click();
      const { token } = (await (await minted).json()) as SessionInferenceToken;
      hub.secrets.add(token);
      const answer = page.getByTestId("answer");
      await expect.poll(() => answer.textContent(), { timeout: 10_000 }).toBe("t0 t1 t2 t3 t4 t5 ");
      await page.getByRole("button", { name: "Send" }).waitFor();
      expect(provider.requests.at(-1)?.body).toMatchObject({
        model: "upstream-chat",
        stream: true,
        messages: [{ role: "user", content: "Say something" }],
      });
      await shot(page, "playground");

      // In memory only: neither storage nor cookies hold the credential.
      const stored = await page.evaluate<string>(
        "JSON.stringify([{ ...localStorage }, { ...sessionStorage }])",
      );
      expect(stored).not.toContain(token);
      expect(JSON.stringify(await context.cookies())).not.toContain(token);

      // A slow answer stops where it is when asked; the conversation goes on with a second turn.
      provider.behavior = { kind: "ok", chunks: 40, chunkDelayMs: 150 };
      await page.getByLabel("Provider").selectOption("beta");
      await page.getByLabel("Message").fill("Tell me a long story");
      await page.getByRole("button", { name: "Send" }).click();
      const second = answer.nth(1);
      await expect.poll(() => second.textContent(), { timeout: 10_000 }).toContain("t1 ");
      await page.getByRole("button", { name: "Stop" }).click();
      await page.getByRole("button", { name: "Send" }).waitFor();
      const stopped = await second.textContent();
      await page.waitForTimeout(600);
      expect(await second.textContent()).toBe(stopped);
      expect(stopped).not.toContain("t39");
      expect(provider.requests.at(-1)?.body).toMatchObject({
        messages: [
          { role: "user", content: "Say something" },
          { role: "assistant", content: "t0 t1 t2 t3 t4 t5 " },
          { role: "user", content: "Tell me a long story" },
        ],
      });
      expect(routerCalls.filter((call) => call === "POST /v1/chat/completions")).toHaveLength(2);

      expect((await routerChat(token)).status).toBe(200);
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.waitForURL(`${hub.url}/`);
      const refused = await routerChat(token);
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("invalid_api_key");
      expect(problems).toEqual([]);
      await context.close();
    }, 60_000);
  }
});
