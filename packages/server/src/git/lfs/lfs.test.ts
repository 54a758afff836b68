import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../config.js";
import { git, lfsGitConfig, withToken } from "../../test-support/git-client.js";
import { readJson, startHub, type TestHub } from "../../test-support/hub-process.js";
import { STORE_KINDS, STORE_SUITES, storeFor } from "../../test-support/minio.js";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { createObjectStore, createS3Client } from "./create-object-store.js";

interface BatchAnswer {
  transfer: string;
  objects: Array<{
    oid: string;
    size: number;
    error?: { code: number; message: string };
    actions?: Record<string, { href: string; expires_in: number }>;
  }>;
}

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

describe.each(STORE_SUITES)(
  "Git LFS with the real git-lfs client on $dialect, objects on $store",
  (suite) => {
    let hub: TestHub;
    let objects: Awaited<ReturnType<typeof storeFor>>;
    /** The store signs download URLs itself: the bytes come from it, and its URLs end only when they expire. */
    const presigned = suite.store === "s3";
    let work: string;
    let alice: string;
    let alicePassword: string;
    let bob: string;
    const lfsEnv = () => ({ HOME: work });

    const batch = (repo: string, operation: string, objects: unknown[], token?: string) =>
      fetch(`${hub.gitUrl}/${repo}.git/info/lfs/objects/batch`, {
        method: "POST",
        headers: {
          accept: "application/vnd.git-lfs+json",
          "content-type": "application/vnd.git-lfs+json",
          ...(token ? { authorization: `Basic ${Buffer.from(`x:${token}`).toString("base64")}` } : {}),
        },
        body: JSON.stringify({ operation, transfers: ["basic"], objects }),
      });
    const createRepo = async (token: string, repoId: string, isPrivate: boolean) => {
      const response = await hub.request("/api/repos", {
        method: "POST",
        token,
        json: { repo_id: repoId, private: isPrivate },
      });
      expect(response.status).toBe(201);
    };

    beforeAll(async () => {
      objects = await storeFor(suite.store);
      hub = await startHub({ dialect: suite.dialect, env: objects.env });
      work = mkdtempSync(path.join(os.tmpdir(), "hub-lfs-"));
      alicePassword = (await hub.createUser("alice")).password;
      await hub.createUser("bob");
      alice = await hub.createToken("alice");
      bob = await hub.createToken("bob");
      await createRepo(alice, "alice/weights", true);
      await createRepo(alice, "alice/open", false);
      lfsGitConfig(work, false);
    });
    afterAll(async () => {
      await hub?.stop();
      await objects?.stop();
      rmSync(work, { recursive: true, force: true });
    });

    /** What the hub's store holds of an object, looked up through the same factory the hub uses. */
    const storedSize = (oid: string) =>
      createObjectStore(loadConfig({ ...objects.env, HUB_DATA_DIR: hub.dataDir })).size(oid);

    const gitLfs = (args: string[], cwd: string) =>
      git(args, cwd, { GIT_CONFIG_GLOBAL: path.join(work, ".gitconfig"), ...lfsEnv() });

    it("pushes a 30 MB file through LFS and clones it back byte for byte", async () => {
      const clone = await gitLfs(["clone", withToken(`${hub.gitUrl}/alice/weights`, alice), "weights"], work);
      expect(clone.code, clone.stderr).toBe(0);
      const dir = path.join(work, "weights");
      const content = randomBytes(30 * 1024 * 1024);
      writeFileSync(path.join(dir, "model.safetensors"), content);
      await gitLfs(["add", "model.safetensors"], dir);
      await gitLfs(["commit", "-m", "Add weights"], dir);
      const push = await gitLfs(["push", "origin", "main"], dir);
      expect(push.code, push.stderr).toBe(0);

      const again = await gitLfs(
        ["clone", withToken(`${hub.gitUrl}/alice/weights`, alice), "weights-again"],
        work,
      );
      expect(again.code, again.stderr).toBe(0);
      const fetched = readFileSync(path.join(work, "weights-again", "model.safetensors"));
      expect(fetched.length).toBe(content.length);
      expect(sha256(fetched)).toBe(sha256(content));
      const pointer = (
        await gitLfs(["cat-file", "-p", "HEAD:model.safetensors"], path.join(work, "weights-again"))
      ).stdout;
      expect(pointer).toContain(`oid sha256:${sha256(content)}`);
    });

    it("lets anyone download a public repository's objects and challenges for private ones", async () => {
      const dir = path.join(work, "open");
      await gitLfs(["clone", withToken(`${hub.gitUrl}/alice/open`, alice), "open"], work);
      writeFileSync(path.join(dir, "data.bin"), randomBytes(200_000));
      await gitLfs(["add", "data.bin"], dir);
      await gitLfs(["commit", "-m", "data"], dir);
      expect((await gitLfs(["push", "origin", "main"], dir)).code).toBe(0);
      const anonymous = await gitLfs(["clone", `${hub.gitUrl}/alice/open`, "open-anon"], work);
      expect(anonymous.code, anonymous.stderr).toBe(0);
      expect(
        readFileSync(path.join(work, "open-anon", "data.bin")).equals(
          readFileSync(path.join(dir, "data.bin")),
        ),
      ).toBe(true);

      const privateBatch = await batch("alice/weights", "download", [{ oid: "a".repeat(64), size: 1 }]);
      expect(privateBatch.status).toBe(401);
      expect(privateBatch.headers.get("lfs-authenticate")).toBe('Basic realm="Hub"');
      expect((await batch("alice/weights", "download", [{ oid: "a".repeat(64), size: 1 }], bob)).status).toBe(
        404,
      );
      expect((await batch("alice/open", "upload", [{ oid: "a".repeat(64), size: 1 }])).status).toBe(401);
      const readOnly = await hub.createToken("alice", ["--role", "read"]);
      expect((await batch("alice/open", "upload", [{ oid: "a".repeat(64), size: 1 }], readOnly)).status).toBe(
        403,
      );
    });

    it("validates every object of a batch and says which are wrong", async () => {
      const response = await batch(
        "alice/open",
        "upload",
        [
          { oid: "../../etc/passwd", size: 1 },
          { oid: "A".repeat(64), size: 1 },
          { oid: "a".repeat(63), size: 1 },
          { oid: "b".repeat(64), size: -1 },
          { oid: "c".repeat(64), size: 5 },
        ],
        alice,
      );
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^application\/vnd\.git-lfs\+json/);
      const answer = await readJson<BatchAnswer>(response);
      expect(answer.transfer).toBe("basic");
      expect(answer.objects.map((o) => o.error?.code ?? 0)).toEqual([422, 422, 422, 422, 0]);
      expect(answer.objects[4]?.actions?.upload?.href).toMatch(/\/lfs\/objects\/c{64}\?/);
      expect((await batch("alice/open", "erase", [], alice)).status).toBe(422);
    });

    it("answers a body its schema refuses in the LFS error body: 422 for batches and locks, 400 otherwise", async () => {
      const post = (path: string, body: string) =>
        fetch(`${hub.gitUrl}/alice/open.git/info/lfs/${path}`, {
          method: "POST",
          headers: {
            "content-type": "application/vnd.git-lfs+json",
            authorization: `Basic ${Buffer.from(`x:${alice}`).toString("base64")}`,
          },
          body,
        });
      const refusal = async (response: Response) => {
        expect(response.headers.get("content-type")).toMatch(/^application\/vnd\.git-lfs\+json/);
        const body = await readJson<Record<string, unknown>>(response);
        expect(Object.keys(body).sort()).toEqual(["message", "request_id"]);
        expect(body.request_id).toBe(response.headers.get("x-request-id"));
        return { status: response.status, message: body.message };
      };
      expect(
        await refusal(await post("objects/batch", JSON.stringify({ operation: "erase", objects: [] }))),
      ).toEqual({ status: 422, message: 'The batch "operation" must be "upload" or "download".' });
      expect(
        await refusal(
          await post(
            "objects/batch",
            JSON.stringify({ operation: "upload", transfers: ["ssh"], objects: [] }),
          ),
        ),
      ).toEqual({
        status: 422,
        message: 'This hub offers the "basic" and "multipart" transfers (and "xet" beside them).',
      });
      const tooMany = Array.from({ length: 1001 }, () => ({ oid: "a".repeat(64), size: 1 }));
      expect(
        await refusal(await post("objects/batch", JSON.stringify({ operation: "upload", objects: tooMany }))),
      ).toEqual({ status: 422, message: '"objects" must be a list of at most 1000 objects.' });
      const untyped = await refusal(
        await post("objects/batch", JSON.stringify({ operation: "upload", objects: [{ oid: 7, size: 1 }] })),
      );
      expect(untyped.status).toBe(422);
      expect(untyped.message).toMatch(/"objects\.0\.oid"/);
      expect(await refusal(await post("locks", JSON.stringify({ path: "" })))).toEqual({
        status: 422,
        message: "A lock needs the path of a file.",
      });
      const badLimit = await refusal(await post("locks/verify", JSON.stringify({ limit: "ten" })));
      expect(badLimit.status).toBe(400);
      expect(badLimit.message).toMatch(/"limit"/);
      // Errors raised before the route runs (here, JSON that does not parse) come in the same body.
      expect((await refusal(await post("objects/batch", "{"))).status).toBe(400);
      // Who may not write learns that first, never what the body should look like.
      const anonymous = (path: string, body: string) =>
        fetch(`${hub.gitUrl}/alice/open.git/info/lfs/${path}`, {
          method: "POST",
          headers: { "content-type": "application/vnd.git-lfs+json" },
          body,
        });
      for (const [path, body] of [
        ["locks", JSON.stringify({ path: "" })],
        ["locks/verify", JSON.stringify({ limit: "ten" })],
        ["locks/1/unlock", JSON.stringify({ force: "yes" })],
      ] as const) {
        const response = await anonymous(path, body);
        expect((await refusal(response)).status, path).toBe(401);
        expect(response.headers.get("lfs-authenticate"), path).toMatch(/^Basic/);
      }
      const unsigned = await fetch(`${hub.gitUrl}/lfs/verify/${"a".repeat(64)}`, {
        method: "POST",
        headers: { "content-type": "application/vnd.git-lfs+json" },
        body: JSON.stringify({ oid: 7 }),
      });
      expect([401, 403]).toContain((await refusal(unsigned)).status);
    });

    it("stores nothing when the uploaded bytes do not match the oid or size", async () => {
      const real = randomBytes(1000);
      const oid = sha256(real);
      const answer = await readJson<BatchAnswer>(
        await batch("alice/open", "upload", [{ oid, size: real.length }], alice),
      );
      const upload = answer.objects[0]?.actions?.upload?.href ?? "";
      const verify = answer.objects[0]?.actions?.verify?.href ?? "";
      const tampered = Buffer.from(real);
      tampered[0] = (tampered[0] ?? 0) ^ 0xff;
      const put = await fetch(upload, { method: "PUT", body: tampered });
      expect(put.status).toBe(422);
      const short = await fetch(upload, { method: "PUT", body: real.subarray(0, 999) });
      expect(short.status).toBe(422);
      const verifyStatus = async () =>
        (
          await fetch(verify, {
            method: "POST",
            headers: { "content-type": "application/vnd.git-lfs+json" },
            body: JSON.stringify({ oid, size: 1000 }),
          })
        ).status;
      expect(await storedSize(oid)).toBeNull();
      expect(await verifyStatus()).toBe(404);
      // A PUT with no headers at all, as some clients send it, is enough once the bytes are right.
      expect((await fetch(upload, { method: "PUT", body: real })).status).toBe(200);
      expect(await storedSize(oid)).toBe(1000);
      expect(await verifyStatus()).toBe(200);
    });

    it("serves an object only through repositories it was uploaded to, and only with a whole signature", async () => {
      const secret = randomBytes(4096);
      const oid = sha256(secret);
      const up = await readJson<BatchAnswer>(
        await batch("alice/weights", "upload", [{ oid, size: secret.length }], alice),
      );
      expect(
        (await fetch(up.objects[0]?.actions?.upload?.href ?? "", { method: "PUT", body: secret })).status,
      ).toBe(200);

      await createRepo(bob, "bob/claims", true);
      const claim = await readJson<BatchAnswer>(
        await batch("bob/claims", "download", [{ oid, size: secret.length }], bob),
      );
      expect(claim.objects[0]?.error?.code).toBe(404);
      const bobUpload = await readJson<BatchAnswer>(
        await batch("bob/claims", "upload", [{ oid, size: secret.length }], bob),
      );
      expect(bobUpload.objects[0]?.actions?.upload).toBeDefined();
      // A pointer file is only text: committing one does not make another repository's object readable.
      const pointer = `version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize ${secret.length}\n`;
      const forged = await hub.request("/api/models/bob/claims/commit/main", {
        method: "POST",
        token: bob,
        headers: { "content-type": "application/x-ndjson" },
        body: [
          JSON.stringify({ key: "header", value: { summary: "forge" } }),
          JSON.stringify({
            key: "file",
            value: {
              path: "stolen.bin",
              content: Buffer.from(pointer).toString("base64"),
              encoding: "base64",
            },
          }),
        ].join("\n"),
      });
      expect(forged.status).toBe(200);
      expect((await hub.request("/bob/claims/resolve/main/stolen.bin", { token: bob })).status).toBe(404);

      const down = await readJson<BatchAnswer>(
        await batch("alice/weights", "download", [{ oid, size: secret.length }], alice),
      );
      const href = down.objects[0]?.actions?.download?.href ?? "";
      expect(new URL(href).origin).toBe(
        new URL(presigned ? (objects.env.HUB_S3_ENDPOINT ?? "") : hub.gitUrl).origin,
      );
      const whole = await fetch(href);
      expect(whole.status).toBe(200);
      expect(sha256(Buffer.from(await whole.arrayBuffer()))).toBe(oid);
      const forgeries: Array<[string, string]> = presigned
        ? [
            ["X-Amz-Expires", "604800"],
            ["X-Amz-Date", "20990101T000000Z"],
            ["X-Amz-Signature", "0".repeat(64)],
          ]
        : [
            ["size", "1"],
            ["op", "upload"],
            ["exp", "9999999999"],
            ["repo", "00000000-0000-0000-0000-000000000000"],
            ["sig", "AAAA"],
          ];
      for (const [name, value] of forgeries) {
        const forged = new URL(href);
        forged.searchParams.set(name, value);
        expect((await fetch(forged)).status, name).toBe(403);
      }
      const ranged = await fetch(href, { headers: { range: "bytes=10-19" } });
      expect(ranged.status).toBe(206);
      expect(ranged.headers.get("content-range")).toBe(`bytes 10-19/${secret.length}`);
      expect(Buffer.from(await ranged.arrayBuffer()).equals(secret.subarray(10, 20))).toBe(true);
      const suffix = await fetch(href, { headers: { range: "bytes=-5" } });
      expect(Buffer.from(await suffix.arrayBuffer()).equals(secret.subarray(-5))).toBe(true);
      expect((await fetch(href, { headers: { range: `bytes=${secret.length}-` } })).status).toBe(416);
    });

    it("stops a signed URL when its token is revoked: the hub's at once, the store's when it expires", async () => {
      const token = await hub.createToken("alice", ["--role", "read"]);
      const answer = await readJson<BatchAnswer>(
        await batch(
          "alice/weights",
          "download",
          [
            {
              oid: sha256(readFileSync(path.join(work, "weights", "model.safetensors"))),
              size: 30 * 1024 * 1024,
            },
          ],
          token,
        ),
      );
      const href = answer.objects[0]?.actions?.download?.href ?? "";
      const first = await fetch(href, { headers: { range: "bytes=0-0" } });
      expect(first.status).toBe(206);
      await first.arrayBuffer();
      const me = await readJson<{ auth: { tokenId: string } }>(await hub.request("/api/me", { token }));
      await hub.reauthenticate(alice, alicePassword);
      expect(
        (await hub.request(`/api/me/tokens/${me.auth.tokenId}`, { method: "DELETE", token: alice })).status,
      ).toBe(204);
      // A presigned URL is the grant the batch checked access for; it lives as long as the hub's hrefs do,
      // and the revoked token gets no new one.
      expect((await fetch(href, { headers: { range: "bytes=0-0" } })).status).toBe(presigned ? 206 : 401);
      expect(
        (await batch("alice/weights", "download", [{ oid: "a".repeat(64), size: 1 }], token)).status,
      ).toBe(401);
      const signature = new URL(href).searchParams.get(presigned ? "X-Amz-Signature" : "sig");
      expect(signature).toBeTruthy();
      expect(hub.logs.join("\n")).not.toContain(signature);
    });
  },
);

