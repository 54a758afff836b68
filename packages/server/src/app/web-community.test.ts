import type { CommitResponse, DiscussionDetails, DiscussionList } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJson, startInProcessHub, type InProcessHub } from "../test-support/hub-inprocess.js";
import { commitFiles, pageText, postForm, readPage } from "../test-support/web.js";

/**
 * The Community tab, discussion and pull request pages, and "open as a pull request" on the write forms, driven
 * as a browser without JavaScript drives them: pages read with the session cookie, form posts from the hub's
 * origin. Every action is an API call, so the API's refusals come back as the forms' messages. The browser
 * journey is in web-community.browser.test.ts.
 */
describe("the Community tab and discussion pages", () => {
  let hub: InProcessHub;
  let alice: string;
  let bob: string;
  let aliceCookie: string;
  let bobCookie: string;
  let carolCookie: string;

  /** The page's HTML, without the classes Svelte adds to scope its styles. */
  const text = async (path: string, cookie?: string, status = 200) =>
    (await pageText(hub, path, { cookie, status, redirect: "manual" }))
      .replace(/ class="svelte-[a-z0-9]+"/g, "")
      .replace(/ svelte-[a-z0-9]+(?=[ "])/g, "");
  /** The page's text with tags and Svelte's comments dropped and entities read. */
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
  const post = (path: string, cookie: string | undefined, fields: Record<string, string>) =>
    postForm(hub, path, fields, { cookie });
  /** A form post's page, checked for its status. */
  const posted = async (
    path: string,
    cookie: string | undefined,
    fields: Record<string, string>,
    status = 200,
  ) => {
    const response = await post(path, cookie, fields);
    const body = await response.text();
    expect(response.status, body.slice(0, 400)).toBe(status);
    return body;
  };
  const api = "/api/models/alice/talk";
  const details = async (num: number) =>
    readJson<DiscussionDetails>(await hub.request(`${api}/discussions/${num}`, { token: alice }));
  const open = async (token: string, json: Record<string, unknown>, repo = api) => {
    const response = await hub.request(`${repo}/discussions`, { method: "POST", token, json });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await readJson<{ num: number }>(response)).num;
  };
  const comment = async (token: string, num: number, body: string) => {
    const response = await hub.request(`${api}/discussions/${num}/comment`, {
      method: "POST",
      token,
      json: { comment: body },
    });
    expect(response.status).toBe(200);
    return (await readJson<{ newMessage: { id: string } }>(response)).newMessage.id;
  };
  /** Opens a pull request as the clients do: a commit with create_pr=1; answers its number. */
  const proposal = async (token: string, summary: string, files: Record<string, string>) => {
    const response = await hub.request(`${api}/commit/main?create_pr=1`, {
      method: "POST",
      token,
      headers: { "content-type": "application/x-ndjson" },
      body: [
        { key: "header", value: { summary } },
        ...Object.entries(files).map(([path, content]) => ({
          key: "file",
          value: { path, content: Buffer.from(content).toString("base64"), encoding: "base64" },
        })),
      ]
        .map((line) => JSON.stringify(line))
        .join("\n"),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    const { pullRequestUrl } = await readJson<CommitResponse>(response);
    return Number(/\/discussions\/(\d+)$/.exec(pullRequestUrl ?? "")?.[1]);
  };
  const raw = async (path: string, rev = "main") =>
    (await hub.request(`/alice/talk/resolve/${encodeURIComponent(rev)}/${path}`, { token: alice })).text();
  const parentOf = (body: string) => /name="parentCommit" value="([0-9a-f]{40})"/.exec(body)?.[1] ?? "";
  const idOfComment = async (num: number, raw: string) => {
    const event = (await details(num)).events.find((e) => e.type === "comment" && e.data.latest.raw === raw);
    expect(event, `a comment reading ${raw}`).toBeTruthy();
    return event?.id ?? "";
  };

  beforeAll(async () => {
    hub = await startInProcessHub();
    const { password: alicePassword } = await hub.createUser("alice");
    const { password: bobPassword } = await hub.createUser("bob");
    const { password: carolPassword } = await hub.createUser("carol");
    alice = await hub.createToken("alice");
    bob = await hub.createToken("bob", ["--scopes", "repo:read,community:write"]);
    aliceCookie = await hub.signIn("alice", alicePassword);
    bobCookie = await hub.signIn("bob", bobPassword);
    carolCookie = await hub.signIn("carol", carolPassword);
    for (const [repo_id, repo_type] of [
      ["alice/talk", "model"],
      ["alice/busy", "model"],
      ["alice/data", "dataset"],
    ]) {
      const created = await hub.request("/api/repos", {
        method: "POST",
        token: alice,
        json: { repo_id, repo_type },
      });
      expect(created.status).toBe(201);
    }
    await commitFiles(hub, alice, "alice/talk", {
      "README.md": "# Talk\n",
      "a.txt": "one\ntwo\nthree\n",
      "docs/notes.md": "notes\n",
    });
  });
  afterAll(() => hub?.stop());

  it("lists discussions and pull requests with their status, counts and filters, and the tab counts the open ones", async () => {
    const first = await open(bob, { title: "Typo in the card", description: "Line 1 says *tpyo*." });
    await comment(alice, first, "Thanks, will fix.");
    const closed = await open(bob, { title: "Old question" });
    expect(
      (
        await hub.request(`${api}/discussions/${closed}/status`, {
          method: "POST",
          token: bob,
          json: { status: "closed" },
        })
      ).status,
    ).toBe(200);
    const fromAlice = await open(alice, { title: "Roadmap for v2" });
    const pr = await proposal(bob, "Add a line to a.txt", { "a.txt": "one\ntwo\nthree\nfour\n" });

    const card = await text("/alice/talk");
    expect(card).toMatch(
      /href="\/alice\/talk\/discussions"[^>]*>Community(?:<!--[^>]*-->|\s)*<span class="count">3<span class="visually-hidden"> open</,
    );

    const list = await text("/alice/talk/discussions");
    expect(list).toContain('href="/alice/talk/discussions"');
    const shown = visible(list);
    expect(shown).toContain("Typo in the card");
    expect(shown).toContain("Roadmap for v2");
    expect(shown).toContain("Add a line to a.txt");
    expect(shown).not.toContain("Old question");
    expect(shown).toMatch(/Open\s+Typo in the card #\d+ opened .* by bob 2 comments/);
    expect(shown).toMatch(/Open\s+Pull request\s+Add a line to a\.txt/);
    expect(list).toContain(`href="/alice/talk/discussions/${pr}"`);
    // The anonymous are offered to sign in; the signed-in to start one.
    expect(list).toContain("Sign in to start a discussion");
    expect(await text("/alice/talk/discussions", bobCookie)).toContain('href="/alice/talk/discussions/new"');

    const closedList = visible(await text("/alice/talk/discussions?status=closed"));
    expect(closedList).toContain("Closed Old question");
    expect(closedList).not.toContain("Typo in the card");
    const all = visible(await text("/alice/talk/discussions?status=all"));
    for (const title of ["Old question", "Typo in the card", "Roadmap for v2", "Add a line to a.txt"])
      expect(all).toContain(title);
    const prs = visible(await text("/alice/talk/discussions?type=pull_request"));
    expect(prs).toContain("Add a line to a.txt");
    expect(prs).not.toContain("Typo in the card");
    const talks = visible(await text("/alice/talk/discussions?type=discussion&status=all"));
    expect(talks).toContain("Old question");
    expect(talks).not.toContain("Add a line to a.txt");
    const byAlice = visible(await text("/alice/talk/discussions?author=alice"));
    expect(byAlice).toContain("Roadmap for v2");
    expect(byAlice).not.toContain("Typo in the card");
    const searched = visible(await text("/alice/talk/discussions?search=typo"));
    expect(searched).toContain("Typo in the card");
    expect(searched).not.toContain("Roadmap");
    expect(visible(await text("/alice/talk/discussions?author=nobody-here"))).toContain(
      "Nothing matches these filters.",
    );
    // A filter the API refuses is its message, not an error page.
    const refused = await text(`/alice/talk/discussions?search=${"x".repeat(300)}`, undefined, 200);
    expect(refused).toMatch(/role="alert">[^<]*search/);
    expect(fromAlice).toBeGreaterThan(0);

    // Datasets and Spaces have the same tab at their own addresses.
    await open(bob, { title: "Where is the test split?" }, "/api/datasets/alice/data");
    const dataset = await text("/datasets/alice/data/discussions");
    expect(visible(dataset)).toContain("Where is the test split?");
    expect(dataset).toContain('href="/datasets/alice/data/discussions/1"');
    expect(visible(await text("/datasets/alice/data/discussions/1"))).toContain("Where is the test split?");
  });

  it("pages the list 50 at a time", async () => {
    for (let i = 1; i <= 52; i++) await open(bob, { title: `Busy ${i}` }, "/api/models/alice/busy");
    const first = visible(await text("/alice/busy/discussions"));
    expect(first).toContain("1–50 of 52");
    expect(first).toContain("Busy 52");
    expect(first).not.toMatch(/Busy 2(?!\d)/);
    const page = await text("/alice/busy/discussions");
    expect(page).toContain('href="/alice/busy/discussions?p=1"');
    const second = visible(await text("/alice/busy/discussions?p=1"));
    expect(second).toContain("51–52 of 52");
    expect(second).toMatch(/Busy 1(?!\d)/);
    expect(second).toMatch(/Busy 2(?!\d)/);
    expect(second).toContain("Previous page");
  });

  it("shows a discussion's timeline: Markdown rendered with relative links in the repository, and its events", async () => {
    const num = await open(bob, {
      title: "Rendering check",
      description: "See [the notes](docs/notes.md) and `code`.\n\n## A heading\n\n- one\n- two",
    });
    await comment(alice, num, "**Bold** reply with ![chart](chart.png).");
    expect(
      (
        await hub.request(`${api}/discussions/${num}/title`, {
          method: "POST",
          token: bob,
          json: { title: "Rendering, checked" },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await hub.request(`${api}/discussions/${num}/status`, {
          method: "POST",
          token: alice,
          json: { status: "closed" },
        })
      ).status,
    ).toBe(200);
    const page = await text(`/alice/talk/discussions/${num}`);
    expect(page).toContain('<a href="/alice/talk/blob/main/docs/notes.md">the notes</a>');
    expect(page).toContain('<img src="/alice/talk/resolve/main/chart.png" alt="chart" />');
    expect(page).toContain("<h2>A heading</h2>");
    expect(page).toContain("<strong>Bold</strong>");
    const shown = visible(page);
    expect(shown).toContain("Rendering, checked");
    expect(shown).toContain("Closed");
    expect(shown).toContain("bob changed the title from Rendering check to Rendering, checked");
    expect(shown).toContain("alice closed this discussion");
    expect(shown).toContain("Sign in to comment");
    // The anonymous see no controls.
    expect(page).not.toContain("?/comment");
    expect(page).not.toContain("Edit title");

    // A pull request: its commit links to the commit page, its target and git commands show.
    const pr = await proposal(bob, "Edit line one", { "a.txt": "ONE\ntwo\nthree\n" });
    const prPage = await text(`/alice/talk/discussions/${pr}`);
    const commit = (await details(pr)).events.find((event) => event.type === "commit");
    expect(commit?.type === "commit" && commit.data.subject).toBe("Edit line one");
    expect(prPage).toContain(`href="/alice/talk/commit/${commit?.type === "commit" ? commit.data.oid : ""}"`);
    const prShown = visible(prPage);
    expect(prShown).toContain(`refs/pr/${pr} into main`);
    expect(prShown).toContain(`git fetch origin refs/pr/${pr}:pr/${pr}`);
    expect(prShown).toContain(`git push origin pr/${pr}:refs/pr/${pr}`);
    expect(prShown).toContain("No conflicts with main");
    expect(prPage).toContain(`href="/alice/talk/discussions/${pr}/files"`);
    // Only writers see the merge button.
    expect(prPage).not.toContain("Merge pull request");
    expect(await text(`/alice/talk/discussions/${pr}`, bobCookie)).not.toContain("Merge pull request");
    expect(await text(`/alice/talk/discussions/${pr}`, aliceCookie)).toContain("Merge pull request");

    expect((await readPage(hub, "/alice/talk/discussions/9999")).status).toBe(404);
    expect((await readPage(hub, "/alice/talk/discussions/0")).status).toBe(404);
    expect((await readPage(hub, "/alice/talk/discussions/abc")).status).toBe(404);
  });

  it("renders a hostile comment through the card's sanitizer, in the page and in the preview", async () => {
    const hostile = [
      "<script>window.owned = 1</script>",
      '<img src="x" onerror="window.owned = 2">',
      '<a href="javascript:window.owned = 3">click</a>',
      '<iframe src="https://evil.example/"></iframe>',
      '<svg onload="window.owned = 4"><circle /></svg>',
      '<a href="//evil.example/x">far</a>',
      '<div style="position:fixed" onclick="x()">styled</div>',
      '<h2 id="content">clobber</h2>',
      "![tracker](https://evil.example/pixel.png)",
      "[up](../../../../settings)",
    ].join("\n\n");
    const num = await open(bob, { title: "Hostile", description: hostile });
    // As a visitor sees it: no edit boxes, whose textareas hold the text as typed (escaped).
    const page = await text(`/alice/talk/discussions/${num}`);
    const body = page.slice(page.indexOf('class="timeline"'), page.indexOf("</ol>"));
    expect(body).toContain("styled");
    for (const bad of [
      "<script",
      "onerror",
      "javascript:",
      "<iframe",
      "<svg",
      "onload",
      "//evil.example/x",
      "style=",
      "onclick",
      'id="content"',
      '<img src="https://evil.example',
    ])
      expect(body, bad).not.toContain(bad);
    // The image elsewhere became a link; a relative link stays inside the repository.
    expect(body).toContain(
      '<a href="https://evil.example/pixel.png" rel="nofollow noopener noreferrer">tracker</a>',
    );
    expect(body).toContain('href="/alice/talk/blob/main/settings"');

    // The preview is the same server rendering, and keeps what was typed.
    const preview = await posted(`/alice/talk/discussions/${num}?/preview`, bobCookie, {
      preview: "comment",
      comment: hostile,
      branch: "main",
    });
    const shown = preview.slice(preview.indexOf('aria-label="Preview of comment"'));
    expect(shown).toContain("Preview");
    expect(shown).toContain("styled");
    for (const bad of ["<script", "onerror", "javascript:", "<iframe", "onload", "style="])
      expect(shown.slice(0, shown.indexOf("</section>")), bad).not.toContain(bad);
    expect(preview).toMatch(/&lt;script(?:&gt;|>)window\.owned = 1&lt;\/script/);
  });

  it("opens a discussion from the New discussion form, with a preview, without JavaScript", async () => {
    const anonymous = await readPage(hub, "/alice/talk/discussions/new", { redirect: "manual" });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("location")).toBe("/login?next=%2Falice%2Ftalk%2Fdiscussions%2Fnew");
    const form = await text("/alice/talk/discussions/new", bobCookie);
    expect(form).toContain('action="?/create"');
    expect(form).toContain('formaction="?/preview"');

    const preview = await posted("/alice/talk/discussions/new?/preview", bobCookie, {
      title: "Kept title",
      description: "Some **bold** words",
      preview: "description",
      branch: "main",
    });
    expect(preview).toContain("<strong>bold</strong>");
    expect(preview).toContain('value="Kept title"');
    expect(preview).toContain("Some **bold** words");

    const empty = await posted(
      "/alice/talk/discussions/new?/create",
      bobCookie,
      { title: " ", description: "x" },
      400,
    );
    expect(empty).toMatch(/role="alert">Give the discussion a title\./);
    const long = await posted(
      "/alice/talk/discussions/new?/create",
      bobCookie,
      { title: "Long", description: "x".repeat(64 * 1024) },
      400,
    );
    expect(long).toMatch(/role="alert">[^<]*64 KiB/);

    const created = await post("/alice/talk/discussions/new?/create", bobCookie, {
      title: "Made in a form",
      description: "Hello from a form.",
    });
    expect(created.status, await created.clone().text()).toBe(303);
    const location = created.headers.get("location") ?? "";
    const num = Number(/^\/alice\/talk\/discussions\/(\d+)$/.exec(location)?.[1]);
    expect(num).toBeGreaterThan(0);
    const made = await details(num);
    expect(made).toMatchObject({ title: "Made in a form", status: "open", isPullRequest: false });
    expect(made.author?.name).toBe("bob");

    const draft = await post("/alice/talk/discussions/new?/create", bobCookie, {
      title: "A draft pull request",
      description: "",
      pullRequest: "1",
    });
    expect(draft.status).toBe(303);
    const draftNum = Number(/(\d+)$/.exec(draft.headers.get("location") ?? "")?.[1]);
    expect(await details(draftNum)).toMatchObject({ isPullRequest: true, status: "draft" });
    expect(visible(await text(`/alice/talk/discussions/${draftNum}`, bobCookie))).toContain("Mark as ready");
  });

  it("comments, reacts, edits, hides, renames, closes and reopens through form posts", async () => {
    const num = await open(bob, { title: "Form actions" });
    const page = `/alice/talk/discussions/${num}`;
    const commented = await posted(`${page}?/comment`, aliceCookie, { comment: "Hi @bob, see `a.txt`." });
    expect(commented).toContain("Hi @bob, see <code>a.txt</code>.");
    const reply = await idOfComment(num, "Hi @bob, see `a.txt`.");

    const reacted = await posted(`${page}?/react`, bobCookie, { commentId: reply, reaction: "🔥", on: "1" });
    expect(reacted).toMatch(
      /aria-pressed="true"[^>]*><span aria-hidden="true">🔥<\/span><span class="visually-hidden">fire<\/span>\s*1/,
    );
    const another = await posted(`${page}?/react`, aliceCookie, {
      commentId: reply,
      reaction: "🔥",
      on: "1",
    });
    expect(another).toMatch(/aria-pressed="true"[^>]*>[^]*?fire<\/span>\s*2/);
    const event = (await details(num)).events.find((e) => e.id === reply);
    expect(event?.type === "comment" && event.data.reactions).toEqual([
      { reaction: "🔥", users: ["bob", "alice"], count: 2 },
    ]);
    const taken = await posted(`${page}?/react`, bobCookie, { commentId: reply, reaction: "🔥", on: "0" });
    expect(taken).toMatch(/aria-pressed="false"[^>]*>[^]*?fire<\/span>\s*1/);

    const edited = await posted(`${page}?/edit`, aliceCookie, {
      commentId: reply,
      content: "Hi @bob, fixed.",
    });
    expect(visible(edited)).toMatch(/alice commented .* edited/);
    expect(visible(edited)).toContain("Hi @bob, fixed.");

    const renamed = await posted(`${page}?/rename`, bobCookie, { title: "Form actions, renamed" });
    expect(visible(renamed)).toContain("bob changed the title from Form actions to Form actions, renamed");

    const closed = await posted(`${page}?/status`, bobCookie, { status: "closed", comment: "Done here." });
    expect(visible(closed)).toContain("bob closed this discussion");
    expect(visible(closed)).toContain("Done here.");
    expect(closed).toContain('value="open"');
    expect(visible(closed)).toContain("Reopen discussion");
    const reopened = await posted(`${page}?/status`, bobCookie, { status: "open", comment: "" });
    expect(visible(reopened)).toContain("bob reopened this discussion");

    const hidden = await posted(`${page}?/hide`, aliceCookie, { commentId: reply });
    expect(visible(hidden)).toContain("This comment has been hidden by alice.");
    expect(visible(hidden)).not.toContain("Hi @bob, fixed.");
    expect((await details(num)).title).toBe("Form actions, renamed");
  });

  it("hides the controls the API would refuse, and shows its refusal when a post is sent anyway", async () => {
    const num = await open(alice, { title: "Alice's topic", description: "Alice wrote this." });
    const page = `/alice/talk/discussions/${num}`;
    const hers = await idOfComment(num, "Alice wrote this.");
    const bobs = await comment(bob, num, "Bob's reply.");

    const asBob = await text(page, bobCookie);
    expect(asBob).not.toContain("Edit title");
    expect(asBob).not.toContain("Close discussion");
    expect(asBob).toContain('action="?/comment"');
    // Bob may edit and hide his own comment, not alice's.
    expect(asBob).toContain(`id="edit-${bobs}"`);
    expect(asBob).not.toContain(`id="edit-${hers}"`);
    const asAlice = await text(page, aliceCookie);
    expect(asAlice).toContain("Edit title");
    expect(asAlice).toContain("Close discussion");
    expect(asAlice).toContain(`id="edit-${bobs}"`);

    const rename = await posted(`${page}?/rename`, bobCookie, { title: "Bob's now" }, 403);
    expect(rename).toMatch(/role="alert">[^<]+/);
    const edit = await posted(`${page}?/edit`, bobCookie, { commentId: hers, content: "vandalised" }, 403);
    expect(edit).toMatch(/role="alert">[^<]+/);
    expect(edit).toContain("vandalised");
    const hide = await posted(`${page}?/hide`, carolCookie, { commentId: hers }, 403);
    expect(hide).toMatch(/role="alert">[^<]+/);
    const close = await posted(
      `${page}?/status`,
      bobCookie,
      { status: "closed", comment: "closing it" },
      403,
    );
    expect(close).toMatch(/role="alert">[^<]+/);
    expect(close).toContain("closing it");
    const tooLong = await posted(`${page}?/comment`, bobCookie, { comment: "y".repeat(64 * 1024) }, 400);
    expect(tooLong).toMatch(/role="alert">[^<]*64 KiB/);
    const anonymous = await posted(`${page}?/comment`, undefined, { comment: "hello" }, 401);
    expect(anonymous).toMatch(/role="alert">[^<]+/);

    const after = await details(num);
    expect(after.title).toBe("Alice's topic");
    expect(after.status).toBe("open");
    expect(after.events.some((e) => e.type === "comment" && e.data.latest.raw === "vandalised")).toBe(false);
    expect(after.events.filter((e) => e.type === "comment")).toHaveLength(2);

    // Merging: a reader's post is refused by the API; a conflicting pull request names its files.
    const pr = await proposal(bob, "Change line two", { "a.txt": "one\nTWO\nthree\n" });
    const refused = await posted(
      `/alice/talk/discussions/${pr}?/merge`,
      bobCookie,
      { mergeComment: "" },
      403,
    );
    expect(refused).toMatch(/role="alert">[^<]+/);
    const rival = await proposal(bob, "Change line two again", { "a.txt": "one\nzwei\nthree\n" });
    const merged = await posted(`/alice/talk/discussions/${pr}?/merge`, aliceCookie, {
      mergeComment: "Thanks!",
    });
    expect(visible(merged)).toContain("alice merged this pull request");
    expect(visible(merged)).toContain("Thanks!");
    expect(await raw("a.txt")).toBe("one\nTWO\nthree\n");
    const conflicted = await text(`/alice/talk/discussions/${rival}`, aliceCookie);
    expect(visible(conflicted)).toContain("This pull request has conflicts");
    expect(conflicted).toContain("<li><code>a.txt</code></li>");
    expect(conflicted).not.toContain("Merge pull request");
    const forced = await posted(`/alice/talk/discussions/${rival}?/merge`, aliceCookie, {}, 409);
    expect(forced).toMatch(/role="alert">[^<]*a\.txt/);
    const files = await text(`/alice/talk/discussions/${rival}/files`, aliceCookie);
    expect(visible(files)).toContain("conflicts in: a.txt");
  });

  it("shows a pull request's Files changed from its unified diff", async () => {
    const pr = await proposal(bob, "Several changes", {
      "docs/notes.md": "notes\nmore notes\n",
      "new.txt": "brand new\n",
    });
    const files = await text(`/alice/talk/discussions/${pr}/files`);
    const shown = visible(files);
    expect(shown).toContain("2 files changed, +2 −0 against main");
    expect(shown).toContain("Modified docs/notes.md");
    expect(shown).toContain("Added new.txt");
    expect(files).toContain('aria-label="Changes to docs/notes.md"');
    expect(files).toMatch(
      /<tr class="added">\s*<td class="num"><\/td>\s*<td class="num">2<\/td>\s*<td class="code"><span class="mark">\+<\/span>more notes/,
    );
    const head = (await details(pr)).changes?.head ?? "";
    expect(files).toContain(`href="/alice/talk/blob/${head}/new.txt"`);
    expect(files).toContain('aria-current="page">Files changed');
    // A discussion has no Files changed.
    const plain = await open(bob, { title: "No files here" });
    expect((await readPage(hub, `/alice/talk/discussions/${plain}/files`)).status).toBe(404);
  });

  it("opens a pull request from the new, edit and delete forms, and offers a reader only that", async () => {
    const editForm = await text("/alice/talk/edit/main/README.md", bobCookie);
    expect(editForm).toMatch(/<input type="hidden" name="target" value="pr"\s*\/?>/);
    expect(editForm).not.toContain('value="direct"');
    expect(visible(editForm)).toContain("You may not write to this repository directly");
    expect(visible(editForm)).toContain("Open a pull request");
    // A writer chooses.
    const aliceForm = await text("/alice/talk/edit/main/README.md", aliceCookie);
    expect(aliceForm).toContain('value="direct"');
    expect(aliceForm).toContain('value="pr"');
    // The reader's Files tab and file page lead to the forms.
    expect(await text("/alice/talk/blob/main/README.md", bobCookie)).toContain(
      'href="/alice/talk/edit/main/README.md"',
    );
    expect(await text("/alice/talk/tree/main", bobCookie)).toContain('href="/alice/talk/upload/main"');
    expect(await text("/alice/talk/blob/main/README.md")).not.toContain("/alice/talk/edit/");

    const edited = await post("/alice/talk/edit/main/README.md", bobCookie, {
      parentCommit: parentOf(editForm),
      crlf: "0",
      content: "# Talk\n\nProposed by bob.\n",
      summary: "Propose a card",
      target: "pr",
    });
    expect(edited.status, await edited.clone().text()).toBe(303);
    const num = Number(/^\/alice\/talk\/discussions\/(\d+)$/.exec(edited.headers.get("location") ?? "")?.[1]);
    expect(num).toBeGreaterThan(0);
    expect(await details(num)).toMatchObject({
      title: "Propose a card",
      isPullRequest: true,
      status: "open",
    });
    expect(await raw("README.md", `refs/pr/${num}`)).toBe("# Talk\n\nProposed by bob.\n");
    expect(await raw("README.md")).toBe("# Talk\n");

    const created = await post("/alice/talk/new/main", bobCookie, {
      parentCommit: parentOf(await text("/alice/talk/new/main", bobCookie)),
      path: "docs/bob.md",
      content: "from bob\n",
      target: "pr",
    });
    expect(created.status, await created.clone().text()).toBe(303);
    const createdNum = Number(/(\d+)$/.exec(created.headers.get("location") ?? "")?.[1]);
    expect(await raw("docs/bob.md", `refs/pr/${createdNum}`)).toBe("from bob\n");
    expect((await details(createdNum)).title).toBe("Create docs/bob.md");

    const deleted = await post("/alice/talk/delete/main/docs/notes.md", aliceCookie, {
      parentCommit: parentOf(await text("/alice/talk/delete/main/docs/notes.md", aliceCookie)),
      target: "pr",
    });
    expect(deleted.status).toBe(303);
    const deletedNum = Number(/(\d+)$/.exec(deleted.headers.get("location") ?? "")?.[1]);
    expect((await details(deletedNum)).author?.name).toBe("alice");
    expect(await raw("docs/notes.md")).toBe("notes\n");
    const files = visible(await text(`/alice/talk/discussions/${deletedNum}/files`));
    expect(files).toContain("Removed docs/notes.md");

    // What the reader's form cannot do, the API refuses: a direct commit.
    const direct = await post("/alice/talk/edit/main/README.md", bobCookie, {
      parentCommit: parentOf(editForm),
      crlf: "0",
      content: "# Direct\n",
      target: "direct",
    });
    expect(direct.status).toBe(403);
    expect(await raw("README.md")).toBe("# Talk\n");
    // The anonymous are asked to sign in, as before.
    expect(visible(await text("/alice/talk/edit/main/README.md", undefined, 401))).toContain(
      "Sign in to change this repository",
    );
    const list = await readJson<DiscussionList>(
      await hub.request(`${api}/discussions?type=pull_request&author=bob`, { token: alice }),
    );
    expect(list.discussions.map((d) => d.num)).toEqual(expect.arrayContaining([num, createdNum]));
  });

  it("shows the inbox: a mention, its filters, marking one and all read, and the header's unread badge", async () => {
    const anonymous = await readPage(hub, "/notifications", { redirect: "manual" });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("location")).toBe("/login?next=%2Fnotifications");
    expect(visible(await text("/notifications", carolCookie))).toContain("No notifications yet.");
    expect(await text("/alice/talk", carolCookie)).toMatch(
      /href="\/notifications"[^>]*>Inbox(?:<!--[^>]*-->)*<\/a>/,
    );

    const num = await open(bob, { title: "Ask carol" });
    const mention = await comment(alice, num, "What do you think, @carol?");
    const header = await text("/alice/talk", carolCookie);
    expect(header).toMatch(
      /href="\/notifications"[^>]*>Inbox(?:<!--[^>]*-->|\s)*<span class="unread">1<span class="visually-hidden"> unread</,
    );
    const inbox = await text("/notifications", carolCookie);
    expect(inbox).toContain(`href="/alice/talk/discussions/${num}#${mention}"`);
    const shown = visible(inbox);
    expect(shown).toContain("Unread Open Ask carol");
    expect(shown).toContain("alice commented on a discussion in alice/talk Mentioned you");
    expect(inbox).toContain('href="/notifications?repo=model%2Falice%2Ftalk"');
    // The link's anchor is the comment on the discussion's page.
    expect(await text(`/alice/talk/discussions/${num}`, carolCookie)).toContain(`id="${mention}"`);

    expect(visible(await text("/notifications?unread=1", carolCookie))).toContain("Ask carol");
    expect(visible(await text("/notifications?kind=pull_request", carolCookie))).toContain(
      "No notification matches these filters.",
    );
    expect(visible(await text("/notifications?repo=model/alice/data", carolCookie))).toContain(
      "No notification matches these filters.",
    );
    // A repository typed without its type is a model's.
    expect(visible(await text("/notifications?repo=alice/talk&kind=discussion", carolCookie))).toContain(
      "Ask carol",
    );
    expect(await text("/notifications?repo=nonsense", carolCookie)).toMatch(/role="alert">[^<]*repo/);

    const id = /name="id" value="([0-9a-f]{24})"/.exec(inbox)?.[1] ?? "";
    const read = await posted("/notifications?/read", carolCookie, { id });
    expect(visible(read)).not.toContain("Unread Open Ask carol");
    expect(read).not.toContain("Mark all as read");
    expect(visible(await text("/notifications?unread=1", carolCookie))).toContain(
      "No notification matches these filters.",
    );
    expect(await text("/alice/talk", carolCookie)).toMatch(
      /href="\/notifications"[^>]*>Inbox(?:<!--[^>]*-->)*<\/a>/,
    );
    const foreign = await posted("/notifications?/read", bobCookie, { id }, 404);
    expect(foreign).toMatch(/role="alert">[^<]+/);

    await comment(alice, num, "@carol one more");
    await comment(bob, num, "@carol and from me");
    const all = await posted("/notifications?/readAll", carolCookie, { repo: "model/alice/talk", kind: "" });
    expect(visible(all)).toContain("2 notifications marked read.");
    const unread = await readJson<{ unreadCount: number }>(
      await hub.request("/api/notifications/unread-count", { headers: { cookie: carolCookie } }),
    );
    expect(unread.unreadCount).toBe(0);
    // No account may take the inbox's address as its handle.
    await expect(hub.createUser("notifications")).rejects.toThrow(/reserved/);
  });
});
