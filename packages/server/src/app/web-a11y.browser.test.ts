import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { AxeResults } from "axe-core";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../test-support/browser.js";
import { readJson, startHub, type TestHub } from "../test-support/hub-process.js";
import { commitBody, commitFiles, WIDTHS } from "../test-support/web.js";

/** axe-core's browser bundle, evaluated in each page (see `audit`). */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const SCHEMES = ["light", "dark"] as const;
/** The impacts that fail the test; "minor" and "moderate" findings are printed only. */
const BLOCKING = new Set(["serious", "critical"]);

/** A 2×2 PNG, so the card shows a real image from the repository. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==",
  "base64",
);

const CARD = [
  "---",
  "license: apache-2.0",
  "pipeline_tag: text-generation",
  "library_name: transformers",
  "language: [en, de]",
  "tags: [text-generation, small]",
  "---",
  "# GPT tiny",
  "",
  "A very small model: **4 layers**, trained on short stories. [More about it](docs/about.md).",
  "",
  "![A bar chart of the scores](chart.png)",
  "",
  "## Results",
  "",
  "| Benchmark | Score |",
  "| --------- | ----- |",
  "| HellaSwag | 31.2  |",
  "| ARC-easy  | 42.7  |",
  "",
  "### To do",
  "",
  "- [x] Train it",
  "- [ ] Evaluate it on more benchmarks",
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
  "> A quote, with `inline code`.",
  "",
].join("\n");

interface Finding {
  url: string;
  id: string;
  impact: string;
  help: string;
  targets: string[];
  /** axe's account of the first node: the colours and ratio, the missing name. */
  detail: string;
}

/**
 * Every page of the web site audited by axe-core in Chromium, in light and dark colour schemes at 375 and
 * 1440 pixels, against a real `hubd` with a user, an organization, a public model with a rich card, a
 * private model and a file tree. No finding of impact "serious" or "critical" may remain.
 */
