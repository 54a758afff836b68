import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AccountKey, RepoInfo } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../test-support/databases.js";
import { git, lfsGitConfig } from "../../test-support/git-client.js";
import { readJson, startHub, type TestHub } from "../../test-support/hub-process.js";
import { WebhookReceiver } from "../../test-support/webhook-receiver.js";

describe.each(DIALECTS)("git over SSH with the real OpenSSH client on %s", (dialect) => {
  let hub: TestHub;
  let work: string;
  const tokens: Record<string, string> = {};
  const keyFiles: Record<string, string> = {};
  const keyIds: Record<string, string> = {};
  const receiver = new WebhookReceiver();

  const sshOptions = (who: string) => [
    "-i",
    keyFiles[who] ?? "",
    "-o",
    "IdentitiesOnly=yes",
    "-o",
    "StrictHostKeyChecking=no",
    "-o",
    "UserKnownHostsFile=/dev/null",
    "-o",
    "LogLevel=ERROR",
    "-o",
    "BatchMode=yes",
  ];
  const viaSsh = (who: string, args: string[], cwd = work) =>
    git(args, cwd, { GIT_SSH_COMMAND: `ssh ${sshOptions(who).join(" ")}` });
  const sshCommand = (who: string, command?: string) => {
    const { port, hostname } = new URL(hub.sshUrl);
    try {
      const stdout = execFileSync(
        "ssh",
        [...sshOptions(who), "-p", port, `git@${hostname}`, ...(command ? [command] : [])],
        { stdio: "pipe" },
      ).toString();
      return { code: 0, output: stdout };
    } catch (err) {
      const failure = err as { status: number; stderr: Buffer; stdout: Buffer };
      return { code: failure.status, output: `${failure.stdout}${failure.stderr}` };
    }
  };
  const url = (repo: string) => `${hub.sshUrl}/${repo}.git`;

  beforeAll(async () => {
    hub = await startHub({
      dialect,
      env: { HUB_SSH_MAX_CONNECTIONS_PER_KEY: "2", HUB_WEBHOOKS_ALLOW_PRIVATE: "1" },
    });
    await receiver.start();
    work = mkdtempSync(path.join(os.tmpdir(), "hub-ssh-"));
    for (const who of ["alice", "bob", "stranger"]) {
      await hub.createUser(who);
      tokens[who] = await hub.createToken(who);
      const file = path.join(work, `${who}_key`);
      execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", who, "-f", file]);
      keyFiles[who] = file;
      if (who === "stranger") continue;
      const response = await hub.request("/api/me/keys", {
        method: "POST",
        token: tokens[who],
        json: { key: readFileSync(`${file}.pub`, "utf8") },
      });
      expect(response.status).toBe(201);
      keyIds[who] = (await readJson<AccountKey>(response)).id;
    }
    for (const [repo, isPrivate] of [
      ["alice/model", true],
      ["alice/open", false],
    ] as const) {
      expect(
        (
          await hub.request("/api/repos", {
            method: "POST",
            token: tokens.alice,
            json: { repo_id: repo, private: isPrivate },
          })
        ).status,
      ).toBe(201);
    }
  });
  afterAll(async () => {
    await hub?.stop();
    await receiver.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it("refuses a key that already holds its limit of connections, until one closes", async () => {
    const { port, hostname } = new URL(hub.sshUrl);
    const hold = () =>
      spawn("ssh", [...sshOptions("bob"), "-N", "-p", port, `git@${hostname}`], { stdio: "ignore" });
    const holders = [hold(), hold()];
    try {
      // Both holders authenticate and stay connected (-N runs no command); then a third connection is refused.
      // A holder that could not connect (a busy machine) is started again.
      let refused = "";
      for (let i = 0; i < 150 && !refused; i++) {
        holders.forEach((holder, index) => {
          if (holder.exitCode !== null) holders[index] = hold();
        });
        const probe = sshCommand("bob", "git-lfs-authenticate 'alice/open' download");
        if (probe.code !== 0) refused = probe.output;
        else await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(refused).toContain("Permission denied");
    } finally {
      for (const holder of holders) holder.kill();
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = await viaSsh("bob", ["ls-remote", url("alice/open")]);
    expect(after.code).toBe(0);
  });

  it("clones and pushes with a registered ed25519 key, and the push reaches webhooks", async () => {
    const route = await hub.request("/api/me/webhooks", {
      method: "POST",
      token: tokens.alice,
      json: {
        url: receiver.url,
        watched: [{ type: "model", name: "alice/model" }],
        domains: ["repo.content"],
      },
    });
    expect(route.status).toBe(201);
    const { secret } = (await route.json()) as { secret: string };
    hub.secrets.add(secret);
    receiver.verifyWith(secret);
    const clone = await viaSsh("alice", ["clone", url("alice/model"), "model"]);
    expect(clone.code, clone.stderr).toBe(0);
    const dir = path.join(work, "model");
    writeFileSync(path.join(dir, "card.md"), "# Over SSH\n");
    await git(["add", "card.md"], dir);
    await git(["commit", "-m", "Over SSH"], dir);
    const push = await viaSsh("alice", ["push", "origin", "main"], dir);
    expect(push.code, push.stderr).toBe(0);
    const head = (await git(["rev-parse", "HEAD"], dir)).stdout.trim();
    expect(
      (await readJson<RepoInfo>(await hub.request("/api/models/alice/model", { token: tokens.alice }))).sha,
    ).toBe(head);
    const keys = await readJson<AccountKey[]>(await hub.request("/api/me/keys", { token: tokens.alice }));
    expect(keys[0]?.last_used_at).not.toBeNull();
    await receiver.waitFor(1);
    expect(receiver.received[0]?.verified).toBe(true);
    expect(receiver.received[0]?.payload).toMatchObject({
      event: { scope: "repo.content", action: "update" },
      actor: { name: "alice" },
      updatedRefs: [
        { ref: "refs/heads/main", newSha: head, changes: { added: 1, paths: [{ path: "card.md" }] } },
      ],
    });
  });

  it("lets the same access rules decide: other accounts cannot see private repositories or push where they may not write", async () => {
    const hidden = await viaSsh("bob", ["clone", url("alice/model"), "bob-model"]);
    expect(hidden.code).not.toBe(0);
    expect(hidden.stderr).toMatch(/Repository alice\/model was not found/);
    const open = await viaSsh("bob", ["clone", url("alice/open"), "bob-open"]);
    expect(open.code, open.stderr).toBe(0);
    const dir = path.join(work, "bob-open");
    writeFileSync(path.join(dir, "x.txt"), "x");
    await git(["add", "x.txt"], dir);
    await git(["commit", "-m", "x"], dir);
    const push = await viaSsh("bob", ["push", "origin", "main"], dir);
    expect(push.code).not.toBe(0);
    expect(push.stderr).toMatch(/You may not push to alice\/open/);
  });

  it("refuses keys no account registered", async () => {
    const result = await viaSsh("stranger", ["ls-remote", url("alice/open")]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/Permission denied \(publickey\)/);
  });

  it("gives no shell and runs nothing but git's two services", () => {
    const shell = sshCommand("alice");
    expect(shell.code).not.toBe(0);
    expect(shell.output).toMatch(/Hi alice, the hub gives no shell/);
    for (const command of [
      "rm -rf /",
      "git-upload-pack '../../etc'",
      "git-upload-pack '--help'",
      "git-upload-archive 'alice/open'",
    ]) {
      const result = sshCommand("alice", command);
      expect(result.code, command).not.toBe(0);
      expect(result.output, command).toMatch(/Only git-upload-pack and git-receive-pack/);
    }
  });

  it("serves Git LFS to the real git-lfs client through git-lfs-authenticate", async () => {
    const config = lfsGitConfig(work, false);
    const lfsGit = (args: string[], cwd = work) =>
      git(args, cwd, { GIT_SSH_COMMAND: `ssh ${sshOptions("alice").join(" ")}`, GIT_CONFIG_GLOBAL: config });
    expect((await lfsGit(["clone", url("alice/model"), "lfs-model"])).code).toBe(0);
    const dir = path.join(work, "lfs-model");
    const weights = Buffer.alloc(300_000, 3);
    writeFileSync(path.join(dir, "weights.safetensors"), weights);
    await lfsGit(["add", "weights.safetensors"], dir);
    await lfsGit(["commit", "-m", "Weights over SSH"], dir);
    const push = await lfsGit(["push", "origin", "main"], dir);
    expect(push.code, push.stderr).toBe(0);
    const again = await lfsGit(["clone", url("alice/model"), "lfs-again"]);
    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(path.join(work, "lfs-again", "weights.safetensors")).equals(weights)).toBe(true);
    const bogus = sshCommand("alice", "git-lfs-authenticate alice/model.git delete");
    expect(bogus.code).not.toBe(0);
    const readOnly = sshCommand("bob", "git-lfs-authenticate alice/open.git upload");
    expect(readOnly.code).not.toBe(0);
    expect(readOnly.output).toMatch(/You may not push/);
    const download = sshCommand("bob", "git-lfs-authenticate alice/open.git download");
    expect(download.code).toBe(0);
    expect(JSON.parse(download.output)).toMatchObject({
      href: `${hub.gitUrl}/alice/open.git/info/lfs`,
      expires_in: 3600,
    });
  });

  it("stops a removed key on the very next connection", async () => {
    expect((await viaSsh("bob", ["ls-remote", url("alice/open")])).code).toBe(0);
    expect(
      (await hub.request(`/api/me/keys/${keyIds.bob}`, { method: "DELETE", token: tokens.bob })).status,
    ).toBe(204);
    const after = await viaSsh("bob", ["ls-remote", url("alice/open")]);
    expect(after.code).not.toBe(0);
    expect(after.stderr).toMatch(/Permission denied \(publickey\)/);
  });
});
