import { mkdirSync } from "node:fs";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../test-support/browser.js";
import { startHub, type TestHub } from "../test-support/hub-process.js";
import { hydrated, screenshot, SCREENSHOTS } from "../test-support/web.js";

/** The shortest reauthentication window the hub allows, so the test sees the prompt after a short wait. */
const REAUTH_WINDOW_SECONDS = 10;

/** Access tokens from the settings page in Chromium: the reauthentication prompt, the secret shown once, revoking. */
describe("access tokens in a browser", () => {
  let hub: TestHub;
  let browser: Browser;
  let password: string;

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    hub = await startHub({ env: { HUB_REAUTH_WINDOW: String(REAUTH_WINDOW_SECONDS) } });
    ({ password } = await hub.createUser("alice"));
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await hub?.stop();
  });

  it("asks for the password again, creates a fine-grained token shown once, and revokes it", async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (err) => problems.push(err.message));

    await page.goto(`${hub.url}/settings/tokens`);
    await page.getByLabel("User name or email").fill("alice");
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Access tokens" }).waitFor();

    // Once the sign-in is older than the window, managing tokens needs the password again.
    await page.waitForTimeout((REAUTH_WINDOW_SECONDS + 1) * 1000);
    await page.reload();
    await page.getByRole("heading", { name: "Confirm it is you" }).waitFor();
    await screenshot(page, "settings-reauthenticate");
    // The wrong password is refused to the page's scripts, not as a 400 document (see hydrated).
    await hydrated(page);
    await page.getByLabel("Password").fill("not my password");
    await page.getByRole("button", { name: "Confirm" }).click();
    await page.getByRole("alert").waitFor();
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Confirm" }).click();
    await page.getByRole("heading", { name: "Create a token" }).waitFor();

    await page.getByLabel("Name", { exact: true }).fill("notebook");
    await page.getByLabel(/Fine-grained/).check();
    await page.getByLabel("repo:read").check();
    await page.getByLabel("inference:run").check();
    await page.getByRole("button", { name: "Create token" }).click();
    const secret = (await page.getByTestId("new-token").textContent()) ?? "";
    hub.secrets.add(secret);
    expect(secret).toMatch(/^hf_\w+$/);
    expect((await hub.request("/api/whoami-v2", { token: secret })).status).toBe(200);
    await screenshot(page, "settings-tokens");

    // Shown once: the next visit lists the token without its secret.
    await page.reload();
    expect(await page.content()).not.toContain(secret);
    await page.getByRole("button", { name: "Revoke notebook" }).click();
    await page.getByText("Revoked notebook").waitFor();
    expect((await hub.request("/api/whoami-v2", { token: secret })).status).toBe(401);
    expect(problems).toEqual([]);
    await context.close();
  });
});
