import { createHash, randomBytes } from "node:crypto";
import { uploadFiles } from "@huggingface/hub";
import type { ApiError, CommitDiff, CommitResponse, DiffFile } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { readJson, startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";

const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex");
type Line = { key: "file"; path: string; content: Buffer | string } | { key: "deletedFile"; path: string };

describe.each(DIALECTS)("a commit's diff on %s", (dialect) => {
  let hub: InProcessHub;
  let alice: string;
  let bob: string;
  const weights = [randomBytes(3000), randomBytes(5000)];

  const commit = async (repo: string, summary: string, lines: Line[]) => {
    const body = [
      { key: "header", value: { summary } },
      ...lines.map((line) =>
        line.key === "file"
          ? {
              key: "file",
              value: {
                path: line.path,
                content: Buffer.from(line.content).toString("base64"),
                encoding: "base64",
              },
            }
          : { key: "deletedFile", value: { path: line.path } },
      ),
    ];
    const response = await hub.request(`/api/models/${repo}/commit/main`, {
      method: "POST",
      token: alice,
      headers: { "content-type": "application/x-ndjson" },
      body: body.map((line) => JSON.stringify(line)).join("\n"),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await readJson<CommitResponse>(response)).commitOid;
  };
  const diffOf = async (repo: string, rev: string, token: string | undefined = alice) => {
    const response = await hub.request(`/api/models/${repo}/commit/${encodeURIComponent(rev)}/diff`, {
      ...(token ? { token } : {}),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    return readJson<CommitDiff>(response);
  };
  const fileOf = (diff: CommitDiff, path: string): DiffFile => {
    const file = diff.files.find((f) => f.path === path);
    if (!file) throw new Error(`${path} is not in the diff: ${diff.files.map((f) => f.path).join(", ")}`);
    return file;
  };
  const create = async (name: string, extra: Record<string, unknown> = {}) => {
    const response = await hub.request("/api/repos", {
      method: "POST",
      token: alice,
      json: { repo_id: `alice/${name}`, ...extra },
    });
    expect(response.status, await response.clone().text()).toBe(201);
  };
  const uploadLfs = (content: Buffer) =>
    uploadFiles({
      repo: { type: "model", name: "alice/diffs" },
      accessToken: alice,
      hubUrl: hub.url,
      fetch: (input: string | URL | Request, init?: RequestInit) =>
        hub.fetch(input instanceof Request ? input.url : input, init),
      files: [{ path: "weights.bin", content: new Blob([content]) }],
    });

  beforeAll(async () => {
    hub = await startInProcessHub({ dialect });
    await hub.createUser("alice");
    await hub.createUser("bob");
    alice = await hub.createToken("alice");
    bob = await hub.createToken("bob");
    await create("diffs");
    await create("hidden", { private: true });
  });
  afterAll(() => hub?.stop());

  it("shows the first commit as added files, and a later one as added, modified, removed and renamed lines", async () => {
    const first = await diffOf("alice/diffs", "main");
    expect(first.parent).toBeNull();
    expect(first.files.map((f) => f.path)).toEqual([".gitattributes"]);
    expect(fileOf(first, ".gitattributes")).toMatchObject({ status: "added", kind: "text" });

    await commit("alice/diffs", "Add files", [
      { key: "file", path: "notes.txt", content: "one\ntwo\nthree\nfour\nfive\n" },
      { key: "file", path: "gone.txt", content: "soon gone\n" },
      { key: "file", path: "old-name.md", content: "a long enough line that stays the same\n".repeat(5) },
    ]);
    const sha = await commit("alice/diffs", "Change files", [
      { key: "file", path: "notes.txt", content: "one\n2\nthree\nfour\nfive\nsix" },
      { key: "deletedFile", path: "gone.txt" },
      { key: "deletedFile", path: "old-name.md" },
      { key: "file", path: "new-name.md", content: "a long enough line that stays the same\n".repeat(5) },
      { key: "file", path: "fresh.py", content: "print('hi')\n" },
    ]);
    const diff = await diffOf("alice/diffs", sha);
    expect(diff.commit).toBe(sha);
    expect(diff.parent).toMatch(/^[0-9a-f]{40}$/);
    expect(diff.totalFiles).toBe(4);
    expect(diff.truncated).toBe(false);

    const notes = fileOf(diff, "notes.txt");
    expect(notes).toMatchObject({ status: "modified", kind: "text", additions: 2, deletions: 1 });
    const lines = notes.hunks?.flatMap((h) => h.lines) ?? [];
    expect(lines).toContainEqual({ type: "removed", oldNumber: 2, text: "two" });
    expect(lines).toContainEqual({ type: "added", newNumber: 2, text: "2" });
    expect(lines).toContainEqual({ type: "context", oldNumber: 3, newNumber: 3, text: "three" });
    expect(lines).toContainEqual({ type: "added", newNumber: 6, text: "six", noNewlineAtEnd: true });

    expect(fileOf(diff, "gone.txt")).toMatchObject({
      status: "removed",
      deletions: 1,
      additions: 0,
      hunks: [{ oldStart: 1, oldLines: 1, lines: [{ type: "removed", oldNumber: 1, text: "soon gone" }] }],
    });
    expect(fileOf(diff, "fresh.py")).toMatchObject({
      status: "added",
      additions: 1,
      hunks: [{ newStart: 1, newLines: 1, lines: [{ type: "added", newNumber: 1, text: "print('hi')" }] }],
    });
    expect(fileOf(diff, "new-name.md")).toMatchObject({
      status: "renamed",
      oldPath: "old-name.md",
      additions: 0,
      deletions: 0,
      hunks: [],
    });
  });

  it("summarises binary files by size and LFS files by the objects they name", async () => {
    const binary = Buffer.from([0, 1, 2, 3, 0, 255, 10, 65]);
    const sha = await commit("alice/diffs", "Add a binary file", [
      { key: "file", path: "blob.dat", content: binary },
    ]);
    expect(fileOf(await diffOf("alice/diffs", sha), "blob.dat")).toEqual({
      path: "blob.dat",
      status: "added",
      kind: "binary",
      newSize: binary.length,
    });

    const added = (await uploadLfs(weights[0] as Buffer))?.commit.oid ?? "";
    const addedFile = fileOf(await diffOf("alice/diffs", added), "weights.bin");
    expect(addedFile).toMatchObject({
      status: "added",
      kind: "lfs",
      lfs: { old: null, new: { oid: sha256(weights[0] as Buffer), size: 3000 } },
    });
    expect(addedFile.hunks).toBeUndefined();

    const changed = (await uploadLfs(weights[1] as Buffer))?.commit.oid ?? "";
    expect(fileOf(await diffOf("alice/diffs", changed), "weights.bin")).toMatchObject({
      status: "modified",
      kind: "lfs",
      lfs: {
        old: { oid: sha256(weights[0] as Buffer), size: 3000 },
        new: { oid: sha256(weights[1] as Buffer), size: 5000 },
      },
    });
  });

  it("cuts a large diff at its stated limits", async () => {
    const big = "x".repeat(99) + "\n";
    const files: Line[] = [
      { key: "file", path: "huge.txt", content: big.repeat(6000) }, // 600 kB: over the per-file limit
      ...Array.from({ length: 5 }, (_, i): Line => ({
        key: "file",
        path: `part-${i}.txt`,
        content: big.repeat(5000), // 500 kB each: the fifth goes over the 2 MiB budget
      })),
      ...Array.from({ length: 300 }, (_, i): Line => ({
        key: "file",
        path: `z/${String(i).padStart(3, "0")}.txt`,
        content: `${i}\n`,
      })),
    ];
    const sha = await commit("alice/diffs", "Many files", files);
    const diff = await diffOf("alice/diffs", sha);
    expect(diff.limits).toEqual({ maxFiles: 300, maxFileBytes: 512 * 1024, maxTotalBytes: 2 * 1024 * 1024 });
    expect(diff.totalFiles).toBe(306);
    expect(diff.files).toHaveLength(300);
    expect(diff.truncated).toBe(true);
    expect(fileOf(diff, "huge.txt")).toMatchObject({
      kind: "text",
      omitted: "file_too_large",
      additions: 6000,
      deletions: 0,
    });
    expect(fileOf(diff, "huge.txt").hunks).toBeUndefined();
    const parts = diff.files.filter((f) => f.path.startsWith("part-"));
    expect(parts.filter((f) => f.hunks !== undefined)).toHaveLength(4);
    expect(fileOf(diff, "part-4.txt")).toMatchObject({ omitted: "diff_too_large", additions: 5000 });
  });

  it("answers a private repository's diff only to those who may read it, and an unknown revision with 404", async () => {
    const sha = await commit("alice/hidden", "Secret", [
      { key: "file", path: "plan.txt", content: "secret\n" },
    ]);
    expect(fileOf(await diffOf("alice/hidden", sha), "plan.txt").hunks?.[0]?.lines[0]?.text).toBe("secret");
    const anonymous = await hub.request(`/api/models/alice/hidden/commit/${sha}/diff`);
    expect(anonymous.status).toBe(401);
    const outsider = await hub.request(`/api/models/alice/hidden/commit/${sha}/diff`, { token: bob });
    expect(outsider.status).toBe(404);
    expect(await outsider.text()).not.toContain("secret");

    for (const rev of ["no-such-branch", "main~1", "HEAD^", "--output=/tmp/x", "a".repeat(40)]) {
      const response = await hub.request(`/api/models/alice/diffs/commit/${encodeURIComponent(rev)}/diff`, {
        token: alice,
      });
      expect(response.status, rev).toBe(404);
      expect((await readJson<ApiError>(response)).code).toBe("revision_not_found");
    }
  });
});
