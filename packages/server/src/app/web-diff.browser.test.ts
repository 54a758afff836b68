import { createHash, randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import type { TreeEntry } from "@hub/api";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../test-support/browser.js";
import { readJson, startHub, type TestHub } from "../test-support/hub-process.js";
import { screenshot, SCREENSHOTS, watchedContext, WIDTHS } from "../test-support/web.js";

const MB = 1000 * 1000;

/**
 * Uploading from the browser against a real `hubd`: a README dropped on the page and a 20 MB file chosen
 * with the picker go up in one commit (the large one through Git LFS) with the progress bar moving, and the
 * commit page shows the README's lines and the LFS summary; watched for dialogs, console errors and
 * requests to any other origin.
 */
describe("uploading and reading a commit in a browser", () => {
  let hub: TestHub;
  let browser: Browser;
  let token: string;
  let password: string;
  /** The LFS object the previous run uploaded. */
  let previousOid: string | null = null;

  const watched = (width: number) => watchedContext(browser, hub, width);

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    hub = await startHub();
    ({ password } = await hub.createUser("alice"));
    token = await hub.createToken("alice");
    const created = await hub.request("/api/repos", {
      method: "POST",
      token,
      json: { repo_id: "alice/uploads", repo_type: "model" },
    });
    expect(created.status).toBe(201);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await hub?.stop();
  });

  it.each(WIDTHS)(
    "signs in, uploads a README and a 20 MB LFS file with a progress bar, and reads the commit at %i pixels",
    async (width) => {
      const { context, problems } = await watched(width);
      const page = await context.newPage();
      await page.goto(`${hub.url}/login`);
      await page.getByLabel("User name or email").fill("alice");
      await page.getByLabel("Password").fill(password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect.poll(() => page.getByRole("link", { name: "alice", exact: true }).count()).toBe(1);

      await page.goto(`${hub.url}/alice/uploads`);
      await page.getByRole("link", { name: "Files and versions" }).click();
      await page.getByRole("link", { name: "Upload files" }).click();
      await page.getByRole("heading", { name: "Upload files" }).waitFor();
      // Hydrated: the submit button is enabled once the page's script runs.
      await expect.poll(() => page.getByRole("button", { name: "Commit changes" }).isEnabled()).toBe(true);

      // The README is dropped on the page; the large file is chosen with the picker.
      const readme = `# Uploaded at ${width}\n\nFrom the browser.\n`;
      // Code run in the page is written as text: this package's TypeScript has no DOM types.
      const dropped = await page.evaluateHandle(
        `(() => { const transfer = new DataTransfer(); transfer.items.add(new File([${JSON.stringify(readme)}], "README.md", { type: "text/markdown" })); return transfer; })()`,
      );
      await page.dispatchEvent(".drop", "drop", { dataTransfer: dropped });
      const weights = randomBytes(20 * MB);
      await page.setInputFiles("#upload-files", {
        name: "weights.bin",
        mimeType: "application/octet-stream",
        buffer: weights,
      });
      const picked = page.getByRole("list", { name: "Files to upload" });
      await picked.getByText("README.md").waitFor();
      await picked.getByText("weights.bin").waitFor();
      await page.getByLabel("Commit message").fill(`Upload from the browser at ${width}`);
      await screenshot(page, "upload");

      // Every value the progress bar takes, seen as the page sets it.
      await page.evaluate(`(() => {
        const seen = (window.progressSeen = []);
        new MutationObserver(() => {
          const bar = document.querySelector("progress");
          if (bar) seen.push(Number(bar.getAttribute("value") ?? bar.value));
        }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
      })()`);
      // Loopback sends 20 MB faster than the browser reports progress: slow the upload to about 2 seconds.
      const cdp = await context.newCDPSession(page);
      await cdp.send("Network.emulateNetworkConditions", {
        offline: false,
        latency: 0,
        downloadThroughput: -1,
        uploadThroughput: 10 * MB,
      });
      await page.getByRole("button", { name: "Commit changes" }).click();
      await page.getByRole("heading", { name: `Upload from the browser at ${width}` }).waitFor();
      const seen = await page.evaluate<number[] | undefined>("window.progressSeen");
      // The bar moved through the upload (SvelteKit navigates in place, so the record survives).
      expect(
        seen?.some((value) => value > 0 && value < 100),
        JSON.stringify(seen),
      ).toBe(true);
      expect(seen?.at(-1)).toBeGreaterThanOrEqual(90);

      const sha = /\/commit\/([0-9a-f]{40})$/.exec(page.url())?.[1] ?? "";
      expect(sha).toMatch(/^[0-9a-f]{40}$/);
      const readmeFile = page.getByRole("region", { name: "README.md" });
      // The first run adds the README; the second changes its first line, with its number on each side.
      const changed = async (type: "added" | "removed") =>
        (await readmeFile.locator(`tr.${type}`).allTextContents()).map((row) => row.replace(/\s+/g, " "));
      if (previousOid === null) {
        expect(await changed("added")).toEqual([`1+# Uploaded at ${width}`, "2+", "3+From the browser."]);
        expect(await changed("removed")).toEqual([]);
      } else {
        expect(await changed("added")).toEqual([`1+# Uploaded at ${width}`]);
        expect(await changed("removed")).toEqual(["1-# Uploaded at 375"]);
      }
      const oid = createHash("sha256").update(weights).digest("hex");
      // Added the first time; changed (old object → new) the second.
      const side = (hash: string) => `20.0 MB (sha256 ${hash.slice(0, 12)}…)`;
      const lfsNote = await page.getByRole("region", { name: "weights.bin" }).locator(".note").textContent();
      expect(lfsNote?.replace(/\s+/g, " ").trim()).toBe(
        previousOid === null
          ? `LFS file added: none → ${side(oid)}`
          : `LFS file changed: ${side(previousOid)} → ${side(oid)}`,
      );
      previousOid = oid;
      await screenshot(page, "commit");

      // What the browser sent is what the hub keeps: the large file through LFS, the README in git.
      const info = await hub.request("/api/models/alice/uploads/paths-info/main", {
        method: "POST",
        token,
        json: { paths: ["weights.bin", "README.md"] },
      });
      const entries = await readJson<TreeEntry[]>(info);
      expect(entries.find((e) => e.path === "weights.bin")?.lfs).toMatchObject({ oid, size: 20 * MB });
      expect(entries.find((e) => e.path === "README.md")?.lfs).toBeUndefined();
      const raw = await hub.request("/alice/uploads/resolve/main/README.md", { token });
      expect(await raw.text()).toBe(readme);
      expect(problems).toEqual([]);
      await context.close();
    },
  );
});
