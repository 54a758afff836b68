import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { RepoSummary } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { git, withToken } from "../test-support/git-client.js";
import { readJson, startHub, type TestHub } from "../test-support/hub-process.js";
import { startMinio, type TestMinio } from "../test-support/minio.js";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface BatchAnswer {
  objects: Array<{
    oid: string;
    actions?: Record<string, { href: string; header?: Record<string, string> }>;
  }>;
}

/**
 * Two hub processes of one deployment (PostgreSQL, Redis, MinIO, one data
 * dir); one is killed with SIGKILL while it takes pushes and LFS uploads. The
 * other keeps answering throughout, and everything the killed one
 * acknowledged is there: each acknowledged push in its branch, each
 * acknowledged LFS object whole in the store and downloadable.
 */
describe("a hub process killed with SIGKILL mid-push and mid-upload, beside another", () => {
  let survivor: TestHub;
  let victim: TestHub;
  let minio: TestMinio;
  let token: string;
  let work: string;
  let summary: RepoSummary;

  const basic = () => `Basic ${Buffer.from(`x:${token}`).toString("base64")}`;
  const batch = (hub: TestHub, operation: string, objects: unknown[]) =>
    fetch(`${hub.gitUrl}/alice/survives.git/info/lfs/objects/batch`, {
      method: "POST",
      headers: {
        accept: "application/vnd.git-lfs+json",
        "content-type": "application/vnd.git-lfs+json",
        authorization: basic(),
      },
      body: JSON.stringify({ operation, transfers: ["basic"], objects }),
    });
  const bare = (args: string[]) =>
    execFileSync("git", args, {
      cwd: path.join(survivor.dataDir, "repositories", summary._id.slice(0, 2), `${summary._id}.git`),
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    }).toString();

  beforeAll(async () => {
    minio = await startMinio();
    survivor = await startHub({
      dialect: "postgres",
      env: {
        HUB_REDIS_URL: "redis://127.0.0.1:6379",
        HUB_REDIS_PREFIX: `hub-test-${randomBytes(4).toString("hex")}:`,
        ...minio.env(await minio.createBucket()),
      },
    });
    victim = await startHub({ sharing: survivor });
    work = mkdtempSync(path.join(os.tmpdir(), "hub-kill-"));
    await survivor.createUser("alice");
    token = await survivor.createToken("alice");
    summary = await readJson<RepoSummary>(
      await survivor.request("/api/repos", { method: "POST", token, json: { repo_id: "alice/survives" } }),
    );
    expect(summary.id).toBe("alice/survives");
  });
  afterAll(async () => {
    await victim?.stop();
    await survivor?.stop();
    await minio?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it("keeps serving on the other, and loses nothing the killed one acknowledged", async () => {
    const clone = path.join(work, "clone");
    expect(
      (await git(["clone", withToken(`${survivor.gitUrl}/alice/survives`, token), clone], work)).code,
    ).toBe(0);
    let killed = false;

    const pushed: string[] = [];
    const pushing = (async () => {
      for (let i = 0; ; i++) {
        // Enough new objects that a push is still streaming when the kill comes.
        for (let f = 0; f < 20; f++) writeFileSync(path.join(clone, `p${i}-${f}.bin`), randomBytes(20_000));
        await git(["add", "."], clone);
        await git(["commit", "--quiet", "-m", `Push ${i}`], clone);
        const sha = (await git(["rev-parse", "HEAD"], clone)).stdout.trim();
        const result = await git(
          ["push", withToken(`${victim.gitUrl}/alice/survives`, token), "HEAD:main"],
          clone,
        );
        if (result.code === 0) pushed.push(sha);
        else if (killed) return;
        else throw new Error(`push ${i} failed before the kill: ${result.stderr}`);
      }
    })();

    const uploaded: Array<{ oid: string; size: number }> = [];
    const uploading = (async () => {
      for (let i = 0; ; i++) {
        // Every third object is over 8 MiB: a multipart upload to the store.
        const bytes = randomBytes(i % 3 === 2 ? 10 * 1024 * 1024 : 600_000);
        const oid = sha256(bytes);
        try {
          const answer = await readJson<BatchAnswer>(
            await batch(victim, "upload", [{ oid, size: bytes.length }]),
          );
          const href = answer.objects[0]?.actions?.upload?.href ?? "";
          const put = await fetch(href, { method: "PUT", body: bytes });
          if (put.status === 200) uploaded.push({ oid, size: bytes.length });
          else throw new Error(`upload ${i} answered ${put.status}`);
        } catch (error) {
          if (killed) return;
          throw error;
        }
      }
    })();

    // The other process answers all along.
    const answers: number[] = [];
    const serving = (async () => {
      while (!killed || answers.length < 20) {
        answers.push((await survivor.request("/api/whoami", { token })).status);
        await pause(20);
      }
    })();

    while (pushed.length < 2 || uploaded.length < 2) await pause(20);
    await pause(150);
    killed = true;
    await victim.signal("SIGKILL");
    await Promise.all([pushing, uploading, serving]);

    expect(answers.every((status) => status === 200)).toBe(true);
    bare(["fsck", "--full", "--strict", "--no-dangling"]);
    const main = bare(["rev-parse", "refs/heads/main"]).trim();
    const history = new Set(bare(["rev-list", main]).trim().split("\n"));
    expect(pushed.filter((sha) => !history.has(sha))).toEqual([]);

    // Every acknowledged object is whole: downloaded through the survivor (a presigned URL of the store).
    const answer = await readJson<BatchAnswer>(await batch(survivor, "download", uploaded));
    expect(answer.objects.length).toBe(uploaded.length);
    for (const object of uploaded) {
      const href = answer.objects.find((o) => o.oid === object.oid)?.actions?.download?.href ?? "";
      const body = new Uint8Array(await (await fetch(href)).arrayBuffer());
      expect(body.length).toBe(object.size);
      expect(sha256(body)).toBe(object.oid);
    }

    // The survivor takes the next push and commits an acknowledged object.
    writeFileSync(path.join(clone, "after.txt"), "after the kill\n");
    await git(["add", "."], clone);
    await git(["commit", "--quiet", "-m", "After"], clone);
    const fetched = await git(
      ["pull", "--quiet", "--rebase", withToken(`${survivor.gitUrl}/alice/survives`, token), "main"],
      clone,
    );
    expect(fetched.code, fetched.stderr).toBe(0);
    const push = await git(
      ["push", withToken(`${survivor.gitUrl}/alice/survives`, token), "HEAD:main"],
      clone,
    );
    expect(push.code, push.stderr).toBe(0);
    const [first] = uploaded;
    const commit = await survivor.request("/api/models/alice/survives/commit/main", {
      method: "POST",
      token,
      headers: { "content-type": "application/x-ndjson" },
      body: [
        JSON.stringify({ key: "header", value: { summary: "Weights" } }),
        JSON.stringify({
          key: "lfsFile",
          value: { path: "weights.bin", algo: "sha256", oid: first?.oid, size: first?.size },
        }),
      ].join("\n"),
    });
    expect(commit.status, await commit.clone().text()).toBe(200);
    bare(["fsck", "--full", "--strict", "--no-dangling"]);
  });
});
