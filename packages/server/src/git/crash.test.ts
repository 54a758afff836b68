import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { RepoInfo, RepoSummary } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { git, withToken } from "../test-support/git-client.js";
import { readJson, startHub, type TestHub } from "../test-support/hub-process.js";

/** Checks a bare repository the way an operator would after a crash. */
function fsck(repoPath: string) {
  const run = (args: string[]) =>
    execFileSync("git", args, {
      cwd: repoPath,
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    }).toString();
  run(["fsck", "--full", "--strict", "--no-dangling"]);
  const isAncestor = (ancestor: string, descendant: string) => {
    try {
      run(["merge-base", "--is-ancestor", ancestor, descendant]);
      return true;
    } catch {
      return false;
    }
  };
  const refs = run(["for-each-ref", "--format=%(refname) %(objectname)"]).trim().split("\n").filter(Boolean);
  for (const line of refs) {
    const [, sha = ""] = line.split(" ");
    expect(run(["cat-file", "-t", sha]).trim()).toBe("commit");
    run(["rev-list", "--objects", sha]);
  }
  return { run, isAncestor };
}

describe("a hub killed with SIGKILL mid-write", () => {
  let hub: TestHub;
  const killed: TestHub[] = [];
  let token: string;
  let work: string;
  let summary: RepoSummary;

  const repoPath = () =>
    path.join(hub.dataDir, "repositories", summary._id.slice(0, 2), `${summary._id}.git`);
  const restart = async () => {
    await hub.signal("SIGKILL");
    killed.push(hub);
    hub = await startHub({ sharing: hub });
  };

  beforeAll(async () => {
    hub = await startHub();
    work = mkdtempSync(path.join(os.tmpdir(), "hub-crash-"));
    await hub.createUser("alice");
    token = await hub.createToken("alice");
    summary = await readJson<RepoSummary>(
      await hub.request("/api/repos", { method: "POST", token, json: { repo_id: "alice/crash" } }),
    );
    expect(summary.id).toBe("alice/crash");
  });
  afterAll(async () => {
    await hub?.stop();
    // The first process owns the data dir and database; it is cleaned up last.
    for (const dead of killed.reverse()) await dead.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it("keeps every acknowledged push and a consistent repository when killed during a push", async () => {
    const dir = path.join(work, "clone");
    expect((await git(["clone", withToken(`${hub.gitUrl}/alice/crash`, token), dir], work)).code).toBe(0);
    writeFileSync(path.join(dir, "acknowledged.txt"), "kept");
    await git(["add", "."], dir);
    await git(["commit", "-m", "Acknowledged"], dir);
    expect((await git(["push", "origin", "main"], dir)).code).toBe(0);
    const acknowledged = (await git(["rev-parse", "HEAD"], dir)).stdout.trim();

    for (let i = 0; i < 200; i++) writeFileSync(path.join(dir, `bulk-${i}.bin`), Buffer.alloc(40_000, i));
    await git(["add", "."], dir);
    await git(["commit", "-m", "Large"], dir);
    const pushing = git(["push", "origin", "main"], dir);
    await new Promise((resolve) => setTimeout(resolve, 60));
    await restart();
    await pushing;

    const { run, isAncestor } = fsck(repoPath());
    const main = run(["rev-parse", "refs/heads/main"]).trim();
    expect(isAncestor(acknowledged, main)).toBe(true);
    const info = await readJson<RepoInfo>(await hub.request("/api/models/alice/crash", { token }));
    expect(info.sha).toBe(main);
  });

  it("keeps a consistent branch when killed during HTTP commits", async () => {
    const before = (await readJson<RepoInfo>(await hub.request("/api/models/alice/crash", { token }))).sha;
    const commit = (i: number) =>
      hub
        .request("/api/models/alice/crash/commit/main", {
          method: "POST",
          token,
          headers: { "content-type": "application/x-ndjson" },
          body: [
            JSON.stringify({ key: "header", value: { summary: `HTTP ${i}` } }),
            JSON.stringify({
              key: "file",
              value: {
                path: `http/${i}.txt`,
                content: Buffer.from(String(i)).toString("base64"),
                encoding: "base64",
              },
            }),
          ].join("\n"),
        })
        .then((r) => r.status)
        .catch(() => 0);
    const acknowledged = await commit(0);
    expect(acknowledged).toBe(200);
    const after0 = (await readJson<RepoInfo>(await hub.request("/api/models/alice/crash", { token }))).sha;
    expect(after0).not.toBe(before);
    const inFlight = Array.from({ length: 8 }, (_, i) => commit(i + 1));
    await new Promise((resolve) => setTimeout(resolve, 30));
    await restart();
    await Promise.all(inFlight);

    const { run, isAncestor } = fsck(repoPath());
    const main = run(["rev-parse", "refs/heads/main"]).trim();
    expect(isAncestor(after0 ?? "", main)).toBe(true);
    const files = run(["ls-tree", "-r", "--name-only", main]);
    expect(files).toContain("http/0.txt");
  });
});
