import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runGit } from "./git-command.js";
import {
  batchCommandSupported,
  createObjectReader,
  createSpawningObjectReader,
  type ObjectReader,
} from "./object-reader.js";
import { createRepoFiles } from "./repo-files.js";
import { createRepoStorage } from "./repo-storage.js";

describe.each([
  ["a long-lived process per repository", "batch"],
  ["a process per question", "spawning"],
] as const)("reading objects through %s", (_name, kind) => {
  let dataDir: string;
  let reader: ObjectReader;
  const id = randomUUID();
  const storage = () => createRepoStorage(dataDir);
  const binary = randomBytes(70_000);
  let head = "";

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "hub-reader-"));
    await storage().create(id, "main", { ".gitattributes": "*.bin filter=lfs\n" });
    const files = createRepoFiles(storage(), path.join(dataDir, "tmp"));
    head = (await storage().resolveRef(id, "refs/heads/main")) ?? "";
    head = await files.commit(id, {
      branch: "main",
      head,
      message: "Add files\n",
      author: { name: "A", email: "a@example.com" },
      operations: [
        { kind: "write", path: "data/blob.dat", content: binary },
        { kind: "write", path: "with space.txt", content: Buffer.from("line one\nline two\n") },
        { kind: "write", path: "empty.txt", content: Buffer.alloc(0) },
      ],
    });
    if (kind === "batch") expect(await batchCommandSupported(dataDir)).toBe(true);
    reader =
      kind === "batch"
        ? createObjectReader(storage(), { maxProcesses: 2 })
        : createSpawningObjectReader(storage());
  });
  afterAll(() => {
    reader?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("resolves revisions and paths, and says nothing for what is not there", async () => {
    expect(await reader.info(id, "main^{commit}")).toEqual({
      oid: head,
      type: "commit",
      size: expect.any(Number),
    });
    expect((await reader.info(id, `${head}:data`))?.type).toBe("tree");
    expect(await reader.info(id, "main:nothing.txt")).toBeNull();
    expect(await reader.info(id, "no-such-branch^{commit}")).toBeNull();
    expect(await reader.info(id, "")).toBeNull();
  });

  it("reads contents exactly, whatever bytes they hold", async () => {
    expect((await reader.contents(id, "main:data/blob.dat"))?.content.equals(binary)).toBe(true);
    expect((await reader.contents(id, "main:with space.txt"))?.content.toString()).toBe(
      "line one\nline two\n",
    );
    const empty = await reader.contents(id, "main:empty.txt");
    expect(empty?.info.size).toBe(0);
    expect(empty?.content.length).toBe(0);
  });

  it("answers questions asked at once, each with its own answer", async () => {
    const names = Array.from({ length: 40 }, (_, i) =>
      i % 3 === 0 ? "main:data/blob.dat" : i % 3 === 1 ? "main:missing" : "main:with space.txt",
    );
    const answers = await Promise.all(names.map((name) => reader.contents(id, name)));
    answers.forEach((answer, i) => {
      if (i % 3 === 0) expect(answer?.content.equals(binary)).toBe(true);
      else if (i % 3 === 1) expect(answer).toBeNull();
      else expect(answer?.content.toString()).toBe("line one\nline two\n");
    });
  });

  it("sees a commit made after it started", async () => {
    const files = createRepoFiles(storage(), path.join(dataDir, "tmp"));
    const next = await files.commit(id, {
      branch: "main",
      head,
      message: "More\n",
      author: { name: "A", email: "a@example.com" },
      operations: [{ kind: "write", path: "later.txt", content: Buffer.from("later") }],
    });
    await runGit(["branch", "feature", next], { cwd: storage().pathOf(id) });
    expect((await reader.info(id, "main^{commit}"))?.oid).toBe(next);
    expect((await reader.info(id, "feature^{commit}"))?.oid).toBe(next);
    expect((await reader.contents(id, "main:later.txt"))?.content.toString()).toBe("later");
  });

  it("keeps answering across more repositories than it keeps processes for", async () => {
    const others = [randomUUID(), randomUUID(), randomUUID()];
    for (const other of others) await storage().create(other, "main", { "README.md": `# ${other}\n` });
    for (let round = 0; round < 2; round++) {
      for (const other of [...others, id]) {
        const name = other === id ? "main:later.txt" : "main:README.md";
        expect((await reader.contents(other, name))?.content.toString(), other).toBe(
          other === id ? "later" : `# ${other}\n`,
        );
      }
    }
  });
});
