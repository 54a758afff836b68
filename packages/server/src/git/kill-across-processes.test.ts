import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ListMultipartUploadsCommand } from "@aws-sdk/client-s3";
import type { CommitResponse, RepoSummary } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../config.js";
import { createObjectStore } from "./lfs/create-object-store.js";
import { git, sshCommand, withToken } from "../test-support/git-client.js";
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
 * dir); one is killed with SIGKILL while it takes pushes over HTTPS and SSH,
 * file API commits and LFS uploads, one of them certainly in the middle of
 * its body. The other keeps answering throughout, and everything the killed
 * one acknowledged is there: each acknowledged push and commit in its branch,
 * each acknowledged LFS object whole in the store and downloadable. The
 * upload cut off is nowhere visible, and the pass over leftovers removes the
 * incomplete multipart upload it left in the bucket.
 */
describe("a hub process killed with SIGKILL mid-push and mid-upload, beside another", () => {
  let survivor: TestHub;
  let victim: TestHub;
  let minio: TestMinio;
  let bucket: string;
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
        ...minio.env((bucket = await minio.createBucket())),
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

    // Pushes over SSH to a branch of their own, and file API commits to another.
    const keyFile = path.join(work, "alice_key");
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", keyFile]);
    const key = await survivor.request("/api/me/keys", {
      method: "POST",
      token,
      json: { key: readFileSync(`${keyFile}.pub`, "utf8") },
    });
    expect(key.status).toBe(201);
    const sshEnv = {
      GIT_SSH_COMMAND: sshCommand(keyFile),
    };
    const sshClone = path.join(work, "ssh-clone");
    expect(
      (await git(["clone", withToken(`${survivor.gitUrl}/alice/survives`, token), sshClone], work)).code,
    ).toBe(0);
    const sshPushed: string[] = [];
    const pushingOverSsh = (async () => {
      for (let i = 0; ; i++) {
        for (let f = 0; f < 10; f++)
          writeFileSync(path.join(sshClone, `s${i}-${f}.bin`), randomBytes(20_000));
        await git(["add", "."], sshClone);
        await git(["commit", "--quiet", "-m", `SSH push ${i}`], sshClone);
        const sha = (await git(["rev-parse", "HEAD"], sshClone)).stdout.trim();
        const result = await git(
          ["push", `${victim.sshUrl}/alice/survives.git`, "HEAD:ssh"],
          sshClone,
          sshEnv,
        );
        if (result.code === 0) sshPushed.push(sha);
        else if (killed) return;
        else throw new Error(`SSH push ${i} failed before the kill: ${result.stderr}`);
      }
    })();
    const committed: string[] = [];
    const committing = (async () => {
      // The branch starts at main's first push.
      while (pushed.length < 1) await pause(20);
      const branch = await survivor.request("/api/models/alice/survives/branch/api", {
        method: "POST",
        token,
        json: {},
      });
      expect(branch.status, await branch.clone().text()).toBe(200);
      for (let i = 0; ; i++) {
        try {
          const response = await victim.request("/api/models/alice/survives/commit/api", {
            method: "POST",
            token,
            headers: { "content-type": "application/x-ndjson" },
            body: [
              JSON.stringify({ key: "header", value: { summary: `API commit ${i}` } }),
              JSON.stringify({
                key: "file",
                value: {
                  path: `api/${i}.txt`,
                  content: Buffer.from(`commit ${i}\n`).toString("base64"),
                  encoding: "base64",
                },
              }),
            ].join("\n"),
          });
          if (response.status !== 200) throw new Error(`API commit ${i} answered ${response.status}`);
          committed.push((await readJson<CommitResponse>(response)).commitOid);
        } catch (error) {
          if (killed) return;
          throw error;
        }
      }
    })();

    // An upload whose body is in flight when the kill comes: 12 MiB sent (a multipart upload to the store has
    // begun), the rest held back until after it.
    const cut = randomBytes(16 * 1024 * 1024);
    const cutOid = sha256(cut);
    const cutKey = `hub/lfs/objects/${cutOid.slice(0, 2)}/${cutOid.slice(2, 4)}/${cutOid}`;
    const openUploads = async () =>
      ((await minio.client.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? []).map(
        (upload) => upload.Key,
      );
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const cutAnswer = await readJson<BatchAnswer>(
      await batch(victim, "upload", [{ oid: cutOid, size: cut.length }]),
    );
    const cutUpload = fetch(cutAnswer.objects[0]?.actions?.upload?.href ?? "", {
      method: "PUT",
      body: new ReadableStream<Uint8Array>({
        async start(controller) {
          for (let at = 0; at < 12 * 1024 * 1024; at += 1024 * 1024)
            controller.enqueue(cut.subarray(at, at + 1024 * 1024));
          await held;
          controller.enqueue(cut.subarray(12 * 1024 * 1024));
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit).then(
      (response) => response.status,
      () => "cut off",
    );

    // Until all are under way; a loop that fails before the kill fails the test at once.
    let gaveUp = false;
    const underWay = async () => {
      while (
        !gaveUp &&
        (pushed.length < 2 || uploaded.length < 2 || sshPushed.length < 1 || committed.length < 2)
      )
        await pause(20);
      while (!gaveUp && !(await openUploads()).includes(cutKey)) await pause(20);
    };
    const loops = [pushing, pushingOverSsh, committing, uploading];
    try {
      await Promise.race([
        underWay(),
        Promise.all(loops).then(() => expect.fail("a loop ended before the kill")),
      ]);
    } catch (error) {
      gaveUp = true;
      release();
      throw error;
    }
    killed = true;
    await victim.signal("SIGKILL");
    release();
    await Promise.all([pushing, pushingOverSsh, committing, uploading, serving]);

    // The upload cut off answered no success, left no object, and left an incomplete multipart upload, which the
    // pass over leftovers (run with a cutoff past its age) removes.
    expect(await cutUpload).toBe("cut off");
    const store = createObjectStore(loadConfig({ ...minio.env(bucket), HUB_DATA_DIR: survivor.dataDir }));
    expect(await store.size(cutOid)).toBeNull();
    expect(await openUploads()).toContain(cutKey);
    const leftovers = await store.removeLeftovers(new Date(Date.now() + 60_000));
    expect(leftovers.removed).toBeGreaterThanOrEqual(1);
    expect(await openUploads()).not.toContain(cutKey);

    expect(answers.every((status) => status === 200)).toBe(true);
    bare(["fsck", "--full", "--strict", "--no-dangling"]);
    const main = bare(["rev-parse", "refs/heads/main"]).trim();
    const history = new Set(bare(["rev-list", main]).trim().split("\n"));
    expect(pushed.filter((sha) => !history.has(sha))).toEqual([]);
    const overSsh = new Set(bare(["rev-list", "refs/heads/ssh"]).trim().split("\n"));
    expect(sshPushed.filter((sha) => !overSsh.has(sha))).toEqual([]);
    const throughApi = new Set(bare(["rev-list", "refs/heads/api"]).trim().split("\n"));
    expect(committed.filter((sha) => !throughApi.has(sha))).toEqual([]);

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
