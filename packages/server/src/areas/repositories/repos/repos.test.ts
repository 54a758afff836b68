import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ApiError, HfCreateRepoResponse, RepoInfo, RepoSummary } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { git, withToken } from "../../../test-support/git-client.js";
import { startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";
import { readJson, startHub, type TestHub } from "../../../test-support/hub-process.js";

describe.each(DIALECTS)("repositories API on %s", (dialect) => {
  let hub: InProcessHub;
  let alice: string;
  let bob: string;
  let aliceRead: string;

  const create = (token: string, body: unknown) =>
    hub.request("/api/repos", { method: "POST", token, json: body });

  beforeAll(async () => {
    hub = await startInProcessHub({ dialect });
    await hub.createUser("alice");
    await hub.createUser("bob");
    await hub.createUser("carol");
    expect((await hub.cli(["org", "create", "acme", "--owner", "alice"])).code).toBe(0);
    expect((await hub.cli(["org", "add-member", "acme", "bob", "--role", "contributor"])).code).toBe(0);
    expect((await hub.cli(["org", "add-member", "acme", "carol", "--role", "read"])).code).toBe(0);
    alice = await hub.createToken("alice");
    bob = await hub.createToken("bob");
    aliceRead = await hub.createToken("alice", ["--role", "read"]);
  });
  afterAll(() => hub?.stop());

  it("creates a repository and says where to browse, clone and push it", async () => {
    const response = await create(alice, { repo_id: "alice/first", repo_type: "model", private: false });
    expect(response.status).toBe(201);
    expect(response.headers.get("ratelimit")).toMatch(/r=\d+/);
    const summary = await readJson<RepoSummary>(response);
    expect(summary).toMatchObject({
      id: "alice/first",
      type: "model",
      private: false,
      url: `${hub.url}/alice/first`,
      git_url: `${hub.config.gitPublicUrl}/alice/first.git`,
      default_branch: "main",
    });
    expect(summary.ssh_url).toMatch(/^ssh:\/\/git@127\.0\.0\.1:\d+\/alice\/first\.git$/);
    const dataset = await readJson<RepoSummary>(
      await create(alice, { repo_id: "alice/corpus", repo_type: "dataset" }),
    );
    expect(dataset.url).toBe(`${hub.url}/datasets/alice/corpus`);
    expect(dataset.git_url).toBe(`${hub.config.gitPublicUrl}/datasets/alice/corpus.git`);
  });

  it("starts every repository with a commit holding a .gitattributes for LFS", async () => {
    const info = await readJson<RepoInfo>(await hub.request("/api/models/alice/first", { token: alice }));
    expect(info.sha).toMatch(/^[0-9a-f]{40}$/);
    expect(info.siblings).toEqual([{ rfilename: ".gitattributes" }]);
    expect(info).toMatchObject({ id: "alice/first", author: "alice", private: false, type: "model" });
    const atRevision = await readJson<RepoInfo>(
      await hub.request("/api/models/alice/first/revision/main", { token: alice }),
    );
    expect(atRevision.sha).toBe(info.sha);
    const head = await readJson<RepoInfo>(await hub.request("/api/models/alice/first/revision/HEAD"));
    expect(head.sha).toBe(info.sha);
  });

  it("answers 409 with the existing repository's URL", async () => {
    const response = await create(alice, { repo_id: "alice/first" });
    expect(response.status).toBe(409);
    const body = await readJson<ApiError & { url: string }>(response);
    expect(body.code).toBe("repo_exists");
    expect(body.url).toBe(`${hub.url}/alice/first`);
  });

  const invalid: Array<[string, unknown, string]> = [
    ["no repo_id", { repo_type: "model" }, "repo_id"],
    ["repo_id without an owner", { repo_id: "first" }, "repo_id"],
    ["repo_id with upper case", { repo_id: "alice/First" }, "repo_id"],
    ["repo_id with a path", { repo_id: "alice/a/b" }, "repo_id"],
    ["repo_id with ..", { repo_id: "alice/.." }, "repo_id"],
    ["repo_id with a dash-led owner", { repo_id: "-alice/x" }, "repo_id"],
    ["an unknown repo_type", { repo_id: "alice/x", repo_type: "notebook" }, "repo_type"],
    ["private as a string", { repo_id: "alice/x", private: "yes" }, "private"],
    ["an unknown field", { repo_id: "alice/x", sdk: "gradio" }, "sdk"],
    ["a name ending in .git", { repo_id: "alice/x.git" }, "name"],
    ["a name with ..", { repo_id: "alice/a..b" }, "name"],
  ];
  it.each(invalid)("rejects %s with 400", async (_case, body, field) => {
    const response = await create(alice, body);
    expect(response.status).toBe(400);
    expect((await readJson<ApiError>(response)).field).toBe(field);
  });

  it("creates only where the caller may", async () => {
    expect((await create(bob, { repo_id: "alice/intrusion" })).status).toBe(403);
    expect((await create(aliceRead, { repo_id: "alice/readonly" })).status).toBe(403);
    expect((await create(alice, { repo_id: "nobody/x" })).status).toBe(404);
    expect((await create(bob, { repo_id: "acme/by-contributor" })).status).toBe(201);
    const carol = await hub.createToken("carol");
    expect((await create(carol, { repo_id: "acme/by-reader" })).status).toBe(403);
    const response = await hub.request("/api/repos", { method: "POST", json: { repo_id: "alice/anon" } });
    expect(response.status).toBe(401);
  });

  it("hides private repositories: 401 anonymous, 404 with X-Error-Code for others, 200 for members", async () => {
    expect((await create(alice, { repo_id: "acme/secret", private: true })).status).toBe(201);
    const anonymous = await hub.request("/api/models/acme/secret");
    expect(anonymous.status).toBe(401);
    const outsider = await hub.request("/api/models/acme/secret", { token: await hub.createToken("carol") });
    expect(outsider.status).toBe(200);
    const stranger = await hub.createUser("dave");
    const daveToken = await hub.createToken(stranger.handle);
    const hidden = await hub.request("/api/models/acme/secret", { token: daveToken });
    expect(hidden.status).toBe(404);
    expect(hidden.headers.get("x-error-code")).toBe("RepoNotFound");
    const missing = await hub.request("/api/models/acme/never-was", { token: daveToken });
    expect(missing.status).toBe(404);
    expect(await missing.text()).toBe(
      await (
        await hub.request("/api/models/acme/secret", { token: daveToken })
      )
        .text()
        .then((t) => t.replace("secret", "never-was")),
    );
    expect((await hub.request("/api/models/acme/never-was")).status).toBe(401);
  });

  it("names a missing revision with X-Error-Code RevisionNotFound", async () => {
    const response = await hub.request("/api/models/alice/first/revision/no-such-branch", { token: alice });
    expect(response.status).toBe(404);
    expect(response.headers.get("x-error-code")).toBe("RevisionNotFound");
  });

  it("creates in the Hugging Face clients' shape, with 409 carrying the URL", async () => {
    const response = await hub.request("/api/repos/create", {
      method: "POST",
      token: alice,
      json: { name: "hf-style", organization: null, type: "dataset", private: true, license: "mit" },
    });
    expect(response.status).toBe(200);
    expect(await readJson<HfCreateRepoResponse>(response)).toEqual({
      url: `${hub.url}/datasets/alice/hf-style`,
      id: "alice/hf-style",
      name: "alice/hf-style",
    });
    const info = await readJson<RepoInfo>(
      await hub.request("/api/datasets/alice/hf-style", { token: alice }),
    );
    expect(info.private).toBe(true);
    const again = await hub.request("/api/repos/create", {
      method: "POST",
      token: alice,
      json: { name: "hf-style", type: "dataset", visibility: "public" },
    });
    expect(again.status).toBe(409);
    expect((await readJson<{ url: string }>(again)).url).toBe(`${hub.url}/datasets/alice/hf-style`);
    const inOrg = await hub.request("/api/repos/create", {
      method: "POST",
      token: alice,
      json: { name: "space-one", organization: "acme", type: "space", sdk: "static", visibility: "public" },
    });
    expect((await readJson<HfCreateRepoResponse>(inOrg)).url).toBe(`${hub.url}/spaces/acme/space-one`);
  });

  it("deletes a repository with repo:delete, and its data leaves the disk", async () => {
    const summary = await readJson<RepoSummary>(await create(alice, { repo_id: "alice/doomed" }));
    const dir = path.join(hub.dataDir, "repositories", summary._id.slice(0, 2), `${summary._id}.git`);
    expect(existsSync(dir)).toBe(true);
    const noDelete = await hub.createToken("alice", ["--scopes", "repo:read,repo:write"]);
    const refused = await hub.request("/api/repos/delete", {
      method: "DELETE",
      token: noDelete,
      json: { name: "doomed" },
    });
    expect(refused.status).toBe(403);
    expect(
      (
        await hub.request("/api/repos/delete", {
          method: "DELETE",
          token: bob,
          json: { name: "doomed", organization: "alice" },
        })
      ).status,
    ).toBe(403);
    const deleted = await hub.request("/api/repos/delete", {
      method: "DELETE",
      token: alice,
      json: { name: "doomed", type: "model" },
    });
    expect(deleted.status).toBe(204);
    expect(existsSync(dir)).toBe(false);
    expect((await hub.request("/api/models/alice/doomed", { token: alice })).status).toBe(404);
    expect((await create(alice, { repo_id: "alice/doomed" })).status).toBe(201);
  });
});

describe("repository listing", () => {
  let hub: InProcessHub;
  let alice: string;
  let bob: string;

  interface Item {
    id: string;
    private: boolean;
  }
  const list = async (query: string, token?: string) => {
    const response = await hub.request(`/api/models${query}`, token ? { token } : {});
    expect(response.status).toBe(200);
    return { items: await readJson<Item[]>(response), link: response.headers.get("link") };
  };

  beforeAll(async () => {
    hub = await startInProcessHub();
    await hub.createUser("alice");
    await hub.createUser("bob");
    expect((await hub.cli(["org", "create", "acme", "--owner", "alice"])).code).toBe(0);
    alice = await hub.createToken("alice");
    bob = await hub.createToken("bob");
    for (const [repoId, isPrivate] of [
      ["alice/pub-one", false],
      ["alice/pub-two", false],
      ["alice/secret", true],
      ["acme/team-secret", true],
      ["bob/bobs-model", false],
    ] as const) {
      expect(
        (
          await hub.request("/api/repos", {
            method: "POST",
            token: repoId.startsWith("bob") ? bob : alice,
            json: { repo_id: repoId, private: isPrivate },
          })
        ).status,
      ).toBe(201);
    }
  });
  afterAll(() => hub?.stop());

  it("shows anonymous callers public repositories only, and owners their private ones too", async () => {
    const ids = (items: Item[]) => items.map((i) => i.id).sort();
    expect(ids((await list("")).items)).toEqual(["alice/pub-one", "alice/pub-two", "bob/bobs-model"]);
    expect(ids((await list("", alice)).items)).toEqual([
      "acme/team-secret",
      "alice/pub-one",
      "alice/pub-two",
      "alice/secret",
      "bob/bobs-model",
    ]);
    expect(ids((await list("", bob)).items)).toEqual(["alice/pub-one", "alice/pub-two", "bob/bobs-model"]);
    const granted = await hub.createToken("alice", ["--scopes", "repo:read", "--repos", "alice/secret"]);
    expect(ids((await list("", granted)).items)).toEqual([
      "alice/pub-one",
      "alice/pub-two",
      "alice/secret",
      "bob/bobs-model",
    ]);
    expect(
      (await hub.request("/api/models", { token: "hf_wrongwrongwrongwrongwrongwrongwron" })).status,
    ).toBe(401);
  });

  it("filters by author and search text, and sorts by id", async () => {
    expect((await list("?author=alice&sort=id", alice)).items.map((i) => i.id)).toEqual([
      "alice/pub-one",
      "alice/pub-two",
      "alice/secret",
    ]);
    expect((await list("?search=TWO")).items.map((i) => i.id)).toEqual(["alice/pub-two"]);
    expect((await list("?search=%25")).items).toEqual([]);
    expect((await list("?search=alice%2Fpub&sort=id")).items.map((i) => i.id)).toEqual([
      "alice/pub-one",
      "alice/pub-two",
    ]);
  });

  it("paginates with an absolute Link header that the next page follows", async () => {
    const seen: string[] = [];
    let url: string | null = `${hub.url}/api/models?limit=2&sort=id&expand=private&expand=likes`;
    let pages = 0;
    while (url) {
      const response: Response = await hub.fetch(url, { headers: { authorization: `Bearer ${alice}` } });
      seen.push(...(await readJson<Item[]>(response)).map((i) => i.id));
      const link = response.headers.get("link");
      url = link ? (/^<(https?:\/\/[^>]+)>; rel="next"$/.exec(link)?.[1] ?? null) : null;
      pages++;
    }
    expect(pages).toBe(3);
    for (const cursor of ["MS41", "LTU", "MWUzMA", "!!"])
      expect((await hub.request(`/api/models?cursor=${cursor}`)).status).toBe(200);
    expect(seen).toEqual([
      "acme/team-secret",
      "alice/pub-one",
      "alice/pub-two",
      "alice/secret",
      "bob/bobs-model",
    ]);
  });
});

describe("repository settings and moves", () => {
  let hub: TestHub;
  let alice: string;
  let work: string;

  beforeAll(async () => {
    hub = await startHub();
    work = mkdtempSync(path.join(os.tmpdir(), "hub-settings-"));
    await hub.createUser("alice");
    await hub.createUser("bob");
    expect((await hub.cli(["org", "create", "acme", "--owner", "alice"])).code).toBe(0);
    alice = await hub.createToken("alice");
    expect(
      (await hub.request("/api/repos", { method: "POST", token: alice, json: { repo_id: "alice/model" } }))
        .status,
    ).toBe(201);
  });
  afterAll(async () => {
    await hub?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const settings = (body: unknown, token = alice) =>
    hub.request("/api/models/alice/model/settings", { method: "PUT", token, json: body });

  it("switches visibility with private or visibility, as both client generations send it", async () => {
    expect((await hub.request("/api/models/alice/model")).status).toBe(200);
    expect((await settings({ private: true })).status).toBe(200);
    expect((await hub.request("/api/models/alice/model")).status).toBe(401);
    expect((await settings({ visibility: "public" })).status).toBe(200);
    expect((await hub.request("/api/models/alice/model")).status).toBe(200);
    expect((await settings({ gated: "manual" })).status).toBe(200);
    const info = () => hub.request("/api/models/alice/model").then((r) => readJson<RepoInfo>(r));
    expect((await info()).gated).toBe("manual");
    expect((await settings({ gated: false })).status).toBe(200);
    expect((await info()).gated).toBe(false);
    const gated = await settings({ gated: "always" });
    expect(gated.status).toBe(400);
    expect((await readJson<ApiError>(gated)).field).toBe("gated");
    expect((await settings({ private: true }, await hub.createToken("bob"))).status).toBe(403);
    expect(
      (await settings({ private: true }, await hub.createToken("alice", ["--role", "read"]))).status,
    ).toBe(403);
  });

  it("refuses force pushes once denyForcePush is set", async () => {
    const dir = path.join(work, "clone");
    expect((await git(["clone", withToken(`${hub.gitUrl}/alice/model`, alice), dir], work)).code).toBe(0);
    writeFileSync(path.join(dir, "a.txt"), "a");
    await git(["add", "a.txt"], dir);
    await git(["commit", "-m", "a"], dir);
    expect((await git(["push", "origin", "main"], dir)).code).toBe(0);
    expect((await settings({ denyForcePush: true })).status).toBe(200);
    await git(["commit", "--amend", "-m", "rewritten"], dir);
    const forced = await git(["push", "--force", "origin", "main"], dir);
    expect(forced.code).not.toBe(0);
    expect(forced.stderr).toMatch(/non-fast-forward|denyNonFastForwards/);
    expect((await settings({ denyForcePush: false })).status).toBe(200);
    expect((await git(["push", "--force", "origin", "main"], dir)).code).toBe(0);
  });

  it("renames and moves a repository, which keeps its history", async () => {
    const before = await readJson<RepoInfo>(await hub.request("/api/models/alice/model", { token: alice }));
    const move = (fromRepo: string, toRepo: string, token = alice) =>
      hub.request("/api/repos/move", { method: "POST", token, json: { fromRepo, toRepo, type: "model" } });
    expect((await move("alice/model", "alice/renamed")).status).toBe(200);
    const old = await hub.request("/api/models/alice/model/revision/main?expand=sha", {
      token: alice,
      redirect: "manual",
    });
    expect(old.status).toBe(307);
    expect(old.headers.get("location")).toBe("/api/models/alice/renamed/revision/main?expand=sha");
    expect(
      (await readJson<RepoInfo>(await hub.request("/api/models/alice/model", { token: alice }))).id,
    ).toBe("alice/renamed");
    const oldRemote = await git(["ls-remote", `${hub.gitUrl}/alice/model.git`], work);
    expect(oldRemote.code, oldRemote.stderr).toBe(0);
    expect(oldRemote.stdout).toContain(before.sha ?? "none");
    expect(
      (await readJson<RepoInfo>(await hub.request("/api/models/alice/renamed", { token: alice }))).sha,
    ).toBe(before.sha);
    expect((await move("alice/renamed", "acme/moved")).status).toBe(200);
    const moved = await readJson<RepoInfo>(await hub.request("/api/models/acme/moved", { token: alice }));
    expect(moved.author).toBe("acme");
    expect(moved.sha).toBe(before.sha);
    const clone = await git(["clone", `${hub.gitUrl}/acme/moved`, "moved"], work);
    expect(clone.code, clone.stderr).toBe(0);
    expect(
      (await hub.request("/api/repos", { method: "POST", token: alice, json: { repo_id: "alice/other" } }))
        .status,
    ).toBe(201);
    expect((await move("alice/other", "acme/moved")).status).toBe(409);
    expect((await move("alice/other", "bob/stolen")).status).toBe(403);
    expect((await move("alice/other", "alice/Bad Name")).status).toBe(400);
    const noDelete = await hub.createToken("alice", ["--scopes", "repo:read,repo:write"]);
    expect((await move("alice/other", "alice/other2", noDelete)).status).toBe(403);

    // Every old name follows the repository; a new repository at an old name takes the name back.
    const first = await hub.request("/alice/model/resolve/main/.gitattributes", {
      token: alice,
      redirect: "manual",
    });
    expect(first.headers.get("location")).toBe("/acme/moved/resolve/main/.gitattributes");
    expect(
      (await hub.request("/api/repos", { method: "POST", token: alice, json: { repo_id: "alice/renamed" } }))
        .status,
    ).toBe(201);
    expect(
      (await readJson<RepoInfo>(await hub.request("/api/models/alice/renamed", { token: alice }))).id,
    ).toBe("alice/renamed");
    // A private repository's new name is shown only to those who may read it.
    const hidden = await hub.request("/api/models/acme/moved/settings", {
      method: "PUT",
      token: alice,
      json: { private: true },
    });
    expect(hidden.status).toBe(200);
    expect((await hub.request("/api/models/alice/model", { redirect: "manual" })).status).toBe(401);
    expect(
      (
        await hub.request("/api/models/alice/model", {
          token: await hub.createToken("bob"),
          redirect: "manual",
        })
      ).status,
    ).toBe(404);
  });
});
