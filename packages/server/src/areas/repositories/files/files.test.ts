import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ApiError, RepoInfo } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { git, withToken } from "../../../test-support/git-client.js";
import { readJson, startHub, type TestHub } from "../../../test-support/hub-process.js";
import { STORE_SUITES, storeFor } from "../../../test-support/minio.js";

interface TreeItem {
  type: string;
  path: string;
  oid: string;
  size: number;
}

const ndjson = (...lines: unknown[]) => lines.map((line) => JSON.stringify(line)).join("\n");
const header = (summary: string, extra: Record<string, unknown> = {}) => ({
  key: "header",
  value: { summary, ...extra },
});
const file = (filePath: string, text: string) => ({
  key: "file",
  value: { path: filePath, content: Buffer.from(text).toString("base64"), encoding: "base64" },
});

describe.each(STORE_SUITES)("the file API over HTTP on $dialect, objects on $store", (suite) => {
  let hub: TestHub;
  let objects: Awaited<ReturnType<typeof storeFor>>;
  let token: string;
  let work: string;

  const commit = (body: string, rev = "main", credential = token) =>
    hub.request(`/api/models/alice/files/commit/${rev}`, {
      method: "POST",
      token: credential,
      headers: { "content-type": "application/x-ndjson" },
      body,
    });
  const head = async () =>
    (await readJson<RepoInfo>(await hub.request("/api/models/alice/files", { token }))).sha ?? "";

  beforeAll(async () => {
    objects = await storeFor(suite.store);
    hub = await startHub({ dialect: suite.dialect, env: objects.env });
    work = mkdtempSync(path.join(os.tmpdir(), "hub-files-"));
    await hub.createUser("alice");
    token = await hub.createToken("alice");
    expect(
      (await hub.request("/api/repos", { method: "POST", token, json: { repo_id: "alice/files" } })).status,
    ).toBe(201);
  });
  afterAll(async () => {
    await hub?.stop();
    await objects?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it("commits files and folders, and git sees the commit with the author's identity", async () => {
    const response = await commit(
      ndjson(
        header("Add docs", { description: "Two files." }),
        file("docs/a.md", "A"),
        file("docs/deep/b.md", "B"),
        file("top.txt", "T"),
      ),
    );
    expect(response.status).toBe(200);
    const body = await readJson<{ commitOid: string; commitUrl: string }>(response);
    expect(body.commitOid).toMatch(/^[0-9a-f]{40}$/);
    expect(body.commitUrl).toBe(`${hub.url}/alice/files/commit/${body.commitOid}`);
    expect(await head()).toBe(body.commitOid);

    const clone = await git(["clone", `${hub.gitUrl}/alice/files`, "clone"], work);
    expect(clone.code, clone.stderr).toBe(0);
    expect(readFileSync(path.join(work, "clone", "docs", "deep", "b.md"), "utf8")).toBe("B");
    const log = await git(["log", "-1", "--format=%an <%ae>%n%B"], path.join(work, "clone"));
    expect(log.stdout).toContain("alice <alice@example.com>");
    expect(log.stdout).toContain("Add docs\n\nTwo files.");
  });

  it("lists a tree level by level or recursively, and describes chosen paths", async () => {
    const top = await readJson<TreeItem[]>(await hub.request("/api/models/alice/files/tree/main", { token }));
    expect(top.map((e) => `${e.type}:${e.path}`).sort()).toEqual([
      "directory:docs",
      "file:.gitattributes",
      "file:top.txt",
    ]);
    expect(top.find((e) => e.path === "docs")?.oid).toMatch(/^[0-9a-f]{40}$/);
    const docs = await readJson<TreeItem[]>(
      await hub.request("/api/models/alice/files/tree/main/docs?recursive=true", { token }),
    );
    expect(docs.map((e) => e.path).sort()).toEqual(["docs/a.md", "docs/deep", "docs/deep/b.md"]);
    const missing = await hub.request("/api/models/alice/files/tree/main/nowhere", { token });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("x-error-code")).toBe("EntryNotFound");
    const badRevision = await hub.request("/api/models/alice/files/tree/no-branch", { token });
    expect(badRevision.headers.get("x-error-code")).toBe("RevisionNotFound");

    const json = await hub.request("/api/models/alice/files/paths-info/main", {
      method: "POST",
      token,
      json: { paths: ["top.txt", "docs", "ghost.txt"] },
    });
    expect((await readJson<TreeItem[]>(json)).map((e) => `${e.type}:${e.path}:${e.size}`).sort()).toEqual([
      "directory:docs:0",
      "file:top.txt:1",
    ]);
    const form = await hub.request("/api/models/alice/files/paths-info/main", {
      method: "POST",
      token,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "paths=top.txt&paths=docs%2Fa.md&expand=false",
    });
    expect((await readJson<TreeItem[]>(form)).map((e) => e.path).sort()).toEqual(["docs/a.md", "top.txt"]);
    const outside = await hub.request("/api/models/alice/files/paths-info/main", {
      method: "POST",
      token,
      json: { paths: ["..", "/etc", "top.txt"] },
    });
    expect(outside.status).toBe(200);
    expect((await readJson<TreeItem[]>(outside)).map((e) => e.path)).toEqual(["top.txt"]);
  });

  it("resolves and serves raw files with the headers the Hugging Face clients read", async () => {
    const sha = await head();
    const response = await hub.request("/alice/files/resolve/main/docs/a.md", { token });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("A");
    expect(response.headers.get("x-repo-commit")).toBe(sha);
    expect(response.headers.get("etag")).toMatch(/^"[0-9a-f]{40}"$/);
    const headOnly = await hub.request("/alice/files/resolve/main/top.txt", { method: "HEAD", token });
    expect(headOnly.headers.get("content-length")).toBe("1");
    const ranged = await hub.request(`/alice/files/raw/${sha}/docs/deep/b.md`, {
      token,
      headers: { range: "bytes=0-0" },
    });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get("content-range")).toBe("bytes 0-0/1");
    const missing = await hub.request("/alice/files/resolve/main/none.txt", { token });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("x-error-code")).toBe("EntryNotFound");
    expect(missing.headers.get("x-repo-commit")).toBe(sha);
    expect((await hub.request("/alice/files/resolve/main/top.txt")).status).toBe(200);
  });

  it("resolves an LFS file from the store: through the hub, or redirected to a presigned URL with the headers clients read", async () => {
    const content = randomBytes(100_000);
    const oid = createHash("sha256").update(content).digest("hex");
    const batch = await fetch(`${hub.gitUrl}/alice/files.git/info/lfs/objects/batch`, {
      method: "POST",
      headers: { "content-type": "application/vnd.git-lfs+json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ operation: "upload", objects: [{ oid, size: content.length }] }),
    });
    const answer = await readJson<{ objects: Array<{ actions?: { upload?: { href: string } } }> }>(batch);
    const put = await fetch(answer.objects[0]?.actions?.upload?.href ?? "", { method: "PUT", body: content });
    expect(put.status).toBe(200);
    const lfsFile = {
      key: "lfsFile",
      value: { path: "lfs/model ü.bin", algo: "sha256", oid, size: content.length },
    };
    expect((await commit(ndjson(header("Weights"), lfsFile))).status).toBe(200);
    const sha = await head();

    const url = `/alice/files/resolve/main/${encodeURIComponent("lfs/model ü.bin").replace("%2F", "/")}`;
    for (const method of ["GET", "HEAD"]) {
      const response = await hub.request(url, { method, token, redirect: "manual" });
      await response.arrayBuffer();
      expect(response.headers.get("x-repo-commit")).toBe(sha);
      expect(response.headers.get("x-linked-etag")).toBe(`"${oid}"`);
      expect(response.headers.get("x-linked-size")).toBe(String(content.length));
      expect(response.headers.get("etag")).toBe(`"${oid}"`);
      if (suite.store === "s3") {
        expect(response.status).toBe(302);
        const location = new URL(response.headers.get("location") ?? "");
        expect(location.origin).toBe(new URL(objects.env.HUB_S3_ENDPOINT ?? "").origin);
        expect(location.searchParams.get("X-Amz-Expires")).toBe("3600");
        expect(location.searchParams.get("response-content-disposition")).toContain("model%20%C3%BC.bin");
      } else {
        expect(response.status).toBe(200);
        expect(response.headers.get("content-length")).toBe(String(content.length));
      }
    }
    const plain = await hub.request(`${url}?noContentDisposition=1`, { token, redirect: "manual" });
    await plain.arrayBuffer();
    expect(plain.headers.get("location") ?? "").not.toContain("response-content-disposition");
    // Followed as clients follow it: the token stays with the hub, the bytes and ranges come from wherever they are.
    const whole = await hub.request(url, { token });
    expect(whole.status).toBe(200);
    expect(Buffer.from(await whole.arrayBuffer()).equals(content)).toBe(true);
    const first = await hub.request(url, { token, headers: { range: "bytes=0-0" } });
    expect(first.status).toBe(206);
    expect(first.headers.get("content-range")).toBe(`bytes 0-0/${content.length}`);
    expect(Buffer.from(await first.arrayBuffer())).toEqual(content.subarray(0, 1));
    // No redirect, and no URL minted, for one who may not read the repository.
    const visibility = (isPrivate: boolean) =>
      hub.request("/api/models/alice/files/settings", { method: "PUT", token, json: { private: isPrivate } });
    expect((await visibility(true)).status).toBe(200);
    const refused = await hub.request(url, { redirect: "manual" });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("location")).toBeNull();
    await refused.arrayBuffer();
    expect((await visibility(false)).status).toBe(200);
  });

  it("refuses a commit whose parentCommit is no longer the head, with 412", async () => {
    const before = await head();
    expect(
      (await commit(ndjson(header("Next", { parentCommit: before.slice(0, 7) }), file("n.txt", "1")))).status,
    ).toBe(200);
    const stale = await commit(ndjson(header("Stale", { parentCommit: before }), file("n.txt", "2")));
    expect(stale.status).toBe(412);
    expect((await readJson<ApiError>(stale)).code).toBe("parent_commit_mismatch");
  });

  it("serializes concurrent commits to one branch: each lands on the head its turn finds, none is lost", async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        commit(ndjson(header(`Writer ${i}`), file(`w/${i}.txt`, String(i)))),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const tree = await readJson<TreeItem[]>(
      await hub.request("/api/models/alice/files/tree/main/w", { token }),
    );
    expect(tree.map((entry) => entry.path).sort()).toEqual([0, 1, 2, 3, 4, 5].map((i) => `w/${i}.txt`));
  });

  it("lets one of concurrent commits pinned to one parentCommit land, and tells the others with 412", async () => {
    const parent = await head();
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        commit(ndjson(header(`Pinned ${i}`, { parentCommit: parent }), file(`p/${i}.txt`, String(i)))),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 412, 412, 412]);
    const tree = await readJson<TreeItem[]>(
      await hub.request("/api/models/alice/files/tree/main/p", { token }),
    );
    expect(tree.length).toBe(1);
  });

  it("deletes files and folders, and says when there is nothing to delete", async () => {
    expect(
      (
        await commit(
          ndjson(
            header("Remove"),
            { key: "deletedFolder", value: { path: "docs" } },
            { key: "deletedFile", value: { path: "top.txt" } },
          ),
        )
      ).status,
    ).toBe(200);
    const top = await readJson<TreeItem[]>(await hub.request("/api/models/alice/files/tree/main", { token }));
    expect(top.map((e) => e.path)).not.toContain("docs");
    expect(top.map((e) => e.path)).not.toContain("top.txt");
    const again = await commit(
      ndjson(header("Remove again"), { key: "deletedFile", value: { path: "top.txt" } }),
    );
    expect(again.status).toBe(404);
    expect(again.headers.get("x-error-code")).toBe("EntryNotFound");
    expect((await readJson<ApiError>(again)).error).toMatch(/doesn't exist/);
  });

  it("rejects bad commits without changing the branch", async () => {
    const before = await head();
    const cases: Array<[string, string, number]> = [
      ["no header", ndjson(file("x.txt", "x")), 400],
      ["not JSON", "{header", 400],
      ["a path climbing out", ndjson(header("x"), file("../x.txt", "x")), 400],
      ["an absolute path", ndjson(header("x"), file("/etc/x", "x")), 400],
      ["a path into .git", ndjson(header("x"), file(".git/config", "x")), 400],
      ["an unknown key", ndjson(header("x"), { key: "rename", value: { path: "a" } }), 400],
      ["a line that is not an object", `${JSON.stringify(header("x"))}\nnull`, 400],
      ["a NUL in the summary", ndjson(header("a\u0000b"), file("x.txt", "x")), 400],
      [
        "an LFS file never uploaded",
        ndjson(header("x"), {
          key: "lfsFile",
          value: { path: "w.bin", algo: "sha256", oid: "e".repeat(64), size: 3 },
        }),
        422,
      ],
      ["a branch that does not exist", ndjson(header("x"), file("x.txt", "x")), 404],
    ];
    for (const [name, body, status] of cases) {
      const response = await commit(body, name === "a branch that does not exist" ? "nope" : "main");
      expect(response.status, name).toBe(status);
    }
    const wrongType = await hub.request("/api/models/alice/files/commit/main", {
      method: "POST",
      token,
      json: { summary: "x" },
    });
    expect(wrongType.status).toBe(415);
    const reader = await hub.createToken("alice", ["--role", "read"]);
    expect((await commit(ndjson(header("x"), file("x.txt", "x")), "main", reader)).status).toBe(403);
    expect(await head()).toBe(before);
  });

  it("validates a card's YAML header, always answering JSON", async () => {
    const validate = (content: string) =>
      hub.request("/api/validate-yaml", { method: "POST", token, json: { content, repoType: "model" } });
    const good = await validate("---\nlicense: mit\ntags: [a, b]\n---\n# Model\n");
    expect(good.status).toBe(200);
    expect(await good.json()).toEqual({ warnings: [] });
    expect((await validate("# No header at all\n")).status).toBe(200);
    const bad = await validate("---\nlicense: [mit\n---\n");
    expect(bad.status).toBe(400);
    expect((await readJson<{ errors: Array<{ message: string }> }>(bad)).errors[0]?.message).toMatch(
      /Invalid YAML/,
    );
    const list = await validate("---\n- a\n- b\n---\n");
    expect(list.status).toBe(400);
    expect((await readJson<ApiError>(list)).code).toBe("invalid_card_metadata");
    // A request that is not what the operation takes gets the shared error body, never a 500.
    for (const body of [{}, { content: 5 }, [], { repoType: "model" }]) {
      const invalid = await hub.request("/api/validate-yaml", { method: "POST", token, json: body });
      expect(invalid.status, JSON.stringify(body)).toBe(400);
      expect((await readJson<ApiError>(invalid)).code).toBe("validation_failed");
    }
  });

  it("gives Xet clients a token for the hub's own CAS (areas/repositories/xet tests the rest)", async () => {
    const response = await hub.request("/api/models/alice/files/xet-write-token/main", { token });
    expect(response.status).toBe(200);
    expect(await readJson<{ casUrl: string }>(response)).toMatchObject({ casUrl: `${hub.url}/xet-cas` });
  });

  it("decides LFS by .gitattributes and size at preupload", async () => {
    const response = await hub.request("/api/models/alice/files/preupload/main", {
      method: "POST",
      token,
      json: {
        files: [
          { path: "model.safetensors", size: 10, sample: "" },
          { path: "notes.txt", size: 100 },
          { path: "huge.txt", size: 11 * 1024 * 1024 },
          { path: "empty.bin", size: 0 },
        ],
      },
    });
    expect(response.status).toBe(200);
    const { files } = await readJson<{
      files: Array<{ path: string; uploadMode: string; shouldIgnore: boolean }>;
    }>(response);
    expect(files.map((f) => `${f.path}:${f.uploadMode}`)).toEqual([
      "model.safetensors:lfs",
      "notes.txt:regular",
      "huge.txt:lfs",
      "empty.bin:regular",
    ]);
    expect(files.every((f) => f.shouldIgnore === false)).toBe(true);
  });

  it("lands git pushes and API commits on the same history", async () => {
    const dir = path.join(work, "clone");
    await git(["pull", "--ff-only"], dir);
    writeFileSync(path.join(dir, "from-git.txt"), "git");
    await git(["add", "from-git.txt"], dir);
    await git(["commit", "-m", "From git"], dir);
    const push = await git(["push", withToken(`${hub.gitUrl}/alice/files`, token), "HEAD:main"], dir);
    expect(push.code, push.stderr).toBe(0);
    expect(await hub.request("/alice/files/resolve/main/from-git.txt", { token }).then((r) => r.text())).toBe(
      "git",
    );
    const stale = await commit(ndjson(header("After git"), file("from-api.txt", "api")));
    expect(stale.status).toBe(200);
    const pull = await git(["pull", "--ff-only", withToken(`${hub.gitUrl}/alice/files`, token), "main"], dir);
    expect(pull.code, pull.stderr).toBe(0);
    expect(readFileSync(path.join(dir, "from-api.txt"), "utf8")).toBe("api");
  });
});
