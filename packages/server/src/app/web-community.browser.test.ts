import { createHash, randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import type { DiscussionDetails } from "@hub/api";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../test-support/browser.js";
import { readJson, startHub, type TestHub } from "../test-support/hub-process.js";
import {
  commitFiles,
  hydrated,
  screenshot,
  SCREENSHOTS,
  signInOnPage,
  watchedContext,
  WIDTHS,
} from "../test-support/web.js";

/**
 * Discussions and pull requests in a real Chromium against a real `hubd`: bob opens a discussion on alice's
 * model (with a preview), alice replies mentioning him, bob finds the mention in his inbox (the header counts it)
 * and reacts; bob, who may not write, proposes an edit from the edit form and an upload (a text file and a Git LFS
 * file) from the upload page, each opening a pull request; alice reviews the upload's Files changed and merges
 * it, and the files are on main.
 * Both browsers are watched for dialogs, console errors and requests to any other origin.
 */
describe("discussions and pull requests in the browser", () => {
  let hub: TestHub;
  let browser: Browser;

  const shot = (page: Page, name: string) => screenshot(page, `community-${name}`);
  const details = async (token: string, repo: string, num: number) =>
    readJson<DiscussionDetails>(await hub.request(`/api/models/${repo}/discussions/${num}`, { token }));

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    hub = await startHub();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await hub?.stop();
  });

  /** A watched browser context signed in as `name`, on `next`. */
  async function signedIn(width: number, name: string, password: string, next: string) {
    const watched = await watchedContext(browser, hub, width);
    const page = await watched.context.newPage();
    await page.goto(`${hub.url}/login?next=${encodeURIComponent(next)}`);
    await signInOnPage(page, name, password);
    await page.waitForURL(`${hub.url}${next}`);
    return { ...watched, page };
  }

  it.each(WIDTHS)("discusses, proposes and merges at %i pixels", async (width) => {
    // People of their own at each width, so each inbox holds only this journey's news.
    const [aliceName, bobName] = [`alice${width}`, `bob${width}`];
    const { password: alicePassword } = await hub.createUser(aliceName);
    const { password: bobPassword } = await hub.createUser(bobName);
    const alice = await hub.createToken(aliceName);
    const repo = `${aliceName}/journey`;
    const weights = randomBytes(4000);
    const base = `/${repo}`;
    const created = await hub.request("/api/repos", {
      method: "POST",
      token: alice,
      json: { repo_id: repo, repo_type: "model" },
    });
    expect(created.status).toBe(201);
    await commitFiles(
      hub,
      alice,
      repo,
      { "README.md": "# Journey\n\nA small model.\n" },
      { summary: "Card" },
    );

    // Bob opens a discussion from the Community tab, previewing his Markdown first.
    const bob = await signedIn(width, bobName, bobPassword, base);
    await bob.page
      .getByRole("navigation", { name: "Repository" })
      .getByRole("link", { name: "Community" })
      .click();
    await bob.page.getByRole("heading", { name: "Discussions and pull requests" }).waitFor();
    await bob.page.getByText("No open discussions or pull requests yet.").waitFor();
    await bob.page.getByRole("link", { name: "New discussion" }).click();
    await bob.page.getByRole("heading", { name: "New discussion" }).waitFor();
    // Exact: the list's "Search titles" box must not be taken for it while the page changes.
    await bob.page.getByLabel("Title", { exact: true }).fill("How was it trained?");
    await bob.page
      .getByLabel("Description")
      .fill("Which **dataset** did you use? See [the card](README.md).");
    await bob.page.getByRole("button", { name: "Preview" }).click();
    const preview = bob.page.getByRole("region", { name: "Preview of description" });
    await preview.locator("strong", { hasText: "dataset" }).waitFor();
    expect(await preview.getByRole("link", { name: "the card" }).getAttribute("href")).toBe(
      `${base}/blob/main/README.md`,
    );
    // The preview kept what was typed.
    expect(await bob.page.getByLabel("Title", { exact: true }).inputValue()).toBe("How was it trained?");
    await shot(bob.page, "new");
    await bob.page.getByRole("button", { name: "Create discussion" }).click();
    await bob.page.waitForURL(`${hub.url}${base}/discussions/1`);
    await bob.page.getByRole("heading", { name: "How was it trained? #1" }).waitFor();

    // Alice replies, mentioning bob.
    const aliceSide = await signedIn(width, aliceName, alicePassword, `${base}/discussions/1`);
    const reply = aliceSide.page.getByLabel("Comment", { exact: true });
    await reply.fill(`Thanks @${bobName}: on **tiny stories**.`);
    await aliceSide.page.getByRole("button", { name: "Preview" }).click();
    await aliceSide.page
      .getByRole("region", { name: "Preview of comment" })
      .locator("strong", { hasText: "tiny stories" })
      .waitFor();
    expect(await reply.inputValue()).toBe(`Thanks @${bobName}: on **tiny stories**.`);
    await aliceSide.page.getByRole("button", { name: "Comment", exact: true }).click();
    const aliceComment = aliceSide.page.getByRole("article", { name: `Comment by ${aliceName}` });
    await aliceComment.locator("strong", { hasText: "tiny stories" }).waitFor();
    await expect.poll(() => reply.inputValue()).toBe("");

    // Bob, mentioned, finds it in his inbox (the header counts it), marks it read and follows it.
    await bob.page.reload();
    await bob.page.getByRole("link", { name: "Inbox 1 unread" }).click();
    await bob.page.waitForURL(`${hub.url}/notifications`);
    const note = bob.page.getByRole("listitem").filter({ hasText: "How was it trained?" });
    await note.getByText(`${aliceName} commented on a discussion in`).waitFor();
    await note.getByText("Mentioned you").waitFor();
    await shot(bob.page, "inbox");
    await note.getByRole("button", { name: "Mark as read" }).click();
    await bob.page.getByRole("link", { name: "Inbox", exact: true }).waitFor();
    expect(await note.getByText("Unread", { exact: true }).count()).toBe(0);
    await note.getByRole("link", { name: "How was it trained?" }).click();
    await bob.page.waitForURL(new RegExp(`${base}/discussions/1#[0-9a-f]{24}$`));

    // And reacts.
    const hers = bob.page.getByRole("article", { name: `Comment by ${aliceName}` });
    await hers.getByText(`Thanks @${bobName}: on`).waitFor();
    await hers.getByText("React", { exact: true }).click();
    await hers.getByRole("button", { name: "fire", exact: true }).click();
    await hers.getByRole("button", { name: "fire 1", pressed: true }).waitFor();
    await shot(bob.page, "discussion");
    const reacted = (await details(alice, repo, 1)).events.find(
      (event) => event.type === "comment" && event.author?.name === aliceName,
    );
    expect(reacted?.type === "comment" && reacted.data.reactions).toEqual([
      { reaction: "🔥", users: [bobName], count: 1 },
    ]);

    // Bob may not write: the edit form offers only a pull request.
    await bob.page.goto(`${hub.url}${base}/blob/main/README.md`);
    await bob.page.getByRole("link", { name: "Edit", exact: true }).click();
    await bob.page.getByText("You may not write to this repository directly").waitFor();
    expect(await bob.page.getByRole("radio").count()).toBe(0);
    await bob.page
      .getByLabel("Content of README.md")
      .fill("# Journey\n\nA small model, trained on tiny stories.\n");
    await bob.page.getByLabel("Commit message").fill("Say what it was trained on");
    await shot(bob.page, "edit-as-pull-request");
    await bob.page.getByRole("button", { name: "Open a pull request" }).click();
    await bob.page.waitForURL(`${hub.url}${base}/discussions/2`);
    await bob.page.getByRole("heading", { name: "Say what it was trained on #2" }).waitFor();
    await bob.page.getByText(`git push origin pr/2:refs/pr/2`).waitFor();

    // And uploads a file from the upload page, as another pull request.
    await bob.page.goto(`${hub.url}${base}/tree/main`);
    await bob.page.getByRole("link", { name: "Upload files" }).click();
    await bob.page.getByRole("heading", { name: "Upload files" }).waitFor();
    const upload = bob.page.getByRole("button", { name: "Open a pull request" });
    await expect.poll(() => upload.isEnabled()).toBe(true);
    // weights.bin goes through Git LFS (the default .gitattributes tracks *.bin): a batch without a ref.
    await bob.page.setInputFiles("#upload-files", [
      { name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("Trained for 3 epochs.\n") },
      { name: "weights.bin", mimeType: "application/octet-stream", buffer: weights },
    ]);
    await bob.page.getByRole("list", { name: "Files to upload" }).getByText("weights.bin").waitFor();
    await bob.page.getByLabel("Commit message").fill("Add training notes");
    await shot(bob.page, "upload-as-pull-request");
    await upload.click();
    await bob.page.waitForURL(`${hub.url}${base}/discussions/3`);
    await bob.page.getByRole("heading", { name: "Add training notes #3" }).waitFor();
    expect((await hub.request(`${base}/resolve/main/notes.txt`, { token: alice })).status).toBe(404);

    // Alice reviews its Files changed and merges it.
    await aliceSide.page.goto(`${hub.url}${base}/discussions`);
    await aliceSide.page.getByRole("link", { name: "Add training notes" }).waitFor();
    await aliceSide.page.getByRole("link", { name: "Community 3 open" }).waitFor();
    // She owns the repository: the three new threads are in her inbox.
    await aliceSide.page.getByRole("link", { name: "Inbox 3 unread" }).waitFor();
    await shot(aliceSide.page, "list");
    await aliceSide.page.getByRole("link", { name: "Add training notes" }).click();
    await aliceSide.page.getByRole("link", { name: "Files changed" }).click();
    await aliceSide.page.waitForURL(`${hub.url}${base}/discussions/3/files`);
    const diff = aliceSide.page.getByRole("region", { name: "Changes to notes.txt" });
    await diff.getByText("Trained for 3 epochs.").waitFor();
    await aliceSide.page.getByText("2 files changed, +1 −0 against main").waitFor();
    const oid = createHash("sha256").update(weights).digest("hex");
    await aliceSide.page.getByText(`LFS file added: none → 4.0 kB (sha256 ${oid.slice(0, 12)}…)`).waitFor();
    await shot(aliceSide.page, "files");
    await aliceSide.page.getByRole("link", { name: "Conversation" }).click();
    await aliceSide.page.getByLabel("Merge comment").fill("Thank you!");
    await aliceSide.page.getByRole("button", { name: "Merge pull request" }).click();
    await aliceSide.page.getByRole("heading", { name: "Merged", exact: true }).waitFor();
    await aliceSide.page.getByText(`${aliceName} merged this pull request`).waitFor();
    await shot(aliceSide.page, "merged");

    const merged = await hub.request(`${base}/resolve/main/notes.txt`, { token: alice });
    expect(merged.status).toBe(200);
    expect(await merged.text()).toBe("Trained for 3 epochs.\n");
    const lfs = await hub.request(`${base}/resolve/main/weights.bin`, { token: alice });
    expect(Buffer.from(await lfs.arrayBuffer()).equals(weights)).toBe(true);
    expect((await details(alice, repo, 3)).status).toBe("merged");
    expect((await details(alice, repo, 2)).status).toBe("open");

    expect(bob.problems).toEqual([]);
    expect(aliceSide.problems).toEqual([]);
    await bob.context.close();
    await aliceSide.context.close();
  });

  it("keeps a comment typed before the page's scripts ran, and previews it once they run", async () => {
    const name = "earlybird";
    const { password } = await hub.createUser(name);
    const token = await hub.createToken(name);
    const repo = `${name}/notes`;
    expect(
      (
        await hub.request("/api/repos", {
          method: "POST",
          token,
          json: { repo_id: repo, repo_type: "model" },
        })
      ).status,
    ).toBe(201);
    const opened = await hub.request(`/api/models/${repo}/discussions`, {
      method: "POST",
      token,
      json: { title: "Typed early", description: "First." },
    });
    expect(opened.status).toBe(200);
    const { context, page, problems } = await signedIn(1440, name, password, `/${repo}`);
    // The page's scripts come late, as on a slow link: the person types into the server's HTML meanwhile.
    await context.route("**/_app/immutable/**", async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 400));
      await route.continue();
    });
    await page.goto(`${hub.url}/${repo}/discussions/1`, { waitUntil: "commit" });
    const reply = page.getByLabel("Comment", { exact: true });
    await reply.fill("Written **before** the scripts");
    expect(await page.locator("html[data-hydrated]").count()).toBe(0);
    await hydrated(page);
    expect(await reply.inputValue()).toBe("Written **before** the scripts");
    await page.getByRole("button", { name: "Preview" }).click();
    await page
      .getByRole("region", { name: "Preview of comment" })
      .locator("strong", { hasText: "before" })
      .waitFor();
    expect(await reply.inputValue()).toBe("Written **before** the scripts");
    expect(problems).toEqual([]);
    await context.close();
  });
});