describe("the web site's accessibility (axe-core)", () => {
  let hub: TestHub;
  let browser: Browser;
  let token: string;
  let cookies: { name: string; value: string }[];
  let sha: string;

  const api = async (pathname: string, json?: unknown, method = "POST") => {
    const response = await hub.request(pathname, { method, token, ...(json === undefined ? {} : { json }) });
    expect(response.status, `${pathname}: ${await response.clone().text()}`).toBeLessThan(300);
    return response;
  };
  const commit = (repo: string, files: Record<string, Buffer | string>) =>
    commitFiles(hub, token, repo, files, { summary: "Add the card, a chart and the code" });

  beforeAll(async () => {
    hub = await startHub();
    const { password } = await hub.createUser("alice");
    token = await hub.createToken("alice");
    expect(
      (await hub.cli(["org", "create", "acme", "--owner", "alice", "--fullname", "Acme Corp"])).code,
    ).toBe(0);
    await api("/api/repos", { repo_id: "alice/gpt-tiny", repo_type: "model" });
    await commit("alice/gpt-tiny", {
      "README.md": CARD,
      "chart.png": PNG,
      "docs/about.md": "# About\n\nMore words.\n",
      "src/train.py": "import sys\n\n\ndef main():\n    print('hi', sys.argv)\n",
      "config.json": '{ "layers": 4 }\n',
    });
    await api("/api/repos", { repo_id: "alice/hidden", repo_type: "model", private: true });
    await api("/api/repos", { repo_id: "acme/shared", repo_type: "model" });
    const commits = await readJson<{ id: string }[]>(
      await api("/api/models/alice/gpt-tiny/commits/main", undefined, "GET"),
    );
    sha = commits[0]?.id ?? "";
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    // The Community pages: a discussion with a reaction (#1), and a pull request with a diff (#2).
    await api("/api/models/alice/gpt-tiny/discussions", {
      title: "How was it trained?",
      description: "Which **dataset**? See [the card](README.md).",
    });
    const [opening] = (
      await readJson<{ events: { id: string }[] }>(
        await api("/api/models/alice/gpt-tiny/discussions/1", undefined, "GET"),
      )
    ).events;
    await api(`/api/models/alice/gpt-tiny/discussions/1/comment/${opening?.id ?? ""}/reactions`, {
      reaction: "🔥",
    });
    const proposed = await hub.request("/api/models/alice/gpt-tiny/commit/main?create_pr=1", {
      method: "POST",
      token,
      headers: { "content-type": "application/x-ndjson" },
      body: commitBody({ "docs/about.md": "# About\n\nMore words, and more.\n" }, { summary: "Expand" }),
    });
    expect(proposed.status).toBe(200);
    // Bob replies mentioning alice: her inbox has an unread notification.
    await hub.createUser("bob");
    const reply = await hub.request("/api/models/alice/gpt-tiny/discussions/1/comment", {
      method: "POST",
      token: await hub.createToken("bob"),
      json: { comment: "@alice the card says it: short stories." },
    });
    expect(reply.status).toBe(200);
    cookies = (await hub.signIn("alice", password)).split("; ").map((pair) => {
      const [name = "", value = ""] = pair.split("=");
      return { name, value };
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await hub?.stop();
  });

  /** The pages a visitor (signed in or not) can reach, by URL path. */
  function pages(signedIn: boolean): string[] {
    // `/device` is the server's own page (device-page.ts), in the site's look.
    if (!signedIn) return ["/", "/login", "/alice/hidden", "/device", "/alice/gpt-tiny/discussions/1"];
    const repo = "/alice/gpt-tiny";
    return [
      "/",
      "/models",
      "/datasets",
      "/spaces",
      repo,
      `${repo}/tree/main`,
      `${repo}/tree/main/src`,
      `${repo}/blob/main/src/train.py`,
      `${repo}/blob/main/chart.png`,
      `${repo}/commits/main`,
      `${repo}/commit/${sha}`,
      `${repo}/settings`,
      `${repo}/discussions`,
      `${repo}/discussions/new`,
      `${repo}/discussions/1`,
      `${repo}/discussions/2`,
      `${repo}/discussions/2/files`,
      "/notifications",
      "/alice/hidden",
      "/new",
      "/alice",
      "/acme",
      "/organizations/new",
      "/organizations/acme/settings/members",
      "/organizations/acme/settings/webhooks",
      "/organizations/acme/settings/inference",
      "/organizations/acme/settings/sso",
      "/settings/profile",
      "/settings/account",
      "/settings/tokens",
      "/settings/keys",
      "/settings/two-factor",
      "/settings/webhooks",
      "/settings/inference",
      "/settings/billing",
      "/settings/content",
      "/settings/gated",
      "/no-such-page/at-all/here",
      "/device",
    ];
  }

  /**
   * A page that has axe in every document it loads. The library goes in as an init script (the DevTools
   * protocol), which the page's Content-Security-Policy does not govern, so pages are audited under their real
   * policy: no `bypassCSP` context. Sent once per context instead of evaluated per page, and one page loading
   * every URL in turn instead of a page per URL: a third less time for the forty pages of each pass.
   */
  async function auditingPage(context: BrowserContext): Promise<Page> {
    await context.addInitScript({ content: AXE_SOURCE });
    return context.newPage();
  }

  /** Loads `url` in `page` (from `auditingPage`) and runs axe in it. */
  async function audit(page: Page, url: string): Promise<Finding[]> {
    const response = await page.goto(`${hub.url}${url}`);
    expect(response?.status(), url).toBeLessThan(500);
    const results = await page.evaluate<AxeResults>(`axe.run(document, { resultTypes: ["violations"] })`);
    return results.violations.map((violation) => ({
      url,
      id: violation.id,
      impact: violation.impact ?? "unknown",
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.join(" ")),
      detail: violation.nodes[0]?.failureSummary ?? "",
    }));
  }

  it("works from the keyboard alone: skip link, branch picker, Add file and Use this model menus", async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    await context.addCookies(cookies.map((cookie) => ({ ...cookie, url: hub.url })));
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("pageerror", (err) => problems.push(err.message));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    /** What has focus, as `TAG:text`. */
    const focused = () =>
      page.evaluate<string>(
        `(() => { const e = document.activeElement; return e ? e.tagName + ":" + (e.textContent ?? "").trim().replace(/\\s+/g, " ") : ""; })()`,
      );
    /** Presses Tab until the focused element matches, as a person would. */
    async function tabTo(pattern: RegExp) {
      for (let i = 0; i < 80; i++) {
        await page.keyboard.press("Tab");
        if (pattern.test(await focused())) return;
      }
      throw new Error(`Tab never reached ${pattern}`);
    }
    const isOpen = async (selector: string) => (await page.locator(selector).getAttribute("open")) !== null;

    await page.goto(`${hub.url}/alice/gpt-tiny/tree/main`, { waitUntil: "networkidle" });
    // The first Tab stop skips the header.
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("A:Skip to content");
    await page.keyboard.press("Enter");
    expect(await page.evaluate<string>("document.activeElement.id")).toBe("content");

    // The branch picker: Enter opens, Tab enters it, Escape closes and gives focus back to its summary.
    await tabTo(/^SUMMARY:Branch: main$/);
    await page.keyboard.press("Enter");
    expect(await isOpen("details.refs")).toBe(true);
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("A:main");
    await page.keyboard.press("Escape");
    expect(await isOpen("details.refs")).toBe(false);
    expect(await focused()).toBe("SUMMARY:Branch: main");

    // Add file: Escape closes it too; tabbing past its last item closes it as well.
    await tabTo(/^SUMMARY:Add file$/);
    await page.keyboard.press("Enter");
    expect(await isOpen("details.add")).toBe(true);
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("A:Create a new file");
    await page.keyboard.press("Escape");
    expect(await isOpen("details.add")).toBe(false);
    expect(await focused()).toBe("SUMMARY:Add file");
    await page.keyboard.press("Enter");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("A:Upload files");
    expect(await isOpen("details.add")).toBe(false);

    // Enter on a menu item follows it.
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Enter");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/alice\/gpt-tiny\/new\/main$/);

    // Use this model, on the card page.
    await page.goto(`${hub.url}/alice/gpt-tiny`, { waitUntil: "networkidle" });
    await tabTo(/^SUMMARY:Use this model$/);
    await page.keyboard.press("Enter");
    expect(await isOpen("details.use")).toBe(true);
    await page.keyboard.press("Tab");
    expect(await focused()).toMatch(/^BUTTON:/);
    await page.keyboard.press("Escape");
    expect(await isOpen("details.use")).toBe(false);
    expect(await focused()).toBe("SUMMARY:Use this model");

    // The site's header: its links are reachable and followed with Enter.
    await tabTo(/^A:Datasets$/);
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/datasets$/);
    expect(problems).toEqual([]);
    await context.close();
  });

  for (const colorScheme of SCHEMES) {
    it.each(WIDTHS)(
      `has no serious or critical finding in the ${colorScheme} scheme at %i pixels`,
      async (width) => {
        const findings: Finding[] = [];
        for (const signedIn of [false, true]) {
          const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme });
          if (signedIn) await context.addCookies(cookies.map((cookie) => ({ ...cookie, url: hub.url })));
          const page = await auditingPage(context);
          for (const url of pages(signedIn)) findings.push(...(await audit(page, url)));
          // The scheme really is the one audited: the page's background follows it.
          await page.goto(`${hub.url}/`);
          const background = await page.evaluate<string>("getComputedStyle(document.body).backgroundColor");
          expect(background === "rgb(255, 255, 255)").toBe(colorScheme === "light");
          await page.close();
          await context.close();
        }
        const minor = findings.filter((finding) => !BLOCKING.has(finding.impact));
        if (minor.length > 0) console.log(`${colorScheme} ${width}px, minor findings:`, minor);
        expect(findings.filter((finding) => BLOCKING.has(finding.impact))).toEqual([]);
      },
      // Some forty pages, each loaded and audited: about 10 s alone, longer beside other browser tests.
      180_000,
    );
  }
});
