import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AccountKey, Me, MfaStatus } from "@hub/api";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../test-support/browser.js";
import { readJson, startHub, type TestHub } from "../test-support/hub-process.js";
import {
  onePixelPng,
  screenshot,
  SCREENSHOTS,
  signInOnPage,
  totpNow,
  watchedPage,
  WIDTHS,
} from "../test-support/web.js";

/** A real PNG image of one blue pixel. */
const png = () => onePixelPng([20, 60, 200]);

/**
 * The account settings walked in Chromium against a real hubd, at phone and desktop widths: adding an SSH
 * key, setting up two-factor from the QR code of the otpauth URI and keeping the recovery codes, uploading
 * an avatar straight to the API, and deleting the account, watched for dialogs, console errors and
 * requests to any other origin.
 */
describe("account settings in a browser", () => {
  let hub: TestHub;
  let browser: Browser;
  let work: string;

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    work = mkdtempSync(path.join(os.tmpdir(), "hub-web-account-browser-"));
    hub = await startHub();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await hub?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it.each(WIDTHS)(
    "adds an SSH key, sets up two-factor from its QR code, uploads an avatar and deletes the account at %i px",
    async (width) => {
      const name = `alice${width}`;
      const { password } = await hub.createUser(name);
      const token = await hub.createToken(name);
      const keyFile = path.join(work, name);
      execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", `${name}@laptop`, "-f", keyFile]);
      const publicKey = readFileSync(`${keyFile}.pub`, "utf8").trim();

      const { context, page, problems } = await watchedPage(browser, hub, width);

      await page.goto(`${hub.url}/settings/keys`);
      await signInOnPage(page, name, password);
      await page.getByRole("heading", { name: "SSH and GPG keys" }).waitFor();

      // Add an SSH key.
      await page.getByLabel(/^Title/).fill("laptop");
      await page.getByLabel("Public key").fill(publicKey);
      await page.getByRole("button", { name: "Add key" }).click();
      // The key's row, or the refusal the page shows instead (so a failure says why); slow beside other browsers.
      const added = page.getByRole("button", { name: "Delete laptop" });
      await added.or(page.getByRole("alert")).first().waitFor({ timeout: 90_000 });
      expect(await added.isVisible(), await page.getByRole("alert").allInnerTexts().then(String)).toBe(true);
      const [key] = await readJson<AccountKey[]>(await hub.request("/api/me/keys", { token }));
      expect(key).toMatchObject({ type: "ssh", title: "laptop" });
      await page
        .getByRole("listitem")
        .getByText(key?.fingerprint ?? "missing", { exact: true })
        .waitFor();
      await screenshot(page, "settings-keys");

      // Two-factor: the QR code of the otpauth URI, the secret, a code, the recovery codes.
      await page.getByRole("link", { name: "Two-factor authentication" }).click();
      await page.getByRole("button", { name: "Set up two-factor authentication" }).click();
      const qr = page.getByRole("img", { name: "QR code of the two-factor secret" });
      await qr.waitFor();
      expect(await qr.getAttribute("src")).toMatch(/^data:image\/svg\+xml;base64,/);
      expect(
        await qr.evaluate(
          (img) => (img as unknown as { complete: boolean; naturalWidth: number }).naturalWidth > 0,
        ),
      ).toBe(true);
      const secret = (await page.getByTestId("totp-secret").textContent()) ?? "";
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);
      hub.secrets.add(secret);
      await screenshot(page, "settings-two-factor-qr");
      await page.getByLabel("Code from the app").fill(totpNow(secret));
      await page.getByRole("button", { name: "Turn on" }).click();
      const codes = page.getByTestId("recovery-codes").getByRole("listitem");
      await page.getByRole("heading", { name: "Two-factor authentication is on" }).waitFor();
      expect(await codes.count()).toBe(10);
      for (const code of await codes.allTextContents()) hub.secrets.add(code);
      await page.getByRole("button", { name: "Copy the recovery codes" }).waitFor();
      expect((await readJson<MfaStatus>(await hub.request("/api/me/mfa", { token }))).enabled).toBe(true);
      await screenshot(page, "settings-two-factor-codes");

      // The avatar goes straight to the API from the page, with the request-forgery token.
      await page.getByRole("link", { name: "Profile" }).click();
      await page.getByLabel(/^Image/).setInputFiles({ name: "me.png", mimeType: "image/png", buffer: png() });
      await page.getByRole("button", { name: "Upload avatar" }).click();
      await page.getByText("Your avatar is saved.").waitFor();
      const me = await readJson<Me>(await hub.request("/api/me", { token }));
      expect(me.profile.avatarUrl).toMatch(/\?v=/);
      await page.locator(`img[src="${me.profile.avatarUrl}"]`).first().waitFor();
      await screenshot(page, "settings-profile");

      // Deleting the account signs the browser out and sends it home.
      await page.getByRole("link", { name: "Account", exact: true }).click();
      await page.getByRole("heading", { name: "Delete your account" }).waitFor();
      await screenshot(page, "settings-account");
      await page.getByLabel(/to confirm/).fill(name);
      await page.getByRole("button", { name: "Delete my account" }).click();
      await page.waitForURL(`${hub.url}/`);
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Sign in" }).waitFor();
      expect((await context.cookies()).map((cookie) => cookie.name)).not.toContain("hub_session");
      expect((await hub.request("/api/whoami-v2", { token })).status).toBe(401);

      expect(problems).toEqual([]);
      await context.close();
    },
  );
});