describe("Git LFS file locks with the real git-lfs client", () => {
  let hub: TestHub;
  let work: string;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    hub = await startHub();
    work = mkdtempSync(path.join(os.tmpdir(), "hub-locks-"));
    await hub.createUser("alice");
    await hub.createUser("bob");
    expect((await hub.cli(["org", "create", "team", "--owner", "alice"])).code).toBe(0);
    expect((await hub.cli(["org", "add-member", "team", "bob", "--role", "write"])).code).toBe(0);
    alice = await hub.createToken("alice");
    bob = await hub.createToken("bob");
    expect(
      (await hub.request("/api/repos", { method: "POST", token: alice, json: { repo_id: "team/assets" } }))
        .status,
    ).toBe(201);
    lfsGitConfig(work, true);
  });
  afterAll(async () => {
    await hub?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const lfsGit = (args: string[], cwd: string) =>
    git(args, cwd, { GIT_CONFIG_GLOBAL: path.join(work, ".gitconfig"), HOME: work });

  it("locks a file for one member, refuses the others' pushes of it, and unlocks", async () => {
    const aliceDir = path.join(work, "alice");
    const bobDir = path.join(work, "bob");
    await lfsGit(["clone", withToken(`${hub.gitUrl}/team/assets`, alice), aliceDir], work);
    writeFileSync(path.join(aliceDir, "scene.bin"), randomBytes(50_000));
    await lfsGit(["add", "scene.bin"], aliceDir);
    await lfsGit(["commit", "-m", "Scene"], aliceDir);
    expect((await lfsGit(["push", "origin", "main"], aliceDir)).code).toBe(0);
    await lfsGit(["clone", withToken(`${hub.gitUrl}/team/assets`, bob), bobDir], work);

    const lock = await lfsGit(["lfs", "lock", "scene.bin"], aliceDir);
    expect(lock.code, lock.stderr).toBe(0);
    const taken = await lfsGit(["lfs", "lock", "scene.bin"], bobDir);
    expect(taken.code).not.toBe(0);
    expect(taken.stderr + taken.stdout).toMatch(/already locked/);
    const listed = await lfsGit(["lfs", "locks"], bobDir);
    expect(listed.stdout).toMatch(/scene\.bin\s+alice/);

    writeFileSync(path.join(bobDir, "scene.bin"), randomBytes(50_000));
    await lfsGit(["add", "scene.bin"], bobDir);
    await lfsGit(["commit", "-m", "Bob edits"], bobDir);
    const refused = await lfsGit(["push", "origin", "main"], bobDir);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/locked/i);

    const notHis = await lfsGit(["lfs", "unlock", "scene.bin"], bobDir);
    expect(notHis.code).not.toBe(0);
    expect((await lfsGit(["lfs", "unlock", "scene.bin"], aliceDir)).code).toBe(0);
    const pushed = await lfsGit(["push", "origin", "main"], bobDir);
    expect(pushed.code, pushed.stderr).toBe(0);
  });

  it("lets an administrator break another member's lock with --force", async () => {
    const bobDir = path.join(work, "bob");
    expect((await lfsGit(["lfs", "lock", "scene.bin"], bobDir)).code).toBe(0);
    const forced = await lfsGit(["lfs", "unlock", "--force", "scene.bin"], path.join(work, "alice"));
    expect(forced.code, forced.stderr).toBe(0);
    expect((await lfsGit(["lfs", "locks"], bobDir)).stdout.trim()).toBe("");
  });
});

