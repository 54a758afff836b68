import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type {
  ApiError,
  Me,
  RepoInfo,
  UserOverview,
  UsernameMigration,
  UsernamePreview,
  Whoami,
} from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { git, lfsGitConfig, sshCommand, withToken } from "../../../test-support/git-client.js";
import { startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";
import { readJson, startHub, type TestHub } from "../../../test-support/hub-process.js";
import { WebhookReceiver } from "../../../test-support/webhook-receiver.js";

describe.each(DIALECTS)("changing the username on %s", (dialect) => {
  let hub: TestHub;
  let work: string;
  let alice: { handle: string; password: string };
  let write: string;
  let read: string;
  let fineGrained: string;
  let bounded: string;
  let bob: string;
  let keyFile: string;

  const preview = (username: string | null, token = write, query?: string) =>
    hub.request(
      `/api/me/profile/username${query ?? (username === null ? "" : `?username=${encodeURIComponent(username)}`)}`,
      { token },
    );
  const migrate = (json: unknown, token = write) =>
    hub.request("/api/me/profile/username", { method: "POST", token, json });
  const viaSsh = (args: string[], cwd = work) =>
    git(args, cwd, {
      GIT_SSH_COMMAND: sshCommand(keyFile),
    });

  beforeAll(async () => {
    hub = await startHub({ dialect });
    work = mkdtempSync(path.join(os.tmpdir(), "hub-username-"));
    alice = await hub.createUser("alice");
    await hub.createUser("bob");
    expect((await hub.cli(["org", "create", "acme", "--owner", "bob"])).code).toBe(0);
    write = await hub.createToken("alice", ["--role", "write"]);
    read = await hub.createToken("alice", ["--role", "read"]);
    fineGrained = await hub.createToken("alice", ["--scopes", "repo:read,repo:write,account:keys"]);
    bob = await hub.createToken("bob");
    for (const [repo_id, repo_type, isPrivate] of [
      ["alice/model", "model", false],
      ["alice/secret", "model", true],
      ["alice/corpus", "dataset", false],
    ] as const) {
      const created = await hub.request("/api/repos", {
        method: "POST",
        token: write,
        json: { repo_id, repo_type, private: isPrivate },
      });
      expect(created.status).toBe(201);
    }
    bounded = await hub.createToken("alice", ["--scopes", "repo:read,repo:write", "--repos", "alice/secret"]);
    keyFile = path.join(work, "alice_key");
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", keyFile]);
    const key = await hub.request("/api/me/keys", {
      method: "POST",
      token: write,
      json: { key: readFileSync(`${keyFile}.pub`, "utf8") },
    });
    expect(key.status).toBe(201);
  });
  afterAll(async () => {
    await hub?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it("previews a rename: what moves, and whether the name is valid and free", async () => {
    const response = await preview("alicia");
    expect(response.status).toBe(200);
    const body = await readJson<UsernamePreview>(response);
    expect(body).toMatchObject({
      current: "alice",
      username: "alicia",
      valid: true,
      available: true,
      problem: null,
      reauthenticationRequired: true,
      repositories: [
        { type: "dataset", from: "alice/corpus", to: "alicia/corpus" },
        { type: "model", from: "alice/model", to: "alicia/model" },
        { type: "model", from: "alice/secret", to: "alicia/secret" },
      ],
    });
    expect(body.redirects).toContainEqual({
      from: `${hub.url}/api/users/alice/overview`,
      to: `${hub.url}/api/users/alicia/overview`,
    });
    expect(body.redirects).toContainEqual({
      from: `${hub.url}/datasets/alice/corpus`,
      to: `${hub.url}/datasets/alicia/corpus`,
    });
    expect(body.redirects).toContainEqual({
      from: `${hub.url}/api/models/alice/model`,
      to: `${hub.url}/api/models/alicia/model`,
    });
    expect(body.gitRemotes).toContainEqual({
      from: `${hub.gitUrl}/alice/model.git`,
      to: `${hub.gitUrl}/alicia/model.git`,
    });
    expect(body.gitRemotes).toContainEqual({
      from: `${hub.sshUrl}/datasets/alice/corpus.git`,
      to: `${hub.sshUrl}/datasets/alicia/corpus.git`,
    });
    const days = (Date.parse(body.oldUsernameReservedUntil) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(89.9);
    expect(days).toBeLessThanOrEqual(90);

    const problems: Array<[string, boolean, string]> = [
      ["Not A Name", false, "invalid_handle"],
      ["-dash", false, "invalid_handle"],
      ["x".repeat(41), false, "invalid_handle"],
      ["api", false, "reserved_handle"],
      ["alice", true, "username_unchanged"],
      ["bob", true, "handle_taken"],
      ["acme", true, "handle_taken"],
    ];
    for (const [username, valid, code] of problems) {
      const answer = await readJson<UsernamePreview>(await preview(username));
      expect(answer, username).toMatchObject({ valid, available: false, problem: { code } });
    }
    // A read token may preview: it only reads.
    expect((await preview("alicia", read)).status).toBe(200);
  });

  it("refuses a bad preview query with 400 and needs a session or a role token", async () => {
    for (const query of [
      "",
      "?username=",
      `?username=${"x".repeat(101)}`,
      "?username=a&username=b",
      "?name=x",
    ]) {
      const response = await preview(null, write, query);
      expect(response.status, query).toBe(400);
      expect((await readJson<ApiError>(response)).field, query).toBe("username");
    }
    expect((await hub.request("/api/me/profile/username?username=alicia")).status).toBe(401);
    const refused = await preview("alicia", fineGrained);
    expect(refused.status).toBe(403);
    expect((await readJson<ApiError>(refused)).code).toBe("insufficient_scope");
  });

  it("needs a write role token or a session, recently reauthenticated, to rename", async () => {
    expect(
      (await hub.request("/api/me/profile/username", { method: "POST", json: { username: "x1" } })).status,
    ).toBe(401);
    const stale = await migrate({ username: "alicia" });
    expect(stale.status).toBe(401);
    expect((await readJson<ApiError>(stale)).code).toBe("reauthentication_required");
    for (const token of [read, fineGrained]) {
      await hub.reauthenticate(token, alice.password);
      const refused = await migrate({ username: "alicia" }, token);
      expect(refused.status).toBe(403);
      expect((await readJson<ApiError>(refused)).code).toBe("insufficient_scope");
    }
    await hub.reauthenticate(write, alice.password);
    expect((await readJson<UsernamePreview>(await preview("alicia"))).reauthenticationRequired).toBe(false);
  });

  it("refuses bad or unavailable names with 400 and 409, naming the field", async () => {
    const cases: Array<[unknown, number, string]> = [
      [{}, 400, "validation_failed"],
      [{ username: "" }, 400, "validation_failed"],
      [{ username: 42 }, 400, "validation_failed"],
      [{ username: null }, 400, "validation_failed"],
      [{ username: "x".repeat(101) }, 400, "validation_failed"],
      [{ username: "Not A Name" }, 400, "invalid_handle"],
      [{ username: "settings" }, 400, "reserved_handle"],
      [{ username: "alice" }, 400, "username_unchanged"],
      [{ username: "bob" }, 409, "handle_taken"],
      [{ username: "acme" }, 409, "handle_taken"],
    ];
    for (const [body, status, code] of cases) {
      const response = await migrate(body);
      expect(response.status, JSON.stringify(body)).toBe(status);
      const error = await readJson<ApiError>(response);
      expect(error.code, JSON.stringify(body)).toBe(code);
      expect(error.field).toBe("username");
    }
    for (const body of [[], "alicia", null]) expect((await migrate(body)).status).toBe(400);
    expect((await readJson<Whoami>(await hub.request("/api/whoami", { token: write }))).name).toBe("alice");
  });

  it("renames the account, and old repository URLs, API paths and git remotes keep working", async () => {
    // Content to find again after the rename, pushed under the old name.
    const before = path.join(work, "before");
    expect(
      (await git(["clone", "-q", withToken(`${hub.gitUrl}/alice/secret`, write), before], work)).code,
    ).toBe(0);
    writeFileSync(path.join(before, "README.md"), "# secret\n");
    await git(["add", "README.md"], before);
    await git(["commit", "-q", "-m", "readme"], before);
    expect((await git(["push", "-q", "origin", "main"], before)).code).toBe(0);

    const response = await migrate({ username: "alicia", fromANewerClient: true });
    expect(response.status).toBe(200);
    const body = await readJson<UsernameMigration>(response);
    expect(body).toMatchObject({
      name: "alicia",
      previousName: "alice",
      repositories: [
        { type: "dataset", from: "alice/corpus", to: "alicia/corpus" },
        { type: "model", from: "alice/model", to: "alicia/model" },
        { type: "model", from: "alice/secret", to: "alicia/secret" },
      ],
    });
    const me = await readJson<Me>(await hub.request("/api/me", { token: write }));
    expect(me.name).toBe("alicia");
    expect(me.reservedUsernames).toEqual([{ name: "alice", reservedUntil: body.oldUsernameReservedUntil }]);
    expect(me.avatarUrl).toBe(`${hub.url}/api/users/alicia/avatar`);

    // API paths and web URLs answer a relative 307 to the new name.
    const api = await hub.request("/api/models/alice/secret/revision/main?expand=sha", {
      token: write,
      redirect: "manual",
    });
    expect(api.status).toBe(307);
    expect(api.headers.get("location")).toBe("/api/models/alicia/secret/revision/main?expand=sha");
    const followed = await readJson<RepoInfo>(
      await hub.request("/api/models/alice/secret", { token: write }),
    );
    expect(followed.id).toBe("alicia/secret");
    const dataset = await hub.request("/api/datasets/alice/corpus", { redirect: "manual" });
    expect(dataset.headers.get("location")).toBe("/api/datasets/alicia/corpus");
    const download = await hub.request("/alice/secret/resolve/main/README.md", { token: write });
    expect(download.status).toBe(200);
    expect(await download.text()).toBe("# secret\n");
    const overview = await hub.request("/api/users/alice/overview", { redirect: "manual" });
    expect(overview.status).toBe(307);
    expect(overview.headers.get("location")).toBe("/api/users/alicia/overview");
    expect((await readJson<UserOverview>(await hub.request("/api/users/alice/overview"))).user).toBe(
      "alicia",
    );
    expect(
      (await hub.request("/api/users/alice/avatar", { redirect: "manual" })).headers.get("location"),
    ).toBe("/api/users/alicia/avatar");
    // A private repository's new name is shown only to those who may read it.
    expect((await hub.request("/api/models/alice/secret", { redirect: "manual" })).status).toBe(401);
    expect((await hub.request("/api/models/alice/secret", { token: bob, redirect: "manual" })).status).toBe(
      404,
    );

    // A token granted the repository under its old name still reaches it.
    expect((await hub.request("/api/models/alicia/secret", { token: bounded })).status).toBe(200);
    const tokens = await readJson<{ tokens: Array<{ repositories: string[] | null }> }>(
      await hub.request("/api/me/tokens", { token: write }),
    );
    expect(tokens.tokens.map((t) => t.repositories).filter(Boolean)).toEqual([["alicia/secret"]]);

    // git over HTTPS with the old owner: fetch and push through the existing remote, clone anew.
    writeFileSync(path.join(before, "after.txt"), "pushed to the old remote\n");
    await git(["add", "after.txt"], before);
    await git(["commit", "-q", "-m", "after the rename"], before);
    const push = await git(["push", "origin", "main"], before);
    expect(push.code, push.stderr).toBe(0);
    const head = (await git(["rev-parse", "HEAD"], before)).stdout.trim();
    const info = await readJson<RepoInfo>(await hub.request("/api/models/alicia/secret", { token: write }));
    expect(info.sha).toBe(head);
    expect((await git(["pull", "-q", "origin", "main"], before)).code).toBe(0);
    for (const base of [hub.gitUrl, hub.url]) {
      const dir = path.join(work, `clone-${base === hub.url ? "hub" : "git"}`);
      const clone = await git(["clone", withToken(`${base}/alice/secret.git`, write), dir], work);
      expect(clone.code, clone.stderr).toBe(0);
      expect(readFileSync(path.join(dir, "after.txt"), "utf8")).toBe("pushed to the old remote\n");
    }
    const anonymous = await git(["clone", "-q", `${hub.gitUrl}/datasets/alice/corpus`, "corpus"], work);
    expect(anonymous.code, anonymous.stderr).toBe(0);

    // git over SSH with the old owner: the remote is followed to the repository.
    const sshClone = await viaSsh(["clone", "-q", `${hub.sshUrl}/alice/secret.git`, "ssh-clone"]);
    expect(sshClone.code, sshClone.stderr).toBe(0);
    const sshDir = path.join(work, "ssh-clone");
    writeFileSync(path.join(sshDir, "ssh.txt"), "over ssh\n");
    await git(["add", "ssh.txt"], sshDir);
    await git(["commit", "-q", "-m", "over ssh"], sshDir);
    const sshPush = await viaSsh(["push", "-q", "origin", "main"], sshDir);
    expect(sshPush.code, sshPush.stderr).toBe(0);
    const sshHead = (await git(["rev-parse", "HEAD"], sshDir)).stdout.trim();
    expect(
      (await readJson<RepoInfo>(await hub.request("/api/models/alicia/secret", { token: write }))).sha,
    ).toBe(sshHead);
    // Following never opens a repository the key's account may not read.
    const bobKey = path.join(work, "bob_key");
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "bob", "-f", bobKey]);
    await hub.request("/api/me/keys", {
      method: "POST",
      token: bob,
      json: { key: readFileSync(`${bobKey}.pub`, "utf8") },
    });
    const hidden = await git(["ls-remote", `${hub.sshUrl}/alice/secret.git`], work, {
      GIT_SSH_COMMAND: sshCommand(bobKey),
    });
    expect(hidden.code).not.toBe(0);
    expect(hidden.stderr).toContain("alice/secret was not found");
    expect(hidden.stderr).not.toContain("alicia");
  });

  it("serves Git LFS through old remotes, over HTTPS and SSH", async () => {
    const config = lfsGitConfig(work, false);
    const lfs = (args: string[], cwd = work, env: Record<string, string> = {}) =>
      git(args, cwd, { GIT_CONFIG_GLOBAL: config, ...env });
    const oldRemote = withToken(`${hub.gitUrl}/alice/secret`, write);
    const clone = await lfs(["clone", "-q", oldRemote, "lfs-https"]);
    expect(clone.code, clone.stderr).toBe(0);
    const dir = path.join(work, "lfs-https");
    const weights = Buffer.alloc(200_000, 7);
    writeFileSync(path.join(dir, "weights.safetensors"), weights);
    await lfs(["add", "weights.safetensors"], dir);
    await lfs(["commit", "-q", "-m", "weights"], dir);
    const push = await lfs(["push", "-q", "origin", "main"], dir);
    expect(push.code, push.stderr).toBe(0);
    const again = await lfs(["clone", "-q", oldRemote, "lfs-again"]);
    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(path.join(work, "lfs-again", "weights.safetensors")).equals(weights)).toBe(true);

    const ssh = sshCommand(keyFile);
    const sshClone = await lfs(["clone", "-q", `${hub.sshUrl}/alice/secret.git`, "lfs-ssh"], work, {
      GIT_SSH_COMMAND: ssh,
    });
    expect(sshClone.code, sshClone.stderr).toBe(0);
    expect(readFileSync(path.join(work, "lfs-ssh", "weights.safetensors")).equals(weights)).toBe(true);
  });

  it("keeps the old username for its account: nobody else can take it, the owner can take it back", async () => {
    // Another account: neither a rename, a new user nor a new organization may take it.
    const dave = await hub.createUser("dave");
    const daveToken = await hub.createToken("dave");
    await hub.reauthenticate(daveToken, dave.password);
    const taken = await migrate({ username: "alice" }, daveToken);
    expect(taken.status).toBe(409);
    expect((await readJson<ApiError>(taken)).code).toBe("handle_reserved");
    const previewed = await readJson<UsernamePreview>(await preview("alice", daveToken));
    expect(previewed).toMatchObject({ valid: true, available: false, problem: { code: "handle_reserved" } });
    const newUser = await hub.cli(
      ["user", "create", "alice", "--email", "other@example.com", "--password-stdin"],
      "another password\n",
    );
    expect(newUser.code).toBe(1);
    expect(newUser.stderr).toMatch(/reserved/);
    const org = await hub.cli(["org", "create", "alice", "--owner", "dave"]);
    expect(org.code).toBe(1);
    expect(org.stderr).toMatch(/reserved/);

    // The owner takes it back: names under it are live again, the other name now redirects.
    const back = await migrate({ username: "alice" });
    expect(back.status).toBe(200);
    expect((await readJson<UsernameMigration>(back)).previousName).toBe("alicia");
    expect((await hub.request("/api/models/alice/secret", { token: write, redirect: "manual" })).status).toBe(
      200,
    );
    const moved = await hub.request("/api/models/alicia/model", { redirect: "manual" });
    expect(moved.status).toBe(307);
    expect(moved.headers.get("location")).toBe("/api/models/alice/model");
    const me = await readJson<Me>(await hub.request("/api/me", { token: write }));
    expect(me.name).toBe("alice");
    expect(me.reservedUsernames.map((r) => r.name)).toEqual(["alicia"]);
    const clone = await git(["clone", "-q", `${hub.gitUrl}/alicia/model`, "back"], work);
    expect(clone.code, clone.stderr).toBe(0);
  });

  it("documents both operations", async () => {
    const doc = (await (await hub.request("/api/openapi.json")).json()) as {
      paths: Record<
        string,
        Record<
          string,
          { operationId: string; parameters?: unknown; requestBody?: unknown; responses: object }
        >
      >;
    };
    const path = doc.paths["/api/me/profile/username"];
    expect(path?.get?.operationId).toBe("account_profile_username_preview");
    expect(JSON.stringify(path?.get?.parameters)).toContain("username");
    expect(JSON.stringify(path?.get?.responses)).toContain("gitRemotes");
    expect(path?.post?.operationId).toBe("account_profile_username_migrate");
    expect(JSON.stringify(path?.post?.requestBody)).toContain("username");
    expect(JSON.stringify(path?.post?.responses)).toContain("previousName");
  });
});

describe.each(DIALECTS)("a username given up without a reservation period on %s", (dialect) => {
  let hub: InProcessHub;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    await receiver.start();
    hub = await startInProcessHub({
      dialect,
      env: { HUB_USERNAME_RESERVATION_DAYS: "0", HUB_WEBHOOKS_ALLOW_PRIVATE: "1" },
    });
  });
  afterAll(async () => {
    await hub?.stop();
    await receiver.stop();
  });

  it("can be claimed by another account at once, and then stops redirecting", async () => {
    const alice = await hub.createUser("alice");
    const token = await hub.createToken("alice");
    expect(
      (await hub.request("/api/repos", { method: "POST", token, json: { repo_id: "alice/model" } })).status,
    ).toBe(201);
    const route = await hub.request("/api/me/webhooks", {
      method: "POST",
      token,
      json: { url: receiver.url, watched: [{ type: "user", name: "alice" }], domains: ["repo"] },
    });
    expect(route.status).toBe(201);
    await hub.reauthenticate(token, alice.password);
    const renamed = await hub.request("/api/me/profile/username", {
      method: "POST",
      token,
      json: { username: "alicia" },
    });
    expect(renamed.status).toBe(200);
    // Each repository of the account moved: a webhook watching the namespace hears it.
    await receiver.waitFor(1);
    expect(receiver.received[0]?.payload).toMatchObject({
      event: { action: "move", scope: "repo" },
      repo: { name: "alicia/model", owner: { type: "user", name: "alicia" } },
      movedFrom: { name: "alice/model" },
      actor: { name: "alice" },
    });
    expect((await hub.request("/api/models/alice/model", { redirect: "manual" })).status).toBe(307);
    expect((await hub.request("/api/users/alice/overview", { redirect: "manual" })).status).toBe(307);

    const created = await hub.cli(
      ["user", "create", "alice", "--email", "another-alice@example.com", "--password-stdin"],
      "another long password\n",
    );
    expect(created.code, created.stderr).toBe(0);
    const other = await hub.createToken("alice");
    expect((await hub.request("/api/models/alice/model", { token: other, redirect: "manual" })).status).toBe(
      404,
    );
    expect((await readJson<UserOverview>(await hub.request("/api/users/alice/overview"))).numModels).toBe(0);
    expect((await hub.request("/api/models/alicia/model", { redirect: "manual" })).status).toBe(200);
  });
});
