import { existsSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import type { RepoInfo } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../test-support/databases.js";
import { runGit } from "../git-command.js";
import { createRepoStorage } from "../repo-storage.js";
import { git, withToken } from "../../test-support/git-client.js";
import { readJson, startHub, type TestHub } from "../../test-support/hub-process.js";

describe.each(DIALECTS)("git over HTTPS with the real git client on %s", (dialect) => {
  let hub: TestHub;
  let work: string;
  let alice: string;
  let alicePassword: string;
  let aliceRead: string;
  let bob: string;

  const createRepo = async (repoId: string, isPrivate: boolean, type = "model") => {
    const response = await hub.request("/api/repos", {
      method: "POST",
      token: alice,
      json: { repo_id: repoId, repo_type: type, private: isPrivate },
    });
    expect(response.status).toBe(201);
  };
  const infoOf = async (repoId: string) =>
    readJson<RepoInfo>(await hub.request(`/api/models/${repoId}`, { token: alice }));
  const headOf = async (repoId: string) => (await infoOf(repoId)).sha;
  /** Where the hub keeps a repository on disk. */
  const pathOnDisk = async (repoId: string) =>
    createRepoStorage(hub.dataDir).pathOf((await infoOf(repoId))._id);
  const dir = (name: string) => path.join(work, name);

  beforeAll(async () => {
    hub = await startHub({ dialect, env: { HUB_MAX_GIT_BLOB_BYTES: String(1024 * 1024) } });
    work = mkdtempSync(path.join(os.tmpdir(), "hub-git-"));
    alicePassword = (await hub.createUser("alice")).password;
    await hub.createUser("bob");
    alice = await hub.createToken("alice");
    aliceRead = await hub.createToken("alice", ["--role", "read"]);
    bob = await hub.createToken("bob");
    await createRepo("alice/public", false);
    await createRepo("alice/private", true);
  });
  afterAll(async () => {
    await hub?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it("clones a public repository anonymously, over protocol v2 and v0, from both listeners", async () => {
    for (const [name, base, version] of [
      ["v2-git", hub.gitUrl, "2"],
      ["v0-git", hub.gitUrl, "0"],
      ["v2-hub", hub.url, "2"],
    ] as const) {
      const result = await git(
        ["-c", `protocol.version=${version}`, "clone", `${base}/alice/public`, name],
        work,
      );
      expect(result.code, result.stderr).toBe(0);
      expect(readdirSync(dir(name))).toContain(".gitattributes");
    }
  });

  it("answers a protocol v2 capability request with what git itself advertises for the repository", async () => {
    const repository = await pathOnDisk("alice/public");
    const own = await runGit(["upload-pack", "--stateless-rpc", "--advertise-refs", "."], {
      cwd: repository,
      env: { GIT_PROTOCOL: "version=2" },
    });
    expect(own.toString("latin1")).toMatch(/^000eversion 2\n.*fetch=[^\n]*filter/s);
    // The first answer is git's; the ones after it are kept, with no process started: a change to the
    // repository's configuration behind the hub's back (the hub makes none that upload-pack reads) is not seen,
    // whatever else the Git-Protocol header says.
    const ask = (repo: string, protocol: string, token?: string) =>
      fetch(`${hub.gitUrl}/${repo}.git/info/refs?service=git-upload-pack`, {
        headers: {
          "git-protocol": protocol,
          ...(token ? { authorization: `Basic ${Buffer.from(`x:${token}`).toString("base64")}` } : {}),
        },
      });
    try {
      for (const [i, protocol] of ["version=2", "version=2", "version=2:extra=1"].entries()) {
        if (i === 1) await runGit(["config", "uploadpack.allowFilter", "false"], { cwd: repository });
        const answer = await ask("alice/public", protocol);
        expect(answer.status).toBe(200);
        expect(answer.headers.get("content-type")).toBe("application/x-git-upload-pack-advertisement");
        expect(answer.headers.get("cache-control")).toContain("no-cache");
        expect(Buffer.from(await answer.arrayBuffer()).equals(own)).toBe(true);
      }
    } finally {
      await runGit(["config", "uploadpack.allowFilter", "true"], { cwd: repository });
    }
    // Access is still decided on every request: once alice's answer is kept, nobody else gets it.
    expect((await ask("alice/private", "version=2", alice)).status).toBe(200);
    expect((await ask("alice/private", "version=2")).status).toBe(401);
    expect((await ask("alice/private", "version=2", bob)).status).toBe(404);
    // When git cannot answer (here its repository was moved away behind the hub's back), git gets plain text.
    await createRepo("alice/moved", false);
    const moved = await pathOnDisk("alice/moved");
    renameSync(moved, `${moved}.away`);
    try {
      const failed = await ask("alice/moved", "version=2");
      expect(failed.status).toBe(500);
      expect(failed.headers.get("content-type")).toMatch(/^text\/plain/);
      expect(await failed.text()).toMatch(/could not read this repository; try again/);
    } finally {
      renameSync(`${moved}.away`, moved);
    }
    expect((await ask("alice/moved", "version=2")).status).toBe(200);
  });

  it("pushes with a write token and fetches what was pushed", async () => {
    const clone = await git(["clone", withToken(`${hub.gitUrl}/alice/public.git`, alice), "pusher"], work);
    expect(clone.code, clone.stderr).toBe(0);
    writeFileSync(path.join(dir("pusher"), "README.md"), "# Public model\n");
    await git(["add", "README.md"], dir("pusher"));
    await git(["commit", "-m", "Add a card"], dir("pusher"));
    const push = await git(["push", "origin", "main"], dir("pusher"));
    expect(push.code, push.stderr).toBe(0);
    const pushed = (await git(["rev-parse", "HEAD"], dir("pusher"))).stdout.trim();
    expect(await headOf("alice/public")).toBe(pushed);

    const fetch = await git(["pull", "--ff-only", "origin", "main"], dir("v2-git"));
    expect(fetch.code, fetch.stderr).toBe(0);
    expect((await git(["rev-parse", "HEAD"], dir("v2-git"))).stdout.trim()).toBe(pushed);
    const info = await readJson<RepoInfo>(await hub.request("/api/models/alice/public"));
    expect(info.siblings.map((s) => s.rfilename).sort()).toEqual([".gitattributes", "README.md"]);
  });

  it("asks anonymous callers for credentials on private repositories and on every push", async () => {
    const clone = await git(["clone", `${hub.gitUrl}/alice/private`, "anon-private"], work);
    expect(clone.code).not.toBe(0);
    expect(clone.stderr).toMatch(/could not read Username|Authentication failed|terminal prompts disabled/);
    const push = await git(["push", `${hub.gitUrl}/alice/public`, "main"], dir("v2-git"));
    expect(push.code).not.toBe(0);
    expect(push.stderr).toMatch(/could not read Username|Authentication failed|terminal prompts disabled/);
    const response = await fetch(`${hub.gitUrl}/alice/private/info/refs?service=git-upload-pack`);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe('Basic realm="Hub"');
  });

  it("answers not found, never forbidden, to accounts that may not see a private repository", async () => {
    const result = await git(["clone", withToken(`${hub.gitUrl}/alice/private`, bob), "bob-private"], work);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/not found/i);
    const missing = await git(["ls-remote", withToken(`${hub.gitUrl}/alice/never-existed`, bob)], work);
    for (const stderr of [result.stderr, missing.stderr]) {
      expect(stderr).toMatch(
        /remote: Repository alice\/[a-z-]+ was not found, or your token may not see it\./,
      );
      expect(stderr).not.toMatch(/forbidden|may not push/i);
    }
    const owner = await git(
      ["clone", withToken(`${hub.gitUrl}/alice/private`, alice), "alice-private"],
      work,
    );
    expect(owner.code, owner.stderr).toBe(0);
  });

  it("refuses pushes without write permission with a message git prints", async () => {
    writeFileSync(path.join(dir("pusher"), "notes.txt"), "more\n");
    await git(["add", "notes.txt"], dir("pusher"));
    await git(["commit", "-m", "More"], dir("pusher"));
    const before = await headOf("alice/public");
    for (const token of [aliceRead, bob]) {
      const push = await git(["push", withToken(`${hub.gitUrl}/alice/public`, token), "main"], dir("pusher"));
      expect(push.code).not.toBe(0);
      expect(push.stderr).toMatch(/remote: You may not push to alice\/public/);
    }
    expect(await headOf("alice/public")).toBe(before);
  });

  it("holds fine-grained tokens to their repositories and stops revoked tokens at once", async () => {
    await createRepo("alice/granted", false);
    await createRepo("alice/other", false);
    const scoped = await hub.createToken("alice", [
      "--scopes",
      "repo:read,repo:write",
      "--repos",
      "alice/granted",
    ]);
    await git(["clone", withToken(`${hub.gitUrl}/alice/granted`, scoped), "granted"], work);
    writeFileSync(path.join(dir("granted"), "a.txt"), "a\n");
    await git(["add", "a.txt"], dir("granted"));
    await git(["commit", "-m", "a"], dir("granted"));
    const allowed = await git(["push", "origin", "main"], dir("granted"));
    expect(allowed.code, allowed.stderr).toBe(0);
    const elsewhere = await git(
      ["push", "--force", withToken(`${hub.gitUrl}/alice/other`, scoped), "main"],
      dir("granted"),
    );
    expect(elsewhere.code).not.toBe(0);
    expect(elsewhere.stderr).toMatch(/remote: You may not push to alice\/other/);

    const me = await readJson<{ auth: { tokenId: string } }>(await hub.request("/api/me", { token: scoped }));
    await hub.reauthenticate(alice, alicePassword);
    expect(
      (await hub.request(`/api/me/tokens/${me.auth.tokenId}`, { method: "DELETE", token: alice })).status,
    ).toBe(204);
    const revoked = await git(["push", "origin", "main:refs/heads/after-revocation"], dir("granted"));
    expect(revoked.code).not.toBe(0);
    expect(revoked.stderr).toMatch(/Authentication failed|could not read Username|terminal prompts disabled/);
  });

  it("rejects files over the size limit that are not in LFS, and leaves the branch where it was", async () => {
    const before = await headOf("alice/public");
    writeFileSync(path.join(dir("pusher"), "weights.raw"), Buffer.alloc(1024 * 1024 + 1, 7));
    await git(["add", "weights.raw"], dir("pusher"));
    await git(["commit", "-m", "Big"], dir("pusher"));
    const push = await git(["push", withToken(`${hub.gitUrl}/alice/public`, alice), "main"], dir("pusher"));
    expect(push.code).not.toBe(0);
    expect(push.stderr).toMatch(/remote: Your push was rejected/);
    expect(push.stderr).toMatch(/weights\.raw is 1\.0 MiB .*git lfs track "weights\.raw"/);
    expect(push.stderr).toMatch(/pre-receive hook declined/);
    expect(await headOf("alice/public")).toBe(before);
    await git(["reset", "--hard", "HEAD~1"], dir("pusher"));
    // A tag may point straight at a blob; the limit holds there too.
    writeFileSync(path.join(work, "loose.raw"), Buffer.alloc(1024 * 1024 + 1, 9));
    const blob = (
      await git(["hash-object", "-w", path.join(work, "loose.raw")], dir("pusher"))
    ).stdout.trim();
    await git(["tag", "blob-tag", blob], dir("pusher"));
    const tagPush = await git(
      ["push", withToken(`${hub.gitUrl}/alice/public`, alice), "refs/tags/blob-tag"],
      dir("pusher"),
    );
    expect(tagPush.code).not.toBe(0);
    expect(tagPush.stderr).toMatch(new RegExp(`object ${blob} is 1\\.0 MiB`));
    // The limit is for files: a directory listing over it (32,000 entries, a 1.1 MB tree) is taken.
    await createRepo("alice/wide", false);
    const empty = (await git(["hash-object", "-w", "/dev/null"], dir("pusher"))).stdout.trim();
    const entries = Array.from(
      { length: 32_000 },
      (_, i) => `100644 blob ${empty}\tf${String(i).padStart(5, "0")}\n`,
    ).join("");
    const tree = (await runGit(["mktree"], { cwd: dir("pusher"), input: entries })).toString().trim();
    expect(Number((await git(["cat-file", "-s", tree], dir("pusher"))).stdout)).toBeGreaterThan(1024 * 1024);
    const commit = (await git(["commit-tree", tree, "-m", "A wide directory"], dir("pusher"))).stdout.trim();
    const widePush = await git(
      ["push", withToken(`${hub.gitUrl}/alice/wide`, alice), `${commit}:refs/heads/main`, "--force"],
      dir("pusher"),
    );
    expect(widePush.code, widePush.stderr).toBe(0);
  });

  it("rejects pushes to pull requests that do not exist, to refs outside branches, tags and pull requests, and dash-led names", async () => {
    for (const [refspec, message] of [
      ["HEAD:refs/pr/1", /refs\/pr\/1: there is no pull request #1; open one first/],
      ["HEAD:refs/pr/01", /refs\/pr\/01: pull request refs are refs\/pr\/<number>/],
      ["HEAD:refs/notes/x", /only branches \(refs\/heads\/\*\), tags \(refs\/tags\/\*\) and pull requests/],
      ["HEAD:refs/heads/-output", /may not start with "-"/],
    ] as const) {
      const push = await git(
        ["push", withToken(`${hub.gitUrl}/alice/public`, alice), refspec],
        dir("pusher"),
      );
      expect(push.code, refspec).not.toBe(0);
      expect(push.stderr).toMatch(message);
    }
    const branch = await git(
      [
        "push",
        withToken(`${hub.gitUrl}/alice/public`, alice),
        "HEAD:refs/heads/feature",
        "HEAD:refs/tags/v1",
      ],
      dir("pusher"),
    );
    expect(branch.code, branch.stderr).toBe(0);
  });

  it("keeps every repository name, however crafted, inside the repository root", async () => {
    const marker = path.join(work, "injected");
    const names = [
      "alice/..%2F..%2Fetc",
      "alice/%2e%2e",
      "..%2Falice/public",
      "alice/--upload-pack=touch%20" + encodeURIComponent(marker),
      "alice/public.git.git",
      "alice/-h",
      "alice/public%00",
      "alice%5C..%5Cpublic/x",
    ];
    for (const name of names) {
      for (const service of ["git-upload-pack", "git-receive-pack"]) {
        const response = await fetch(`${hub.gitUrl}/${name}/info/refs?service=${service}`, {
          headers: { authorization: `Basic ${Buffer.from(`x:${alice}`).toString("base64")}` },
        });
        expect([400, 404], `${name} ${service}`).toContain(response.status);
      }
    }
    expect(existsSync(marker)).toBe(false);
  });

  it("serves only the smart protocol, and only its own content types", async () => {
    const dumb = await fetch(`${hub.gitUrl}/alice/public/info/refs`);
    expect(dumb.status).toBe(403);
    expect(await dumb.text()).toMatch(/smart HTTP/);
    const wrongType = await fetch(`${hub.gitUrl}/alice/public/git-upload-pack`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(wrongType.status).toBe(415);
  });

  it("accepts a gzip-compressed upload-pack request, as git sends for large negotiations", async () => {
    const head = await headOf("alice/public");
    const pkt = (line: string) => `${(line.length + 4).toString(16).padStart(4, "0")}${line}`;
    const request = `${pkt(`want ${head} no-progress\n`)}0000${pkt("done\n")}`;
    const response = await fetch(`${hub.gitUrl}/alice/public/git-upload-pack`, {
      method: "POST",
      headers: { "content-type": "application/x-git-upload-pack-request", "content-encoding": "gzip" },
      body: gzipSync(request),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/x-git-upload-pack-result");
    const body = Buffer.from(await response.arrayBuffer());
    expect(body.subarray(0, 8).toString()).toBe("0008NAK\n");
    expect(body.includes(Buffer.from("PACK"))).toBe(true);
  });

  it("serves datasets, spaces and MCP repositories under their prefixes", async () => {
    for (const [type, prefix] of [
      ["dataset", "datasets"],
      ["space", "spaces"],
      ["mcp", "mcps"],
    ] as const) {
      await createRepo(`alice/kind-${type}`, false, type);
      const result = await git(["clone", `${hub.gitUrl}/${prefix}/alice/kind-${type}`, `kind-${type}`], work);
      expect(result.code, result.stderr).toBe(0);
      const wrongKind = await git(["ls-remote", `${hub.gitUrl}/alice/kind-${type}`], work);
      expect(wrongKind.code).not.toBe(0);
    }
  });
});