describe.each(STORE_KINDS)("the Hugging Face multipart upload extension, objects on %s", (storeKind) => {
  let hub: TestHub;
  let objects: Awaited<ReturnType<typeof storeFor>>;
  let token: string;
  const size = 64 * 1024 * 1024 + 4096;
  const content = randomBytes(size);
  const oid = sha256(content);

  beforeAll(async () => {
    objects = await storeFor(storeKind);
    hub = await startHub({ env: objects.env });
    await hub.createUser("alice");
    token = await hub.createToken("alice");
    for (const repoId of ["alice/parts", "alice/client"]) {
      expect(
        (await hub.request("/api/repos", { method: "POST", token, json: { repo_id: repoId } })).status,
      ).toBe(201);
    }
  });
  afterAll(async () => {
    await hub?.stop();
    await objects?.stop();
  });

  /** The names of the parts (and their ETags) waiting in the bucket, under any upload. */
  const stagedKeys = async () => {
    const config = loadConfig({ ...objects.env, HUB_DATA_DIR: hub.dataDir }).objectStore;
    if (config.kind !== "s3") return [];
    const client = createS3Client(config);
    try {
      const listed = await client.send(
        new ListObjectsV2Command({ Bucket: config.bucket, Prefix: `${config.prefix}lfs/multipart/` }),
      );
      return (listed.Contents ?? []).map((item) => item.Key?.split("/").pop() ?? "");
    } finally {
      client.destroy();
    }
  };

  const batchUpload = async (transfers: string[]) => {
    const response = await fetch(`${hub.gitUrl}/alice/parts.git/info/lfs/objects/batch`, {
      method: "POST",
      headers: { "content-type": "application/vnd.git-lfs+json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ operation: "upload", transfers, objects: [{ oid, size }] }),
    });
    return readJson<
      BatchAnswer & {
        objects: Array<{ actions?: { upload?: { href: string; header?: Record<string, string> } } }>;
      }
    >(response);
  };

  it("offers parts only to clients that ask for them", async () => {
    const basic = await batchUpload(["basic"]);
    expect(basic.transfer).toBe("basic");
    expect(basic.objects[0]?.actions?.upload?.header).toBeUndefined();
    const parts = await batchUpload(["basic", "multipart"]);
    expect(parts.transfer).toBe("multipart");
    expect(Object.keys(parts.objects[0]?.actions?.upload?.header ?? {}).sort()).toEqual([
      "00001",
      "00002",
      "chunk_size",
    ]);
  });

  it("assembles uploaded parts, checking their ETags, and stores nothing until they are right", async () => {
    const answer = await batchUpload(["basic", "multipart"]);
    const upload = answer.objects[0]?.actions?.upload;
    const header = upload?.header ?? {};
    const chunk = Number(header.chunk_size);
    const etags: string[] = [];
    for (const part of [1, 2]) {
      const key = String(part).padStart(5, "0");
      const put = await fetch(header[key] ?? "", {
        method: "PUT",
        body: content.subarray((part - 1) * chunk, part * chunk),
      });
      expect(put.status).toBe(200);
      etags.push(put.headers.get("etag") ?? "");
    }
    const wrongPart = await fetch(header["00002"] ?? "", { method: "PUT", body: content.subarray(0, 10) });
    expect(wrongPart.status).toBe(422);
    // The parts wait in the data dir with the local store, in the bucket with S3 (any process can complete).
    expect(existsSync(path.join(hub.dataDir, "lfs", "multipart"))).toBe(storeKind === "local");
    if (storeKind === "s3") expect((await stagedKeys()).sort()).toEqual(["1", "1.etag", "2", "2.etag"]);
    const complete = (parts: unknown) =>
      fetch(upload?.href ?? "", {
        method: "POST",
        headers: { "content-type": "application/vnd.git-lfs+json" },
        body: JSON.stringify({ oid, parts }),
      });
    expect(
      (
        await complete([
          { partNumber: 1, etag: etags[0] },
          { partNumber: 2, etag: '"0000"' },
        ])
      ).status,
    ).toBe(422);
    expect((await complete([{ partNumber: 1, etag: etags[0] }])).status).toBe(422);
    // The failed completions above left the parts in place; the right one assembles them.
    const done = await complete([
      { partNumber: 1, etag: etags[0] },
      { partNumber: 2, etag: etags[1] },
    ]);
    expect(done.status).toBe(200);
    if (storeKind === "s3") expect(await stagedKeys()).toEqual([]);
    const download = await fetch(`${hub.gitUrl}/alice/parts.git/info/lfs/objects/batch`, {
      method: "POST",
      headers: { "content-type": "application/vnd.git-lfs+json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ operation: "download", objects: [{ oid, size }] }),
    });
    const href = (await readJson<BatchAnswer>(download)).objects[0]?.actions?.download?.href ?? "";
    expect(sha256(Buffer.from(await (await fetch(href)).arrayBuffer()))).toBe(oid);
  });

  it("uploads through parts with the official client", async () => {
    const { uploadFiles, downloadFile } = await import("@huggingface/hub");
    const repo = { type: "model" as const, name: "alice/client" };
    const from = hub.logs.length;
    await uploadFiles({
      repo,
      accessToken: token,
      hubUrl: hub.url,
      files: [{ path: "big.safetensors", content: new Blob([content]) }],
      // Through Xet by default since the batch offers it (xet-clients.test.ts); here, the LFS transfer.
      useXet: false,
    });
    const blob = await downloadFile({ repo, path: "big.safetensors", accessToken: token, hubUrl: hub.url });
    expect(sha256(new Uint8Array((await blob?.arrayBuffer()) ?? new ArrayBuffer(0)))).toBe(oid);
    expect(hub.logs.slice(from).some((line) => line.includes('"path":"/lfs/parts/'))).toBe(true);
  });
});
