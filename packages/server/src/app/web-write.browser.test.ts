import { mkdirSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../test-support/browser.js";
import { startHub, type TestHub } from "../test-support/hub-process.js";
import { hydrated, screenshot, SCREENSHOTS, watchedContext, WIDTHS } from "../test-support/web.js";

/**
 * Writing from the browser, in a real Chromium against a real `hubd`: create a repository, write its card
 * through the new-file form, edit it, see it rendered, make the repository private and delete it by typing
 * its id; watched for dialogs, console errors and requests to any other origin.
 */
describe("writing from the browser", () => {
  let hub: TestHub;
  let browser: Browser;
  let password: string;

  const watched = (width: number) => watchedContext(browser, hub, width);
  const shot = (page: Page, name: string) => screenshot(page, `write-${name}`);

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    hub = await startHub();
    ({ password } = await hub.createUser("alice"));
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await hub?.stop();
  });

  it.each(WIDTHS)(
    "creates a model, writes and edits its card, makes it private and deletes it at %i pixels",
    async (width) => {
      const name = `journey-${width}`;
      const { context, problems } = await watched(width);
      const page = await context.newPage();
      await page.goto(`${hub.url}/login?next=%2Fnew`);
      await page.getByLabel("User name or email").fill("alice");
      await page.getByLabel("Password").fill(password);
      await page.getByRole("button", { name: "Sign in" }).click();

      await page.getByRole("heading", { name: "Create a new repository" }).waitFor();
      // The refusals below are meant to come back to the page's scripts, not as 400 documents (see hydrated).
      await hydrated(page);
      await page.getByLabel("Name", { exact: true }).fill("Not Valid");
      await page.getByRole("button", { name: "Create repository" }).click();
      await page.getByRole("alert").filter({ hasText: "is not a valid repository name" }).waitFor();
      expect(await page.getByLabel("Name", { exact: true }).getAttribute("aria-invalid")).toBe("true");
      await page.getByLabel("Name", { exact: true }).fill(name);
      await page.getByRole("radio", { name: "Model" }).check();
      await page.getByRole("radio", { name: /Public/ }).check();
      await shot(page, "new");
      await page.getByRole("button", { name: "Create repository" }).click();
      await page.waitForURL(`${hub.url}/alice/${name}`);

      await page
        .getByRole("navigation", { name: "Repository" })
        .getByRole("link", { name: "Files and versions" })
        .click();
      await page.getByText("Add file").click();
      await page.getByRole("link", { name: "Create a new file" }).click();
      await page.getByLabel("File path").fill("README.md");
      await page.getByLabel("Content").fill("# Journey\n\nWritten in the browser.\n");
      await page.getByLabel("Commit message").fill("Add the card");
      await shot(page, "new-file");
      await page.getByRole("button", { name: "Commit new file" }).click();
      await page.waitForURL(`${hub.url}/alice/${name}/blob/main/README.md`);
      await page.getByText("Written in the browser.").waitFor();

      await page.getByRole("link", { name: "Edit" }).click();
      const content = page.getByLabel("Content of README.md");
      expect(await content.inputValue()).toBe("# Journey\n\nWritten in the browser.\n");
      await content.fill("# Journey\n\nEdited in the browser.\n");
      await page.getByLabel("Commit message").fill("Edit the card");
      await shot(page, "edit");
      await page.getByRole("button", { name: "Commit changes" }).click();
      await page.waitForURL(`${hub.url}/alice/${name}/blob/main/README.md`);
      await page.getByText("Edited in the browser.").waitFor();

      await page
        .getByRole("navigation", { name: "Repository" })
        .getByRole("link", { name: "Model card" })
        .click();
      await page.getByRole("heading", { name: "Journey", exact: true }).waitFor();
      await page.getByText("Edited in the browser.").waitFor();
      await shot(page, "card");
      await page
        .getByRole("navigation", { name: "Repository" })
        .getByRole("link", { name: "History" })
        .click();
      await page.getByRole("link", { name: "Edit the card" }).waitFor();

      await page
        .getByRole("navigation", { name: "Repository" })
        .getByRole("link", { name: "Settings" })
        .click();
      await page.getByRole("button", { name: "Make private" }).click();
      await page.getByRole("status").filter({ hasText: "The repository is now private." }).waitFor();
      await page.getByRole("button", { name: "Make public" }).waitFor();
      expect(await page.locator("h1 .badge.private").count()).toBe(1);
      await shot(page, "settings");

      await hydrated(page);
      await page.getByLabel("Repository to delete").fill(name);
      await page.getByRole("button", { name: "Delete this repository" }).click();
      await page.getByRole("alert").filter({ hasText: "nothing was deleted" }).waitFor();
      await page.getByLabel("Repository to delete").fill(`alice/${name}`);
      await page.getByRole("button", { name: "Delete this repository" }).click();
      await page.waitForURL(`${hub.url}/alice`);
      const gone = await page.goto(`${hub.url}/alice/${name}`);
      expect(gone?.status()).toBe(404);
      // The 404 document itself is the only failed request.
      expect(problems.filter((p) => !p.includes("404"))).toEqual([]);
      await context.close();
    },
  );
});
