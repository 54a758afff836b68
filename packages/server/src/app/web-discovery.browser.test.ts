import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { AxeResults } from "axe-core";
import type { Collection, LikeState } from "@hub/api";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../test-support/browser.js";
import { readJson, startHub, type TestHub } from "../test-support/hub-process.js";
import { commitFiles, signInOnPage, watchedContext, watchedPage } from "../test-support/web.js";

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * Discovery in Chromium against a real hubd, with JavaScript: the like button and a collection made from a
 * repository page, edited and deleted; then the new pages audited by axe-core at 375 px in light and dark,
 * without overflowing the phone's width. Watched for dialogs, console errors and requests to other origins.
 */
describe("discovery in a browser", () => {
  let hub: TestHub;
  let browser: Browser;
  let token: string;
  let password: string;

  beforeAll(async () => {
    hub = await startHub();
    browser = await launchChromium();
    ({ password } = await hub.createUser("alice"));
    token = await hub.createToken("alice");
    const created = await hub.request("/api/repos", {
      method: "POST",
      token,
      json: { repo_id: "alice/gpt", repo_type: "model" },
    });
    expect(created.status).toBe(201);
    await commitFiles(hub, token, "alice/gpt", {
      "README.md": "---\npipeline_tag: text-generation\nlicense: mit\n---\n# GPT\n\nA small model.\n",
    });
  });
  afterAll(async () => {
    await browser?.close();
    await hub?.stop();
  });

  it("likes a model, and makes, edits and deletes a collection holding it", async () => {
    const { context, page, problems } = await watchedPage(browser, hub, 1440);
    const likes = async () =>
      (await readJson<LikeState>(await hub.request("/api/models/alice/gpt/like", { token }))).likes;
    await page.goto(`${hub.url}/alice/gpt`);
    await page.getByRole("link", { name: "Sign in to like" }).click();
    await signInOnPage(page, "alice", password);
    await page.getByRole("button", { name: "Like" }).click();
    await page.getByRole("button", { name: "Unlike" }).waitFor();
    await page.getByText("1 like", { exact: true }).waitFor();
    expect(await likes()).toBe(1);
    await page.getByRole("button", { name: "Unlike" }).click();
    await page.getByText("0 likes", { exact: true }).waitFor();
    expect(await likes()).toBe(0);

    // A new collection from the repository page holds the repository.
    await page.getByText("Add to collection").click();
    await page.getByRole("link", { name: "New collection" }).click();
    await page.getByLabel("Title").fill("Small models");
    await page.getByRole("button", { name: "Create collection" }).click();
    await page.getByRole("heading", { name: "Small models" }).waitFor();
    const slug = new URL(page.url()).pathname.slice("/collections/".length);
    await page.getByRole("link", { name: "alice/gpt" }).waitFor();
    await page.locator("summary", { hasText: "Edit" }).click();
    await page.getByLabel("Note").fill("Tiny, but it talks.");
    await page.getByRole("button", { name: "Save note" }).click();
    await page.locator(".note").getByText("Tiny, but it talks.").waitFor();
    const held = await readJson<Collection>(await hub.request(`/api/collections/${slug}`, { token }));
    expect(held.items.map((item) => [item.id, item.note?.text])).toEqual([
      ["alice/gpt", "Tiny, but it talks."],
    ]);

    // The repository page names it; taken out and deleted, it is gone.
    await page.getByRole("link", { name: "alice/gpt" }).click();
    await page.getByRole("link", { name: "Small models" }).click();
    await page.locator("summary", { hasText: "Edit" }).click();
    await page.getByRole("button", { name: "Remove alice/gpt" }).click();
    await page.getByText("Nothing in it yet").waitFor();
    await page.getByRole("button", { name: "Delete this collection" }).click();
    await page.getByText("No collections yet.").waitFor();
    expect(new URL(page.url()).pathname).toBe("/collections/alice");
    expect((await hub.request(`/api/collections/${slug}`, { token })).status).toBe(404);
    await context.close();
    expect(problems).toEqual([]);
  });

  it("has no serious accessibility finding on the new pages at 375 px, light and dark, and fits the width", async () => {
    const made = await hub.request("/api/collections", {
      method: "POST",
      token,
      json: { title: "Audited", namespace: "alice", description: "For axe" },
    });
    const { slug } = await readJson<Collection>(made);
    await hub.request(`/api/collections/${slug}/items`, {
      method: "POST",
      token,
      json: { item: { type: "model", id: "alice/gpt" }, note: "A note" },
    });
    const findings: string[] = [];
    for (const colorScheme of ["light", "dark"] as const) {
      const { context, problems } = await watchedContext(browser, hub, 375, { colorScheme });
      const page = await context.newPage();
      await page.goto(`${hub.url}/login?next=/`);
      await signInOnPage(page, "alice", password);
      await page.getByRole("heading", { name: "Trending models" }).waitFor();
      for (const url of [
        "/",
        "/models?task=text-generation&license=mit&sort=likes",
        "/alice/gpt",
        `/collections/${slug}`,
        "/collections/alice",
        "/collections/new",
      ]) {
        await page.goto(`${hub.url}${url}`);
        await page.evaluate(AXE_SOURCE);
        const results = await page.evaluate<AxeResults>(`axe.run(document, { resultTypes: ["violations"] })`);
        for (const violation of results.violations)
          if (violation.impact === "serious" || violation.impact === "critical")
            findings.push(
              `${colorScheme} ${url}: ${violation.id} ${violation.nodes.map((n) => n.target).join(" ")}`,
            );
        const width = await page.evaluate<number>("document.documentElement.scrollWidth");
        if (width > 375) findings.push(`${colorScheme} ${url}: ${width} px wide`);
      }
      await context.close();
      expect(problems).toEqual([]);
    }
    expect(findings).toEqual([]);
  });
});
