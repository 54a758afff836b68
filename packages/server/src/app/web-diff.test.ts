import { createHash, randomBytes } from "node:crypto";
import { uploadFiles } from "@huggingface/hub";
import type { CommitResponse } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJson, startInProcessHub, type InProcessHub } from "../test-support/hub-inprocess.js";
import { commitFiles, pageText, readPage } from "../test-support/web.js";

/**
 * The commit page (its message, signature state, parent and diff) and the upload page, rendered on the
 * server from the public API. The upload itself runs in the browser: web-diff.browser.test.ts.
 */
describe("the commit and upload pages, rendered on the server", () => {
  let hub: InProcessHub;
  let alice: string;
  let aliceCookie: string;
  let bobCookie: string;
  const weights = randomBytes(4000);

  const page = (path: string, cookie?: string) => readPage(hub, path, { cookie, redirect: "manual" });
  /** The page's HTML, without the classes Svelte adds to scope its styles. */
  const text = async (path: string, cookie?: string, status = 200) =>
    (await pageText(hub, path, { cookie, status, redirect: "manual" }))
      .replace(/ class="svelte-[a-z0-9]+"/g, "")
      .replace(/ svelte-[a-z0-9]+(?=[ "])/g, "");
  /** The page's text with tags and Svelte's comments dropped and entities for quotes read. */
  const visible = (body: string) =>
    body
      .replace(/<!--[^>]*-->/g, "")
      .replace(/<[^>]+>/g, "")
      .replace(/&#39;|&apos;/g, "'")
      .replace(/&quot;/g, '"')
      .replace(/&gt;/g, ">")
      .replace(/&lt;/g, "<")
      .replace(/&amp;/g, "&")
      .replace(/\s+/g, " ");
  const commit = async (
    repo: string,
    summary: string,
    files: Record<string, string>,
    deleted: string[] = [],
  ) => {
    const response = await commitFiles(hub, alice, repo, files, {
      summary,
      description: "Why: to test the page.",
      deleted,
    });
    return (await readJson<CommitResponse>(response)).commitOid;
  };

  beforeAll(async () => {
    hub = await startInProcessHub();
    const { password: alicePassword } = await hub.createUser("alice");
    const { password: bobPassword } = await hub.createUser("bob");
    alice = await hub.createToken("alice");
    aliceCookie = await hub.signIn("alice", alicePassword);
    bobCookie = await hub.signIn("bob", bobPassword);
    for (const [name, isPrivate] of [
      ["changes", false],
      ["secret", true],
    ] as const) {
      const created = await hub.request("/api/repos", {
        method: "POST",
        token: alice,
        json: { repo_id: `alice/${name}`, private: isPrivate },
      });
      expect(created.status).toBe(201);
    }
  });
  afterAll(() => hub?.stop());

  it("shows a commit's message, author, signature state, parent and its added and removed lines", async () => {
    await commit("alice/changes", "Add notes", { "notes.txt": "alpha\nbeta\ngamma\n", "old.txt": "bye\n" });
    const sha = await commit("alice/changes", "Edit <notes>", { "notes.txt": "alpha\nBETA\ngamma\n" }, [
      "old.txt",
    ]);
    const history = await text("/alice/changes/commits/main");
    expect(history).toContain(`href="/alice/changes/commit/${sha}"`);

    const body = await text(`/alice/changes/commit/${sha}`);
    const shown = visible(body);
    expect(body).toContain("Edit &lt;notes>");
    expect(body).not.toContain("Edit <notes>");
    expect(shown).toContain("Why: to test the page.");
    expect(shown).toMatch(/alice\s+committed/);
    expect(shown).toContain("Unsigned");
    expect(shown).toContain(sha);
    const parent =
      /Parent<\/dt>\s*<dd[^>]*>(?:\s|<!--[^>]*-->)*<a href="\/alice\/changes\/commit\/([0-9a-f]{40})"/.exec(
        body,
      )?.[1];
    expect(parent).toMatch(/^[0-9a-f]{40}$/);
    expect(shown).toMatch(/2\s+files changed/);

    // Each changed line sits in a row with its numbers: removed (old number), added (new number).
    expect(body).toMatch(
      /<tr class="removed"><td class="num">2<\/td><td class="num"><\/td><td class="code"><span class="mark">-<\/span>beta/,
    );
    expect(body).toMatch(
      /<tr class="added"><td class="num"><\/td><td class="num">2<\/td><td class="code"><span class="mark">\+<\/span>BETA/,
    );
    expect(body).toMatch(/<tr class="context"><td class="num">1<\/td><td class="num">1<\/td>/);
    expect(shown).toMatch(/Removed\s+old\.txt/);
    expect(body).toMatch(
      /<tr class="removed"><td class="num">1<\/td><td class="num"><\/td><td class="code"><span class="mark">-<\/span>bye/,
    );

    // The parent's page is the first commit's diff against nothing.
    expect(visible(await text(`/alice/changes/commit/${parent}`))).toMatch(/Added\s+notes\.txt/);
  });

  it("summarises an LFS change by the objects' sizes and hashes instead of showing the pointer", async () => {
    const upload = async (content: Buffer) =>
      (
        await uploadFiles({
          repo: { type: "model", name: "alice/changes" },
          accessToken: alice,
          hubUrl: hub.url,
          fetch: (input: string | URL | Request, init?: RequestInit) =>
            hub.fetch(input instanceof Request ? input.url : input, init),
          files: [{ path: "model.bin", content: new Blob([content]) }],
        })
      )?.commit.oid ?? "";
    await upload(weights);
    const bigger = randomBytes(6000);
    const sha = await upload(bigger);
    const shown = visible(await text(`/alice/changes/commit/${sha}`));
    const oldOid = createHash("sha256").update(weights).digest("hex");
    const newOid = createHash("sha256").update(bigger).digest("hex");
    expect(shown).toContain(
      `LFS file changed: 4.0 kB (sha256 ${oldOid.slice(0, 12)}…) → 6.0 kB (sha256 ${newOid.slice(0, 12)}…)`,
    );
    expect(shown).not.toContain("version https://git-lfs.github.com/spec/v1");
  });

  it("hides a private repository's commit from outsiders and refuses an unknown one", async () => {
    const sha = await commit("alice/secret", "Secret plans", { "plan.txt": "the plan\n" });
    expect(visible(await text(`/alice/secret/commit/${sha}`, aliceCookie))).toContain("the plan");
    expect(await text(`/alice/secret/commit/${sha}`, bobCookie, 404)).not.toContain("the plan");
    expect(await text(`/alice/secret/commit/${sha}`, undefined, 404)).not.toContain("the plan");
    await text(`/alice/changes/commit/${"0".repeat(40)}`, aliceCookie, 404);
  });

  it("offers the upload page to the signed in, with a progress bar and what to do without JavaScript", async () => {
    const tree = await text("/alice/changes/tree/main", aliceCookie);
    expect(tree).toContain('href="/alice/changes/upload/main"');
    expect(await text("/alice/changes/tree/main")).not.toContain("/upload/");

    const anonymous = await page("/alice/changes/upload/main");
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("location")).toBe("/login?next=%2Falice%2Fchanges%2Fupload%2Fmain");

    const body = await text("/alice/changes/upload/main", aliceCookie);
    expect(body).toContain('<label class="button" for="upload-files">Choose files</label>');
    expect(body).toMatch(/<input id="upload-files"[^>]*type="file"[^>]*multiple/);
    expect(body).toMatch(/<label for="upload-summary">Commit message<\/label>/);
    expect(visible(body)).toContain("Uploading from this page needs JavaScript.");
    // Until the page's script runs, nothing can be submitted.
    expect(body).toMatch(/<button class="primary" type="submit" disabled/);
    expect(visible(await text("/alice/changes/upload/v1", aliceCookie))).toContain("v1 is not a branch");
    await text("/alice/secret/upload/main", bobCookie, 404);
  });
});
