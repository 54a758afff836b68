import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logLinesSince, runPythonDriver } from "../../../test-support/hf-driver.js";
import { startHub, type TestHub } from "../../../test-support/hub-process.js";

const CHECKOUT = fileURLToPath(new URL("../../../../../../", import.meta.url));
const DRIVER = fileURLToPath(new URL("./testdata/hf_xet_driver.py", import.meta.url));
/** The newest release (requirements.txt) and 1.19.0, the last before 1.20 (requirements-1.19.txt). */
const NEWEST = process.env.HUB_TEST_PYTHON ?? path.join(CHECKOUT, ".venv", "bin", "python");
const BEFORE_1_20 = process.env.HUB_TEST_PYTHON_1_19 ?? path.join(CHECKOUT, ".venv-1.19", "bin", "python");
const MIB = 1024 * 1024;
const pinned = (file: string) =>
  /^huggingface_hub==(\S+)$/m.exec(
    readFileSync(path.join(CHECKOUT, "packages/server/test-python", file), "utf8"),
  )?.[1];

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

interface LogLine {
  msg?: string;
  method?: string;
  path?: string;
  status?: number;
  bytes?: number;
}

type Answer = Record<string, unknown>;

/**
 * The same upload and download flow with the official Python client in every mode a user meets: the newest
 * release with Xet (its default), the newest with HF_HUB_DISABLE_XET=1, 1.19 (which asks for Xet in the Git LFS
 * batch), and a repository whose xetEnabled is off. Each mode has its own repository; the hub's request log
 * says which transport carried the bytes. Small files: xet-clients.test.ts covers large ones and deduplication.
 */
