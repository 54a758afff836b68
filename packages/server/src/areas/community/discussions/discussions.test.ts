import type { ApiError, DiscussionDetails, DiscussionList } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { readJson, startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";

/** An NDJSON commit body as the Python client sends it. */
function ndjson(summary: string, files: Record<string, string>, extra: Record<string, unknown> = {}): string {
  const lines: unknown[] = [{ key: "header", value: { summary, description: "", ...extra } }];
  for (const [path, content] of Object.entries(files))
    lines.push({
      key: "file",
      value: { path, content: Buffer.from(content).toString("base64"), encoding: "base64" },
    });
  return lines.map((line) => JSON.stringify(line)).join("\n") + "\n";
}

describe.each(DIALECTS)("discussions and pull requests on %s", (dialect) => {
  let hub: InProcessHub;
  let alice: string;
  let bob: string;
  let bobRead: string;
  const api = "/api/models/alice/talk";

  const commit = (token: string, rev: string, summary: string, files: Record<string, string>, query = "") =>
    hub.request(`${api}/commit/${encodeURIComponent(rev)}${query}`, {
      method: "POST",
      token,
      headers: { "content-type": "application/x-ndjson" },
      body: ndjson(summary, files),
    });
  const details = async (num: number, query = "") =>
    readJson<DiscussionDetails>(await hub.request(`${api}/discussions/${num}${query}`, { token: alice }));
  const post = (token: string, path: string, json?: unknown) =>
    hub.request(`${api}/discussions${path}`, {
      method: "POST",
      token,
      ...(json === undefined ? {} : { json }),
    });
  const file = async (rev: string, path: string) =>
    (await hub.request(`/alice/talk/resolve/${encodeURIComponent(rev)}/${path}`, { token: alice })).text();

  beforeAll(async () => {
    hub = await startInProcessHub({ dialect });
    await hub.createUser("alice");
    await hub.createUser("bob");
    alice = await hub.createToken("alice");
    bob = await hub.createToken("bob", ["--scopes", "repo:read,community:write"]);
    bobRead = await hub.createToken("bob", ["--role", "read"]);
    const created = await hub.request("/api/repos", {
      method: "POST",
      token: alice,
      json: { repo_id: "alice/talk" },
    });
    expect(created.status).toBe(201);
    expect(
      (await commit(alice, "main", "Base", { "a.txt": "one\ntwo\nthree\n", "b.txt": "b\n" })).status,
    ).toBe(200);
  });
  afterAll(() => hub?.stop());

  it("opens a discussion, takes comments, renames it and closes it, as the clients read them", async () => {
    const opened = await post(bob, "", { title: "  Typo   in card ", description: "See @alice" });
    expect(opened.status).toBe(200);
    const { num } = await readJson<{ num: number }>(opened);
    expect(num).toBe(1);
    const reply = await post(alice, `/${num}/comment`, { comment: "Thanks!" });
    expect(reply.status).toBe(200);
    const { newMessage } = await readJson<{
      newMessage: { id: string; type: string; data: { latest: { raw: string } } };
    }>(reply);
    expect(newMessage.type).toBe("comment");
    expect(newMessage.data.latest.raw).toBe("Thanks!");
    const renamed = await readJson<{ newTitle: { data: { from: string; to: string } } }>(
      await post(bob, `/${num}/title`, { title: "Typo in the card" }),
    );
    expect(renamed.newTitle.data).toEqual({ from: "Typo in card", to: "Typo in the card" });
    const closed = await readJson<{ newStatus: { data: { status: string } } }>(
      await post(bob, `/${num}/status`, { status: "closed", comment: "Fixed." }),
    );
    expect(closed.newStatus.data.status).toBe("closed");
    const shown = await details(num);
    expect(shown).toMatchObject({ num, title: "Typo in the card", status: "closed", isPullRequest: false });
    expect(shown.author?.name).toBe("bob");
    expect(shown.events.map((event) => event.type)).toEqual([
      "comment",
      "comment",
      "title-change",
      "comment",
      "status-change",
    ]);
    expect(shown.changes).toBeUndefined();
    const found = await readJson<DiscussionList>(
      await hub.request(`${api}/discussions?search=${encodeURIComponent("THE card")}`, { token: bob }),
    );
    expect(found.discussions.map((d) => d.num)).toEqual([num]);
    const wild = await readJson<DiscussionList>(
      await hub.request(`${api}/discussions?search=%25_`, { token: bob }),
    );
    expect(wild.count).toBe(0);
    const list = await readJson<DiscussionList>(
      await hub.request(`${api}/discussions?status=closed`, { token: bob }),
    );
    expect(list.count).toBe(1);
    expect(list.discussions[0]).toMatchObject({ num, repo: { name: "alice/talk", type: "model" } });
  });

  it("lets only the author or the repository's admins edit and hide a comment", async () => {
    const { num } = await readJson<{ num: number }>(await post(alice, "", { title: "Roadmap" }));
    const { newMessage } = await readJson<{ newMessage: { id: string } }>(
      await post(bob, `/${num}/comment`, { comment: "first draft" }),
    );
    const edited = await post(bob, `/${num}/comment/${newMessage.id}/edit`, { content: "second draft" });
    expect(edited.status).toBe(200);
    const { updatedComment } = await readJson<{
      updatedComment: { data: { edited: boolean; latest: { raw: string } } };
    }>(edited);
    expect(updatedComment.data).toMatchObject({ edited: true, latest: { raw: "second draft" } });
    // Alice's own comment: bob may not touch it.
    const { newMessage: hers } = await readJson<{ newMessage: { id: string } }>(
      await post(alice, `/${num}/comment`, { comment: "mine" }),
    );
    const refused = await post(bob, `/${num}/comment/${hers.id}/edit`, { content: "vandalised" });
    expect(refused.status).toBe(403);
    // The owner moderates: hides bob's comment; its text is gone from the answer.
    const hidden = await post(alice, `/${num}/comment/${newMessage.id}/hide`);
    expect(hidden.status).toBe(200);
    const after = await details(num);
    const bobs = after.events.find((event) => event.id === newMessage.id);
    expect(bobs?.type === "comment" && bobs.data).toMatchObject({ hidden: true, latest: { raw: "" } });
    expect((await post(bob, `/${num}/comment/${newMessage.id}/edit`, { content: "again" })).status).toBe(409);
    // A read token cannot take part; bob cannot close alice's discussion.
    expect((await post(bobRead, `/${num}/comment`, { comment: "hi" })).status).toBe(403);
    expect((await post(bob, `/${num}/status`, { status: "closed" })).status).toBe(403);
  });

  it("refuses bad input with a clear 4xx and changes nothing", async () => {
    const before = await readJson<DiscussionList>(await hub.request(`${api}/discussions`, { token: bob }));
    expect((await post(bob, "", { title: "   " })).status).toBe(400);
    const huge = await post(bob, "", { title: "Big", description: "x".repeat(64 * 1024) });
    expect(huge.status).toBe(400);
    expect((await readJson<ApiError>(huge)).code).toBe("comment_too_long");
    const unknown = await hub.request(`${api}/discussions/999`, { token: bob });
    expect(unknown.status).toBe(404);
    expect((await readJson<ApiError>(unknown)).code).toBe("discussion_not_found");
    const after = await readJson<DiscussionList>(await hub.request(`${api}/discussions`, { token: bob }));
    expect(after.count).toBe(before.count);
  });

  it("opens a draft pull request on refs/pr/N, takes commits, and merges it by fast-forward", async () => {
    const created = await readJson<{ num: number; ref: string }>(
      await post(bob, "", { title: "Add c", description: "adds c", pullRequest: true }),
    );
    expect(created.ref).toBe(`refs/pr/${created.num}`);
    expect((await details(created.num)).status).toBe("draft");
    const pushed = await commit(bob, created.ref, "Add c.txt", { "c.txt": "c\n" });
    expect(pushed.status, await pushed.clone().text()).toBe(200);
    expect((await commit(bob, created.ref, "Add e.txt", { "e.txt": "e\n" })).status).toBe(200);
    const shown = await details(created.num, "?diff=1");
    expect(shown.changes?.base).toBe("refs/heads/main");
    expect(shown.filesWithConflicts).toEqual([]);
    expect(shown.diff).toContain("+++ b/c.txt");
    expect(shown.events.some((event) => event.type === "commit" && event.data.subject === "Add c.txt")).toBe(
      true,
    );
    // Bob is no writer: he may not merge, nor write to the branch himself.
    expect((await post(bob, `/${created.num}/merge`)).status).toBe(403);
    expect((await commit(bob, "main", "sneak", { "x.txt": "x" })).status).toBe(403);
    const mainBefore = await file("main", "c.txt");
    expect(mainBefore).not.toBe("c\n");
    const merged = await post(alice, `/${created.num}/merge`);
    expect(merged.status, await merged.clone().text()).toBe(200);
    const { mergeCommitId } = await readJson<{ mergeCommitId: string }>(merged);
    expect(await file("main", "c.txt")).toBe("c\n");
    const after = await details(created.num, "?diff=1");
    expect(after.status).toBe("merged");
    // The merged pull request still shows what it changed, against the branch it was merged onto.
    expect(after.diff).toContain("+++ b/c.txt");
    expect(after.diff).toContain("+++ b/e.txt");
    expect(after.changes?.mergeCommitId).toBe(mergeCommitId);
    // The merged pull request keeps its ref, and refuses more commits.
    expect(await file(created.ref, "c.txt")).toBe("c\n");
    expect((await commit(bob, created.ref, "late", { "d.txt": "d" })).status).toBe(409);
  });

  it("opens a pull request from a commit with create_pr=1, merges with a merge commit, refuses conflicts", async () => {
    const opened = await commit(
      bob,
      "main",
      "Edit a line one",
      { "a.txt": "ONE\ntwo\nthree\n" },
      "?create_pr=1",
    );
    expect(opened.status, await opened.clone().text()).toBe(200);
    const { pullRequestUrl } = await readJson<{ pullRequestUrl: string }>(opened);
    const num = Number(/\/discussions\/(\d+)$/.exec(pullRequestUrl)?.[1]);
    expect(num).toBeGreaterThan(0);
    expect((await details(num)).status).toBe("open");
    expect(await file("main", "a.txt")).toBe("one\ntwo\nthree\n");
    // Main moves on in another place: the merge needs a merge commit.
    expect((await commit(alice, "main", "Edit line three", { "b.txt": "B\n" })).status).toBe(200);
    const conflicting = await commit(
      bob,
      "main",
      "Edit a line one differently",
      { "a.txt": "uno\ntwo\nthree\n" },
      "?create_pr=1",
    );
    const other = Number(
      /\/discussions\/(\d+)$/.exec(
        (await readJson<{ pullRequestUrl: string }>(conflicting)).pullRequestUrl,
      )?.[1],
    );
    const merged = await post(alice, `/${num}/merge`, { comment: "Looks good" });
    expect(merged.status, await merged.clone().text()).toBe(200);
    expect(await file("main", "a.txt")).toBe("ONE\ntwo\nthree\n");
    expect(await file("main", "b.txt")).toBe("B\n");
    const log = await readJson<Array<{ title: string }>>(
      await hub.request(`${api}/commits/main`, { token: alice }),
    );
    expect(log[0]?.title).toBe(`Merge pull request #${num}: Edit a line one`);
    // The other one now conflicts in a.txt: named in details and in the 409, and main does not move.
    expect((await details(other)).filesWithConflicts).toEqual(["a.txt"]);
    const refused = await post(alice, `/${other}/merge`);
    expect(refused.status).toBe(409);
    const error = await readJson<ApiError>(refused);
    expect(error.code).toBe("merge_conflict");
    expect(error.error).toContain("a.txt");
    expect(await file("main", "a.txt")).toBe("ONE\ntwo\nthree\n");
  });
});
