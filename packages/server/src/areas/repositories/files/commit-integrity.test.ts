import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ApiError, RepoInfo } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { git, withToken } from "../../../test-support/git-client.js";
import { readJson, startHub, type TestHub } from "../../../test-support/hub-process.js";

const ndjson = (...lines: unknown[]) => lines.map((line) => JSON.stringify(line)).join("\n");
const header = { key: "header", value: { summary: "A change" } };
const file = (filePath: string, text: string) => ({
  key: "file",
  value: { path: filePath, content: Buffer.from(text).toString("base64"), encoding: "base64" },
});

/**
 * The commit endpoint refuses what git's fsck refuses (`receive.fsckObjects`
 * on a push), before anything is written, and never drops a path it accepted.
 */
describe.each(DIALECTS)("commits git would refuse, on %s", (dialect) => {
  let hub: TestHub;
  let token: string;
  let work: string;
  let remote: string;

  const commit = (body: string) =>
    hub.request("/api/models/alice/integrity/commit/main", {
      method: "POST",
      token,
      headers: { "content-type": "application/x-ndjson" },
      body,
    });
  const head = async () =>
    (await readJson<RepoInfo>(await hub.request("/api/models/alice/integrity", { token }))).sha ?? "";

  /** A fresh clone passes git's strictest check, and a push from it is accepted. */
  async function repositoryStaysHealthy(label: string): Promise<void> {
    const dir = path.join(work, `clone-${label}`);
    const clone = await git(["clone", remote, dir], work);
    expect(clone.code, clone.stderr).toBe(0);
    const fsck = await git(["fsck", "--strict"], dir);
    expect(fsck.code, fsck.stdout + fsck.stderr).toBe(0);
    writeFileSync(path.join(dir, `${label}.txt`), label);
    expect((await git(["add", "."], dir)).code).toBe(0);
    expect((await git(["commit", "-m", label], dir)).code).toBe(0);
    const push = await git(["push", remote, "HEAD:main"], dir);
    expect(push.code, push.stderr).toBe(0);
  }

  beforeAll(async () => {
    hub = await startHub({ dialect });
    work = mkdtempSync(path.join(os.tmpdir(), "hub-integrity-"));
    await hub.createUser("alice");
    token = await hub.createToken("alice");
    const created = await hub.request("/api/repos", {
      method: "POST",
      token,
      json: { repo_id: "alice/integrity" },
    });
    expect(created.status).toBe(201);
    remote = withToken(`${hub.gitUrl}/alice/integrity`, token);
  });
  afterAll(async () => {
    await hub?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it.each([
    [
      ".gitmodules",
      '[submodule "evil"]\n\tpath = evil\n\turl = --upload-pack=touch /tmp/pwned\n',
      /url of submodule "evil" starts with "-"/,
    ],
    [
      ".gitmodules",
      '[submodule "evil"]\n\tpath = -evil\n\turl = https://example.com/x.git\n',
      /path of submodule/,
    ],
    [".gitmodules", '[submodule "evil"]\n\tpath = evil\n\tupdate = !sh -c id\n', /update to a command/],
    [".gitmodules", "[submodule\n", /cannot parse/],
    [".g\u200cit/config", "[core]\n\thooksPath = /tmp\n", /git's own directory/],
    ["git~1/config", "[core]\n\thooksPath = /tmp\n", /git's own directory/],
    ["sub/.GIT/config", "x", /git's own directory/],
    [".git./hooks/post-checkout", "x", /git's own directory/],
    ["gitmod~1", "x", /another spelling of \.gitmodules/],
    ["dir\\file", "x", /backslash/],
    [".gitattributes", `${"a".repeat(3000)} -text\n`, /line 1 is longer than 2048 bytes/],
  ])(
    "refuses %j with a 400 naming it, and the repository stays healthy",
    async (filePath, content, reason) => {
      const before = await head();
      const response = await commit(ndjson(header, file("innocent.txt", "fine"), file(filePath, content)));
      expect(response.status).toBe(400);
      const body = await readJson<ApiError>(response);
      expect(body.code).toBe("invalid_path");
      expect(body.error).toContain(JSON.stringify(filePath));
      expect(body.error).toMatch(reason);
      expect(body.error).toContain("Nothing was committed");
      expect(await head()).toBe(before);
    },
  );

  it("leaves a repository that passes git fsck --strict and takes pushes after every refusal", async () => {
    await repositoryStaysHealthy("after-refusals");
  });

  it("refuses the same paths at preupload and as LFS files, before any upload", async () => {
    const preupload = await hub.request("/api/models/alice/integrity/preupload/main", {
      method: "POST",
      token,
      json: { files: [{ path: ".g\u200cit/hooks/pre-commit", size: 10, sample: "" }] },
    });
    expect(preupload.status).toBe(400);
    expect((await readJson<ApiError>(preupload)).code).toBe("invalid_path");
    const lfs = await commit(
      ndjson(header, {
        key: "lfsFile",
        value: { path: "GIT~1/x.bin", algo: "sha256", oid: "a".repeat(64), size: 1 },
      }),
    );
    expect(lfs.status).toBe(400);
    expect((await readJson<ApiError>(lfs)).code).toBe("invalid_path");
  });

  it("keeps every unusual but valid path it accepts, with its content", async () => {
    const paths = [
      "a..b",
      "é t/ü.txt",
      ".gitignore",
      "deep/x/y/z.txt",
      "sp ace.txt",
      "dir/.gitattributes",
      "-dash.txt",
    ];
    const valid = '[submodule "lib"]\n\tpath = vendor/lib\n\turl = https://example.com/lib.git\n';
    const response = await commit(
      ndjson(header, ...paths.map((p) => file(p, `content of ${p}`)), file(".gitmodules", valid)),
    );
    expect(response.status, await response.clone().text()).toBe(200);
    const dir = path.join(work, "unusual");
    expect((await git(["clone", remote, dir], work)).code).toBe(0);
    for (const p of paths) expect(readFileSync(path.join(dir, p), "utf8")).toBe(`content of ${p}`);
    expect(readFileSync(path.join(dir, ".gitmodules"), "utf8")).toBe(valid);
    await repositoryStaysHealthy("after-unusual");
  });
});
