import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { RepoSummary } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { git, withToken } from "../test-support/git-client.js";
import { readJson, startHub, type TestHub } from "../test-support/hub-process.js";

const COMMITS = 200;
const PUSHES = 6;

/**
 * Two hub processes of one deployment (one PostgreSQL, one Redis, one data
 * dir) take writes to one repository at once: commits through the NDJSON API
 * split across both, and pushes to other branches of it over HTTPS through
 * both. Commits take turns through the repository's advisory lock, so each one
 * lands on the head its turn found: every commit is acknowledged, and every
 * acknowledged commit and push is in the history afterwards.
 */
describe("writes to one repository through two hub processes on PostgreSQL", () => {
  let first: TestHub;
  let second: TestHub;
  let token: string;
  let work: string;
  let summary: RepoSummary;

  const bare = (args: string[]) =>
    execFileSync("git", args, {
      cwd: path.join(first.dataDir, "repositories", summary._id.slice(0, 2), `${summary._id}.git`),
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
      maxBuffer: 64 * 1024 * 1024,
    }).toString();

  beforeAll(async () => {
    first = await startHub({
      dialect: "postgres",
      env: {
        HUB_REDIS_URL: "redis://127.0.0.1:6379",
        HUB_REDIS_PREFIX: `hub-test-${randomBytes(4).toString("hex")}:`,
      },
    });
    second = await startHub({ sharing: first });
    work = mkdtempSync(path.join(os.tmpdir(), "hub-writes-"));
    await first.createUser("alice");
    token = await first.createToken("alice");
    summary = await readJson<RepoSummary>(
      await first.request("/api/repos", { method: "POST", token, json: { repo_id: "alice/busy" } }),
    );
    expect(summary.id).toBe("alice/busy");
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it("keeps every one of 200 concurrent commits and concurrent pushes, and git fsck is clean", async () => {
    const clone = path.join(work, "clone");
    expect((await git(["clone", withToken(`${first.gitUrl}/alice/busy`, token), clone], work)).code).toBe(0);
    const base = (await git(["rev-parse", "HEAD"], clone)).stdout.trim();

    const commit = async (i: number) => {
      const hub = i % 2 === 0 ? first : second;
      const body = [
        { key: "header", value: { summary: `Commit ${i}` } },
        {
          key: "file",
          value: {
            path: `files/${i}.txt`,
            encoding: "base64",
            content: Buffer.from(`file ${i}\n`).toString("base64"),
          },
        },
      ]
        .map((line) => JSON.stringify(line))
        .join("\n");
      const response = await hub.request("/api/models/alice/busy/commit/main", {
        method: "POST",
        token,
        headers: { "content-type": "application/x-ndjson" },
        body,
      });
      const text = await response.text();
      return { status: response.status, text, i };
    };
    const push = async (i: number) => {
      const hub = i % 2 === 0 ? first : second;
      const dir = path.join(work, `push-${i}`);
      expect((await git(["clone", "--quiet", clone, dir], work)).code).toBe(0);
      expect((await git(["checkout", "--quiet", "-b", `side-${i}`, base], dir)).code).toBe(0);
      writeFileSync(path.join(dir, `side-${i}.txt`), `side ${i}\n`);
      await git(["add", "."], dir);
      await git(["commit", "--quiet", "-m", `Side ${i}`], dir);
      const sha = (await git(["rev-parse", "HEAD"], dir)).stdout.trim();
      const pushed = await git(
        ["push", withToken(`${hub.gitUrl}/alice/busy`, token), `side-${i}:refs/heads/side-${i}`],
        dir,
      );
      return { code: pushed.code, stderr: pushed.stderr, sha, branch: `side-${i}` };
    };

    const [commits, pushes] = await Promise.all([
      Promise.all(Array.from({ length: COMMITS }, (_, i) => commit(i))),
      Promise.all(Array.from({ length: PUSHES }, (_, i) => push(i))),
    ]);

    const failed = commits.filter((c) => c.status !== 200);
    expect(failed.map((c) => `${c.i}: ${c.status} ${c.text}`)).toEqual([]);
    const acknowledged = commits.map((c) => (JSON.parse(c.text) as { commitOid: string }).commitOid);
    expect(new Set(acknowledged).size).toBe(COMMITS);

    bare(["fsck", "--full", "--strict", "--no-dangling"]);
    const history = new Set(bare(["rev-list", "refs/heads/main"]).trim().split("\n"));
    expect(acknowledged.filter((oid) => !history.has(oid))).toEqual([]);
    // One linear history: the base, then exactly the acknowledged commits.
    expect(history.size).toBe(COMMITS + 1);
    const tree = bare(["ls-tree", "-r", "--name-only", "refs/heads/main", "files/"]).trim().split("\n");
    expect(tree.length).toBe(COMMITS);

    for (const pushed of pushes) {
      expect(pushed.code, pushed.stderr).toBe(0);
      expect(bare(["rev-parse", `refs/heads/${pushed.branch}`]).trim()).toBe(pushed.sha);
    }

    // Each process answers with the head the other wrote last.
    const head = bare(["rev-parse", "refs/heads/main"]).trim();
    for (const hub of [first, second]) {
      const info = await readJson<{ sha: string }>(await hub.request("/api/models/alice/busy", { token }));
      expect(info.sha).toBe(head);
    }
  });
});
