import { createHash, randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import type { TreeEntry } from "@hub/api";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../test-support/browser.js";
import { freePorts, readJson, startHub, type TestHub } from "../test-support/hub-process.js";
import { screenshot, SCREENSHOTS, signInOnPage, watchedContext, WIDTHS } from "../test-support/web.js";

const MB = 1000 * 1000;

/**
 * Uploading a large file from a hub served over plain http under a name that is not loopback, as on a LAN:
 * the page is no secure context, so Web Crypto is absent, and the browser still hashes the file (a slice at
 * a time, with the hashing shown in the progress bar) and sends it through Git LFS. Chromium reaches the hub
 * as http://hub.test:PORT (its resolver maps the name to 127.0.0.1); watched for dialogs, console errors
 * and requests to any other origin.
 */
describe("uploading from a page that is not a secure context", () => {
  let hub: TestHub;
  let browser: Browser;
  let token: string;
  let password: string;
  /** The hub as the browser reaches it. */
  let site: string;

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const [port = 0] = await freePorts(1);
    site = `http://hub.test:${port}`;
    hub = await startHub({ env: { HUB_PORT: String(port), HUB_PUBLIC_URL: site } });
    ({ password } = await hub.createUser("alice"));
    token = await hub.createToken("alice");
    const created = await hub.request("/api/repos", {
      method: "POST",
      token,
      json: { repo_id: "alice/lan", repo_type: "model" },
    });
    expect(created.status).toBe(201);
    browser = await launchChromium(["--host-resolver-rules=MAP hub.test 127.0.0.1"]);
  });
  afterAll(async () => {
    await browser?.close();
    await hub?.stop();
  });

  it.each(WIDTHS)(
    "hashes and uploads a 12 MB file through LFS without Web Crypto at %i pixels",
    async (width) => {
      const { context, problems } = await watchedContext(browser, { url: site }, width);
      const page = await context.newPage();
      await page.goto(`${site}/login?next=${encodeURIComponent("/alice/lan/upload/main")}`);
      await signInOnPage(page, "alice", password);
      await page.getByRole("heading", { name: "Upload files" }).waitFor();
      expect(new URL(page.url()).origin).toBe(site);
      // The point of the test: no secure context, so no Web Crypto.
      expect(await page.evaluate("window.isSecureContext")).toBe(false);
      expect(await page.evaluate("typeof globalThis.crypto?.subtle")).toBe("undefined");
      await expect.poll(() => page.getByRole("button", { name: "Commit changes" }).isEnabled()).toBe(true);

      const name = `weights-${width}.bin`;
      const weights = randomBytes(12 * MB);
      await page.setInputFiles("#upload-files", {
        name,
        mimeType: "application/octet-stream",
        buffer: weights,
      });
      await page.getByRole("list", { name: "Files to upload" }).getByText(name).waitFor();
      await page.getByLabel("Commit message").fill(`Upload over plain http at ${width}`);
      await screenshot(page, "upload-plain-http");

      // Every text the progress bar's label takes, as the page sets it.
      await page.evaluate(`(() => {
        const seen = (window.labelsSeen = []);
        new MutationObserver(() => {
          const label = document.querySelector("label[for=upload-progress]");
          if (label && seen.at(-1) !== label.textContent) seen.push(label.textContent);
        }).observe(document.body, { subtree: true, childList: true, characterData: true });
      })()`);
      await page.getByRole("button", { name: "Commit changes" }).click();
      await page.getByRole("heading", { name: `Upload over plain http at ${width}` }).waitFor();

      const labels = (await page.evaluate<string[] | undefined>("window.labelsSeen")) ?? [];
      const hashing = labels.flatMap((label) => {
        const match = new RegExp(`^Hashing ${name.replace(".", "\\.")}: (\\d+)%$`).exec(label.trim());
        return match ? [Number(match[1])] : [];
      });
      // Hashed a slice at a time: the bar moved through the hashing, then on to the upload.
      expect(
        hashing.some((percent) => percent > 0 && percent < 100),
        JSON.stringify(labels),
      ).toBe(true);
      expect(labels.some((label) => label.startsWith(`Uploading ${name}`))).toBe(true);

      // What the browser hashed is the file's SHA-256: the hub took it as that LFS object.
      const oid = createHash("sha256").update(weights).digest("hex");
      const info = await hub.request("/api/models/alice/lan/paths-info/main", {
        method: "POST",
        token,
        json: { paths: [name] },
      });
      const [entry] = await readJson<TreeEntry[]>(info);
      expect(entry?.lfs).toMatchObject({ oid, size: 12 * MB });
      const raw = await hub.request(`/alice/lan/resolve/main/${name}`, { token });
      expect(
        createHash("sha256")
          .update(Buffer.from(await raw.arrayBuffer()))
          .digest("hex"),
      ).toBe(oid);
      expect(problems).toEqual([]);
      await context.close();
    },
  );
});
