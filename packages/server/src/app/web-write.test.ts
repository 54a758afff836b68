import type { AccessRequest, GatedRepositoryList, RepoInfo } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJson } from "../test-support/hub-process.js";
import { startInProcessHub, type InProcessHub } from "../test-support/hub-inprocess.js";
import { commitFiles, pageText, postForm, readPage } from "../test-support/web.js";

/**
 * The pages that change repositories, driven as a browser without JavaScript drives them: form posts from the
 * hub's own origin with the session cookies. Every change goes through the public API, so what the API refuses
 * the pages refuse, with its message. The browser journey is in web-write.browser.test.ts.
 */
describe("the web site's write pages", () => {
  let hub: InProcessHub;
  let alice: string;
  let aliceCookie: string;
  let bobCookie: string;
  let bob: string;

  const page = (path: string, cookie?: string) => readPage(hub, path, { cookie, redirect: "manual" });
  const text = (path: string, cookie: string | undefined, status = 200) =>
    pageText(hub, path, { cookie, status, redirect: "manual" });
  /** A form post as a browser sends it; the page, not the test, must add the request-forgery token. */
  const post = (path: string, cookie: string | undefined, fields: Record<string, string>) =>
    postForm(hub, path, fields, { cookie });
  const info = (repo: string, type = "model") => hub.request(`/api/${type}s/${repo}`, { token: alice });
  const raw = async (repo: string, path: string, rev = "main") => {
    const response = await hub.request(`/${repo}/resolve/${rev}/${path}`, { token: alice });
    expect(response.status).toBe(200);
    return response.text();
  };
  const parentOf = (body: string) => {
    const found = /name="parentCommit" value="([0-9a-f]{40})"/.exec(body)?.[1];
    expect(found, "the form names the commit it was opened at").toBeTruthy();
    return found ?? "";
  };
  const commit = (repo: string, files: Record<string, string>, summary = "Add files") =>
    commitFiles(hub, alice, repo, files, { summary });
  const create = async (name: string, extra: Record<string, unknown> = {}) => {
    const response = await hub.request("/api/repos", {
      method: "POST",
      token: alice,
      json: { repo_id: `alice/${name}`, repo_type: "model", ...extra },
    });
    expect(response.status, await response.clone().text()).toBe(201);
  };

  beforeAll(async () => {
    hub = await startInProcessHub();
    const { password: alicePassword } = await hub.createUser("alice");
    const { password: bobPassword } = await hub.createUser("bob");
    alice = await hub.createToken("alice");
    bob = await hub.createToken("bob");
    aliceCookie = await hub.signIn("alice", alicePassword);
    bobCookie = await hub.signIn("bob", bobPassword);
    await create("shared");
    await commit("alice/shared", { "README.md": "# Shared\n", "docs/notes.txt": "notes\n" });
  });
  afterAll(() => hub?.stop());

  it("creates a repository from /new, naming the field the API refused", async () => {
    const anonymous = await page("/new");
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("location")).toBe("/login?next=%2Fnew");

    const form = await text("/new", aliceCookie);
    expect(form).toContain('<option value="alice"');
    expect(form).toMatch(/<input[^>]*name="name"/);

    const invalid = await post("/new", aliceCookie, { owner: "alice", name: "Bad Name", kind: "model" });
    expect(invalid.status).toBe(400);
    const invalidBody = await invalid.text();
    expect(invalidBody).toContain(`role="alert">Name: "Bad Name" is not a valid repository name`);
    expect(invalidBody).toMatch(/name="name"[^>]*aria-invalid="true"/);

    const created = await post("/new", aliceCookie, {
      owner: "alice",
      name: "web-made",
      kind: "model",
      visibility: "private",
    });
    expect(created.status, await created.clone().text()).toBe(303);
    expect(created.headers.get("location")).toBe("/alice/web-made");
    const made = await readJson<RepoInfo>(await info("alice/web-made"));
    expect(made.private).toBe(true);
    expect(await text("/alice/web-made", aliceCookie)).toContain("private");

    const taken = await post("/new", aliceCookie, { owner: "alice", name: "web-made", kind: "model" });
    expect(taken.status).toBe(409);
    expect(await taken.text()).toContain("Name: Repository alice/web-made already exists");

    const foreign = await post("/new", aliceCookie, { owner: "bob", name: "not-mine", kind: "model" });
    expect(foreign.status).toBe(403);
    expect(await foreign.text()).toMatch(/role="alert">Owner: /);
    expect((await hub.request("/api/models/bob/not-mine", { token: bob })).status).toBe(404);

    const noSdk = await post("/new", aliceCookie, { owner: "alice", name: "app", kind: "space" });
    expect(noSdk.status).toBe(400);
    expect(await noSdk.text()).toContain("SDK: a Space needs one");
    const space = await post("/new", aliceCookie, {
      owner: "alice",
      name: "app",
      kind: "space",
      sdk: "gradio",
    });
    expect(space.status).toBe(303);
    expect(space.headers.get("location")).toBe("/spaces/alice/app");
    expect((await readJson<RepoInfo>(await info("alice/app", "space"))).sdk).toBe("gradio");

    const foreignOrigin = await postForm(
      hub,
      "/new",
      { owner: "alice", name: "forged", kind: "model" },
      { cookie: aliceCookie, origin: "https://evil.example" },
    );
    expect(foreignOrigin.status).toBe(403);
    expect((await info("alice/forged")).status).toBe(404);
  });

  it("creates a file and edits it through the forms, committing with the parent it was opened at", async () => {
    await create("editing");
    const tree = await text("/alice/editing/tree/main", aliceCookie);
    expect(tree).toContain('href="/alice/editing/new/main"');
    expect(tree).toContain("Create a new file");

    const newForm = await text("/alice/editing/new/main", aliceCookie);
    const first = parentOf(newForm);
    const created = await post("/alice/editing/new/main", aliceCookie, {
      parentCommit: first,
      path: "README.md",
      content: "# Hello\r\n\r\nFirst words.\r\n",
      summary: "Add the card",
      target: "direct",
    });
    expect(created.status, await created.clone().text()).toBe(303);
    expect(created.headers.get("location")).toBe("/alice/editing/blob/main/README.md");
    // A textarea's lines arrive ending in CRLF; a new file is stored with the LF endings it was typed with.
    expect(await raw("alice/editing", "README.md")).toBe("# Hello\n\nFirst words.\n");

    const again = await post("/alice/editing/new/main", aliceCookie, {
      parentCommit: parentOf(await text("/alice/editing/new/main", aliceCookie)),
      path: "README.md",
      content: "overwrite?",
      target: "direct",
    });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain("README.md already exists on main");

    const blob = await text("/alice/editing/blob/main/README.md", aliceCookie);
    expect(blob).toContain('href="/alice/editing/edit/main/README.md"');
    expect(blob).toContain('href="/alice/editing/delete/main/README.md"');

    const editForm = await text("/alice/editing/edit/main/README.md", aliceCookie);
    expect(editForm).toContain("First words.");
    const edited = await post("/alice/editing/edit/main/README.md", aliceCookie, {
      parentCommit: parentOf(editForm),
      crlf: "0",
      content: "# Hello\r\n\r\nSecond words.\r\n",
      summary: "Say more",
      target: "direct",
    });
    expect(edited.status, await edited.clone().text()).toBe(303);
    expect(await raw("alice/editing", "README.md")).toBe("# Hello\n\nSecond words.\n");
    expect(await text("/alice/editing/blob/main/README.md", aliceCookie)).toContain("Second words.");
    expect(await text("/alice/editing", aliceCookie)).toContain("Second words.");
    const history = await text("/alice/editing/commits/main", aliceCookie);
    expect(history).toContain("Say more");
    expect(history).toContain("Add the card");

    // A commit on a new branch leaves main as it was.
    const branched = await post("/alice/editing/edit/main/README.md", aliceCookie, {
      parentCommit: parentOf(await text("/alice/editing/edit/main/README.md", aliceCookie)),
      crlf: "0",
      content: "# On a branch\n",
      target: "new",
      newBranch: "draft",
    });
    expect(branched.status).toBe(303);
    expect(branched.headers.get("location")).toBe("/alice/editing/blob/draft/README.md");
    expect(await raw("alice/editing", "README.md", "draft")).toBe("# On a branch\n");
    expect(await raw("alice/editing", "README.md")).toBe("# Hello\n\nSecond words.\n");

    const removal = await text("/alice/editing/delete/main/docs", aliceCookie, 404);
    expect(removal).toContain("does not exist");
    const deleted = await post("/alice/editing/delete/main/README.md", aliceCookie, {
      parentCommit: parentOf(await text("/alice/editing/delete/main/README.md", aliceCookie)),
      summary: "Remove the card",
      target: "direct",
    });
    expect(deleted.status).toBe(303);
    expect(deleted.headers.get("location")).toBe("/alice/editing/tree/main");
    expect((await hub.request("/alice/editing/resolve/main/README.md", { token: alice })).status).toBe(404);
    expect(await text("/alice/editing/commits/main", aliceCookie)).toContain("Remove the card");
  });

  it("keeps a file's CRLF line endings when it is edited", async () => {
    await commit("alice/shared", { "windows.txt": "one\r\ntwo\r\n" });
    const form = await text("/alice/shared/edit/main/windows.txt", aliceCookie);
    expect(form).toContain('name="crlf" value="1"');
    const edited = await post("/alice/shared/edit/main/windows.txt", aliceCookie, {
      parentCommit: parentOf(form),
      crlf: "1",
      content: "one\r\ntwo\r\nthree\r\n",
      target: "direct",
    });
    expect(edited.status).toBe(303);
    expect(await raw("alice/shared", "windows.txt")).toBe("one\r\ntwo\r\nthree\r\n");

    // HTML drops the newline right after <textarea>: a file starting with one is written with two.
    await commit("alice/shared", { "spaced.txt": "\nafter a blank line\n" });
    const spaced = await text("/alice/shared/edit/main/spaced.txt", aliceCookie);
    expect(spaced).toMatch(/<textarea name="content"[^>]*>\n\nafter a blank line\n<\/textarea>/);
  });

  it("shows a conflict, and commits nothing, when the branch moved since the form was opened", async () => {
    const form = await text("/alice/shared/edit/main/README.md", aliceCookie);
    const stale = parentOf(form);
    await commit("alice/shared", { "other.txt": "someone else\n" }, "Meanwhile");
    const conflict = await post("/alice/shared/edit/main/README.md", aliceCookie, {
      parentCommit: stale,
      crlf: "0",
      content: "# My careful edit\n",
      target: "direct",
    });
    expect(conflict.status).toBe(409);
    const body = await conflict.text();
    expect(body).toMatch(
      /role="alert"[^>]*>Someone changed main since you opened this page, so nothing was committed/,
    );
    expect(body).toContain("# My careful edit");
    expect(await raw("alice/shared", "README.md")).toBe("# Shared\n");
  });

  it("offers a reader only a pull request, shows them the API's refusal of the rest, and the API refuses their posts", async () => {
    const refusal = await hub.request("/api/models/alice/shared/auth-check/write", { token: bob });
    expect(refusal.status).toBe(403);
    const { error: message } = (await refusal.json()) as { error: string };

    // A signed-in reader may propose changes (issue 18): the forms are theirs, offering only a pull request
    // (web-community.test.ts follows them through); branches and settings stay the writers'.
    const blob = await text("/alice/shared/blob/main/README.md", bobCookie);
    expect(blob).toContain("/alice/shared/edit/");
    expect(blob).not.toContain("Create branch");
    const tree = await text("/alice/shared/tree/main", bobCookie);
    expect(tree).not.toContain('href="/alice/shared/settings"');
    expect(await text("/alice/shared", aliceCookie)).toContain('href="/alice/shared/settings"');
    for (const path of [
      "/alice/shared/edit/main/README.md",
      "/alice/shared/new/main",
      "/alice/shared/delete/main/README.md",
    ]) {
      const body = await text(path, bobCookie);
      expect(body).toMatch(/<input type="hidden" name="target" value="pr"\s*\/?>/);
      expect(body).not.toContain('value="direct"');
    }
    const settingsPage = await text("/alice/shared/settings", bobCookie, 403);
    expect(settingsPage).toContain(message);
    expect(settingsPage).not.toContain('name="confirm"');
    const anonymous = await text("/alice/shared/edit/main/README.md", undefined, 401);
    expect(anonymous).toContain("Sign in to change this repository");

    const parentCommit = parentOf(await text("/alice/shared/edit/main/README.md", aliceCookie));
    const forced = await post("/alice/shared/edit/main/README.md", bobCookie, {
      parentCommit,
      crlf: "0",
      content: "# Bob was here\n",
      target: "direct",
    });
    expect(forced.status).toBe(403);
    expect(await forced.text()).toContain(message);
    const settings = await post("/alice/shared/settings?/visibility", bobCookie, { visibility: "private" });
    expect(settings.status).toBe(403);
    expect(await raw("alice/shared", "README.md")).toBe("# Shared\n");
    expect((await readJson<RepoInfo>(await info("alice/shared"))).private).toBe(false);
  });

  it("creates a branch from the branch picker", async () => {
    const tree = await text("/alice/shared/tree/main", aliceCookie);
    expect(tree).toContain('action="/alice/shared/branch/new"');
    const created = await post("/alice/shared/branch/new", aliceCookie, { name: "feature", from: "main" });
    expect(created.status).toBe(303);
    expect(created.headers.get("location")).toBe("/alice/shared/tree/feature");
    const refs = (await readJson<{ branches: { name: string }[] }>(
      await hub.request("/api/models/alice/shared/refs", { token: alice }),
    )) as { branches: { name: string }[] };
    expect(refs.branches.map((b) => b.name)).toContain("feature");
    const twice = await post("/alice/shared/branch/new", aliceCookie, { name: "feature", from: "main" });
    expect(twice.status).toBe(409);
    expect(await twice.text()).toContain("Branch feature already exists");
  });

  it("changes visibility and gating, and reviews access requests, in the settings", async () => {
    await create("settled");
    const settings = await text("/alice/settled/settings", aliceCookie);
    expect(settings).toContain("Make private");
    const hidden = await post("/alice/settled/settings?/visibility", aliceCookie, { visibility: "private" });
    expect(hidden.status).toBe(200);
    expect(await hidden.text()).toContain("The repository is now private.");
    expect((await readJson<RepoInfo>(await info("alice/settled"))).private).toBe(true);
    expect((await page("/alice/settled", bobCookie)).status).toBe(404);
    const shown = await post("/alice/settled/settings?/visibility", aliceCookie, { visibility: "public" });
    expect(shown.status).toBe(200);
    expect((await readJson<RepoInfo>(await info("alice/settled"))).private).toBe(false);

    // Storage: what it uses (usedStorage), and Xet uploads turned off and on again.
    expect(settings).toMatch(/This repository stores <strong>[\d.]+ (B|KB|kB|MB)<\/strong>/);
    expect(settings).toContain("Turn Xet uploads off");
    const xetOff = await post("/alice/settled/settings?/xet", aliceCookie, { xetEnabled: "off" });
    expect(xetOff.status).toBe(200);
    expect(await xetOff.text()).toContain("clients with hf_xet need HF_HUB_DISABLE_XET=1");
    expect((await readJson<RepoInfo>(await info("alice/settled"))).xetEnabled).toBe(false);
    const xetOn = await post("/alice/settled/settings?/xet", aliceCookie, { xetEnabled: "on" });
    expect(xetOn.status).toBe(200);
    expect((await readJson<RepoInfo>(await info("alice/settled"))).xetEnabled).toBe(true);

    const wrongMode = await post("/alice/settled/settings?/gating", aliceCookie, { gated: "sometimes" });
    expect(wrongMode.status).toBe(400);
    const gated = await post("/alice/settled/settings?/gating", aliceCookie, { gated: "manual" });
    expect(gated.status).toBe(200);
    expect((await readJson<RepoInfo>(await info("alice/settled"))).gated).toBe("manual");
    const ask = await hub.request("/api/models/alice/settled/ask-access", {
      method: "POST",
      token: bob,
      json: { fields: { affiliation: "Example Labs" } },
    });
    expect(ask.status).toBe(201);
    const withRequest = await text("/alice/settled/settings", aliceCookie);
    expect(withRequest).toContain("Grant access to bob");
    expect(withRequest).toContain("Example Labs");
    const granted = await post("/alice/settled/settings?/review", aliceCookie, {
      user: "bob",
      status: "accepted",
    });
    expect(granted.status).toBe(200);
    expect(await granted.text()).toContain("No request awaits review.");
    const mine = await readJson<GatedRepositoryList>(
      await hub.request("/api/me/gated-repositories", { token: bob }),
    );
    expect(mine.requests.find((r) => r.repoId === "alice/settled")?.status).toBe("accepted");
    const accepted = await readJson<AccessRequest[]>(
      await hub.request("/api/models/alice/settled/user-access-request/accepted", { token: alice }),
    );
    expect(accepted.map((r) => r.user.user)).toEqual(["bob"]);
  });

  it("renames a repository, and deletes it only when its full id is typed", async () => {
    await create("doomed");
    const moved = await post("/alice/doomed/settings?/move", aliceCookie, {
      owner: "alice",
      name: "doomed-two",
    });
    expect(moved.status, await moved.clone().text()).toBe(303);
    expect(moved.headers.get("location")).toBe("/alice/doomed-two/settings");
    expect((await info("alice/doomed-two")).status).toBe(200);

    const wrong = await post("/alice/doomed-two/settings?/delete", aliceCookie, { confirm: "doomed-two" });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain("Type alice/doomed-two exactly to confirm; nothing was deleted.");
    expect((await info("alice/doomed-two")).status).toBe(200);

    const right = await post("/alice/doomed-two/settings?/delete", aliceCookie, {
      confirm: "alice/doomed-two",
    });
    expect(right.status).toBe(303);
    expect(right.headers.get("location")).toBe("/alice");
    expect((await info("alice/doomed-two")).status).toBe(404);
    expect((await page("/alice/doomed-two", aliceCookie)).status).toBe(404);
  });
});
