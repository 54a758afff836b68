import { mkdirSync } from "node:fs";
import type { OrgMember } from "@hub/api";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../test-support/browser.js";
import { readJson, startHub, type TestHub } from "../test-support/hub-process.js";
import { hydrated, screenshot, SCREENSHOTS, signInOnPage, watchedPage, WIDTHS } from "../test-support/web.js";

/**
 * The issue's journey "an organization admin adds a member", in Chromium against a real hubd at phone and
 * desktop widths: an admin creates an organization and adds a member from its settings, and the member then
 * finds the organization on their own page. Watched for dialogs, console errors and requests to other origins.
 */
describe("organizations in a browser", () => {
  let hub: TestHub;
  let browser: Browser;

  const signIn = signInOnPage;

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    hub = await startHub();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await hub?.stop();
  });

  it.each(WIDTHS)(
    "an organization admin creates an organization and adds a member at %i px",
    async (width) => {
      const admin = `alice${width}`;
      const member = `bob${width}`;
      const org = `acme${width}`;
      const { password: adminPassword } = await hub.createUser(admin);
      const { password: memberPassword } = await hub.createUser(member);
      const token = await hub.createToken(admin);

      // The admin creates the organization from the form; it opens.
      const { context, page, problems } = await watchedPage(browser, hub, width);
      await page.goto(`${hub.url}/organizations/new`);
      await signIn(page, admin, adminPassword);
      await page.getByRole("heading", { name: "Create an organization" }).waitFor();
      await page.getByLabel(/^Name/).fill(org);
      await page.getByLabel(/^Full name/).fill(`Acme ${width}`);
      await screenshot(page, "org-new");
      await page.getByRole("button", { name: "Create organization" }).click();
      await page.getByRole("heading", { name: `Acme ${width}` }).waitFor();
      expect(new URL(page.url()).pathname).toBe(`/${org}`);

      // From its page to its settings, where the member is added with a role.
      await page.getByRole("link", { name: "Organization settings" }).click();
      await page.getByRole("heading", { name: "Members", exact: true }).waitFor();
      await page.getByLabel("Username").fill(member);
      await page.getByLabel("Role", { exact: true }).selectOption("write");
      await page.getByRole("button", { name: "Add member" }).click();
      await page.getByRole("status").getByText(`Added ${member} as write.`).waitFor();
      await page.getByRole("button", { name: `Remove ${member}` }).waitFor();
      const members = await readJson<OrgMember[]>(
        await hub.request(`/api/organizations/${org}/members`, { token }),
      );
      expect(members).toContainEqual(expect.objectContaining({ user: member, role: "write" }));
      await screenshot(page, "org-settings-members");

      // A refusal is shown with the API's message (by the page's scripts: see hydrated).
      await hydrated(page);
      await page.getByLabel("Username").fill("nobody-here");
      await page.getByRole("button", { name: "Add member" }).click();
      await page.getByRole("alert").getByText('No user is called "nobody-here".').waitFor();

      // The other settings pages render for the admin.
      await page.getByRole("link", { name: "Webhooks" }).click();
      await page.getByRole("heading", { name: "Add a webhook" }).waitFor();
      await screenshot(page, "org-settings-webhooks");
      await page.getByRole("link", { name: "Inference" }).click();
      await page.getByRole("heading", { name: "Preferences" }).waitFor();
      await screenshot(page, "org-settings-inference");
      await page.getByRole("link", { name: "Single sign-on" }).click();
      await page.getByRole("heading", { name: "Provider" }).waitFor();
      await screenshot(page, "org-settings-sso");
      await context.close();

      // The member finds the organization on their own page, and its members with it.
      const visit = await watchedPage(browser, hub, width);
      await visit.page.goto(`${hub.url}/login?next=${encodeURIComponent(`/${member}`)}`);
      await signIn(visit.page, member, memberPassword);
      await visit.page.getByRole("heading", { name: "Organizations" }).waitFor();
      await visit.page.getByRole("link", { name: `Acme ${width}` }).click();
      await visit.page.getByRole("heading", { name: "Members" }).waitFor();
      await visit.page.getByRole("link", { name: admin }).waitFor();
      expect(await visit.page.getByRole("link", { name: "Organization settings" }).count()).toBe(0);
      await screenshot(visit.page, "org-page");
      await visit.context.close();

      expect([...problems, ...visit.problems]).toEqual([]);
    },
  );
});