describe("the official Python client in every Xet mode", () => {
  let hub: TestHub;
  let work: string;
  let token: string;

  beforeAll(async () => {
    for (const python of [NEWEST, BEFORE_1_20]) {
      if (!existsSync(python)) {
        throw new Error(
          `No Python with the pinned huggingface_hub at ${python}: run .ci/run, or make .venv and .venv-1.19 ` +
            "from packages/server/test-python/requirements.txt and requirements-1.19.txt " +
            "(or set HUB_TEST_PYTHON and HUB_TEST_PYTHON_1_19)",
        );
      }
    }
    hub = await startHub();
    work = mkdtempSync(path.join(os.tmpdir(), "hub-xet-modes-"));
    await hub.createUser("alice");
    token = await hub.createToken("alice");
  });
  afterAll(async () => {
    await hub?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const python = (interpreter: string, request: Answer, env: Record<string, string> = {}) =>
    runPythonDriver<Answer>(interpreter, DRIVER, request, {
      HOME: work,
      HF_ENDPOINT: hub.url,
      HF_TOKEN: token,
      HF_HUB_DISABLE_TELEMETRY: "1",
      HF_HUB_DISABLE_PROGRESS_BARS: "1",
      ...env,
    });

  /** The hub's request log lines from `from` on. */
  const requestsSince = (from: number): LogLine[] =>
    logLinesSince<LogLine>(hub.logs, from).filter((line) => line.msg === "request");
  const xorbBytesSince = (from: number) =>
    logLinesSince<LogLine>(hub.logs, from)
      .filter((line) => line.msg === "xet xorb received")
      .reduce((sum, line) => sum + (line.bytes ?? 0), 0);
  const count = (lines: LogLine[], test: (line: LogLine) => boolean) => lines.filter(test).length;
  const isBatch = (line: LogLine) => line.path?.endsWith("/info/lfs/objects/batch") === true;
  const isLfsPut = (line: LogLine) =>
    line.method === "PUT" && /\/lfs\/(objects|parts)\//.test(line.path ?? "");
  const isCas = (line: LogLine) => line.path?.startsWith("/xet-cas/") === true;

  /**
   * Uploads with upload_file (small and larger), upload_folder and create_commit (add, delete, copy) in one
   * process, and answers what the repository should hold.
   */
  async function uploadAll(interpreter: string, repo: string, mode: string, env: Record<string, string>) {
    const files = new Map<string, Buffer>();
    const local = (name: string, content: Buffer, inRepo = name) => {
      const file = path.join(work, mode, name);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, content);
      files.set(inRepo, content);
      return file;
    };
    const large = randomBytes(3 * MIB);
    const steps = [
      { op: "upload_file", path: local("small.bin", randomBytes(200_000)), path_in_repo: "small.bin" },
      { op: "upload_file", path: local("large.bin", large), path_in_repo: "large.bin" },
      { op: "upload_folder", folder: path.join(work, mode, "folder") },
      {
        op: "create_commit",
        operations: [
          { add: { path_in_repo: "c.bin", path: local("c.bin", randomBytes(400_000)) } },
          { add: { path_in_repo: "notes.txt", text: "regular text\n" } },
          { delete: "weights/b.bin" },
          { copy: { src: "large.bin", dest: "copy/large.bin" } },
        ],
      },
    ];
    local("folder/weights/a.safetensors", randomBytes(MIB), "weights/a.safetensors");
    local("folder/weights/b.bin", randomBytes(300_000), "weights/b.bin");
    local("folder/README.md", Buffer.from(`# ${mode}\n`), "README.md");
    const answer = await python(
      interpreter,
      { op: "sequence", repo_id: repo, steps },
      { HF_HOME: path.join(work, mode, "hf"), ...env },
    );
    // The release the mode is about, as pinned.
    expect(answer.client).toBe(
      pinned(interpreter === BEFORE_1_20 ? "requirements-1.19.txt" : "requirements.txt"),
    );
    files.set("notes.txt", Buffer.from("regular text\n"));
    files.set("copy/large.bin", large);
    files.delete("weights/b.bin");
    return files;
  }

  /** hf_hub_download of every LFS file and snapshot_download of the repository, each file compared by SHA-256. */
  async function downloadAll(
    interpreter: string,
    repo: string,
    files: Map<string, Buffer>,
    env: Record<string, string>,
  ) {
    const expected = Object.fromEntries([...files].map(([name, content]) => [name, sha256(content)]));
    const lfsFiles = ["small.bin", "large.bin", "copy/large.bin", "weights/a.safetensors", "c.bin"];
    const answer = await python(
      interpreter,
      {
        op: "sequence",
        repo_id: repo,
        steps: [
          { op: "download", files: lfsFiles },
          { op: "snapshot", revision: "main" },
        ],
      },
      { HF_HOME: path.join(work, repo.replace("/", "-"), `hf-read-${Math.random()}`), ...env },
    );
    const [downloaded, snapshot] = answer.steps as [Answer, Answer];
    expect(Object.fromEntries(lfsFiles.map((name) => [name, downloaded[name]]))).toEqual(
      Object.fromEntries(lfsFiles.map((name) => [name, expected[name]])),
    );
    const { client: _client, xet: _xet, ".gitattributes": _attributes, ...snapshotFiles } = snapshot;
    expect(snapshotFiles).toEqual(expected);
    return lfsFiles;
  }

  async function createRepo(name: string) {
    const created = await hub.request("/api/repos", { method: "POST", token, json: { repo_id: name } });
    expect(created.status).toBe(201);
  }

  it("newest release with Xet (its default): uploads and downloads through the CAS, never the LFS batch", async () => {
    await createRepo("alice/newest-xet");
    const from = hub.logs.length;
    const files = await uploadAll(NEWEST, "alice/newest-xet", "newest-xet", {});
    const uploads = requestsSince(from);
    expect(
      count(uploads, (line) => line.path === "/xet-cas/v1/shards" && line.status === 200),
    ).toBeGreaterThanOrEqual(4);
    expect(count(uploads, isBatch)).toBe(0);
    expect(count(uploads, isLfsPut)).toBe(0);
    expect(xorbBytesSince(from)).toBeGreaterThanOrEqual(4 * MIB + 900_000);

    const read = hub.logs.length;
    const lfsFiles = await downloadAll(NEWEST, "alice/newest-xet", files, {});
    const downloads = requestsSince(read);
    expect(
      count(downloads, (line) => line.path?.startsWith("/xet-cas/v1/reconstructions/") === true),
    ).toBeGreaterThanOrEqual(4);
    const resolved = downloads.filter((line) => line.method === "GET" && line.path?.includes("/resolve/"));
    expect(resolved.filter((line) => lfsFiles.some((name) => line.path?.endsWith(`/${name}`)))).toEqual([]);
  });

  it("newest release with HF_HUB_DISABLE_XET=1: the Git LFS batch and plain transfers, no Xet at all", async () => {
    await createRepo("alice/newest-lfs");
    const env = { HF_HUB_DISABLE_XET: "1" };
    const from = hub.logs.length;
    const files = await uploadAll(NEWEST, "alice/newest-lfs", "newest-lfs", env);
    const lfsFiles = await downloadAll(NEWEST, "alice/newest-lfs", files, env);
    const requests = requestsSince(from);
    expect(count(requests, isBatch)).toBeGreaterThanOrEqual(4);
    // small, large, a.safetensors, b.bin, c.bin: each sent once as an LFS object.
    expect(count(requests, isLfsPut)).toBeGreaterThanOrEqual(5);
    expect(requests.filter((line) => isCas(line) || line.path?.includes("/xet-"))).toEqual([]);
    for (const name of lfsFiles.filter((file) => file !== "copy/large.bin")) {
      expect(requests, name).toContainEqual(
        expect.objectContaining({
          method: "GET",
          path: expect.stringMatching(new RegExp(`/resolve/main/${name}$`)),
        }),
      );
    }
  });

  it("1.19 (before 1.20): the Git LFS batch answers transfer xet, and the bytes go to the CAS", async () => {
    await createRepo("alice/py-1-19");
    const from = hub.logs.length;
    const files = await uploadAll(BEFORE_1_20, "alice/py-1-19", "py-1-19", {});
    const uploads = requestsSince(from);
    // Each upload asked the batch (offering "xet"); the answer sent it to the CAS instead of an LFS PUT.
    expect(count(uploads, isBatch)).toBeGreaterThanOrEqual(4);
    expect(count(uploads, isLfsPut)).toBe(0);
    expect(
      count(uploads, (line) => line.path === "/xet-cas/v1/shards" && line.status === 200),
    ).toBeGreaterThanOrEqual(4);
    expect(xorbBytesSince(from)).toBeGreaterThanOrEqual(4 * MIB + 900_000);

    const read = hub.logs.length;
    await downloadAll(BEFORE_1_20, "alice/py-1-19", files, {});
    const downloads = requestsSince(read);
    expect(
      count(downloads, (line) => line.path?.startsWith("/xet-cas/v1/reconstructions/") === true),
    ).toBeGreaterThanOrEqual(4);
  });

  it("a repository with xetEnabled off: the newest release fails at the token route, which says to set HF_HUB_DISABLE_XET=1, and works with it; 1.19 needs nothing", async () => {
    await createRepo("alice/no-xet");
    const settings = await hub.request("/api/models/alice/no-xet/settings", {
      method: "PUT",
      token,
      json: { xetEnabled: false },
    });
    expect(settings.status).toBe(200);

    writeFileSync(path.join(work, "refused.bin"), randomBytes(100_000));
    const refused = python(
      NEWEST,
      {
        op: "upload_file",
        repo_id: "alice/no-xet",
        path: path.join(work, "refused.bin"),
        path_in_repo: "refused.bin",
      },
      { HF_HOME: path.join(work, "hf-refused") },
    );
    // hf_xet (1.8.0) asks the token route itself and reports only the status and the route; the hub's answer
    // there says what to do, for the user who opens it (or reads X-Error-Message).
    const failure = await refused.then(
      () => "",
      (error: Error) => error.message,
    );
    expect(failure).toMatch(/404 Not Found.*\/api\/models\/alice\/no-xet\/xet-write-token\/main/);
    const route = await hub.request("/api/models/alice/no-xet/xet-write-token/main", { token });
    expect(route.status).toBe(404);
    expect(route.headers.get("x-error-message")).toBe(
      "Xet is not available on this hub; set HF_HUB_DISABLE_XET=1",
    );
    expect(((await route.json()) as { error: string }).error).toMatch(/HF_HUB_DISABLE_XET=1/);
    const listed = await hub.request("/api/models/alice/no-xet/tree/main", { token });
    expect(((await listed.json()) as Array<{ path: string }>).map((entry) => entry.path)).not.toContain(
      "refused.bin",
    );

    const from = hub.logs.length;
    const files = await uploadAll(NEWEST, "alice/no-xet", "no-xet", { HF_HUB_DISABLE_XET: "1" });
    // Reading needs no setting: the hub offers no Xet for this repository, so the client downloads plainly.
    await downloadAll(NEWEST, "alice/no-xet", files, {});
    const requests = requestsSince(from);
    expect(count(requests, isBatch)).toBeGreaterThanOrEqual(4);
    expect(count(requests, isLfsPut)).toBeGreaterThanOrEqual(5);
    expect(requests.filter(isCas)).toEqual([]);

    // 1.19 needs no setting: it offers "xet" in the batch, and the hub answers a plain transfer.
    const older = hub.logs.length;
    writeFileSync(path.join(work, "older.bin"), randomBytes(100_000));
    await python(
      BEFORE_1_20,
      {
        op: "upload_file",
        repo_id: "alice/no-xet",
        path: path.join(work, "older.bin"),
        path_in_repo: "older.bin",
      },
      { HF_HOME: path.join(work, "hf-older") },
    );
    const olderRequests = requestsSince(older);
    expect(count(olderRequests, isBatch)).toBe(1);
    expect(count(olderRequests, isLfsPut)).toBe(1);
    expect(olderRequests.filter(isCas)).toEqual([]);
  });
});
