import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { RepoInfo } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHub, type TestHub } from "../../../server/src/test-support/hub-process.js";
import { startMinio, type TestMinio } from "../../../server/src/test-support/minio.js";
import { CuttingProxy } from "../test-support/cutting-proxy.js";
import { HUB_CLI, runCli, tempHome } from "../test-support/run-cli.js";

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");
const MiB = 1024 * 1024;

describe("hub upload and hub download against a running hub", () => {
  const proxy = new CuttingProxy();
  let hub: TestHub;
  let home: string;
  let folder: string;
  const weights = randomBytes(20 * MiB);
  // Over the hub's 64 MiB multipart threshold: two parts.
  const big = randomBytes(70 * MiB);
  const env = () => ({ SERVICE_ENDPOINT: proxy.url, SERVICE_HOME: home });
  const hubCli = (args: string[], stdin = "") => runCli(args, env(), stdin);
  const repoFolder = () => path.join(home, "hub", "models--alice--files");

  beforeAll(async () => {
    await proxy.start();
    // Every absolute URL the hub hands out (LFS hrefs, discovery) points at the proxy.
    hub = await startHub({ env: { HUB_PUBLIC_URL: proxy.url } });
    proxy.target = hub.url;
    await hub.createUser("alice");
    const token = await hub.createToken("alice");
    home = tempHome();
    expect((await hubCli(["login", "--token-stdin"], `${token}\n`)).code).toBe(0);
    expect((await hubCli(["repo", "create", "alice/files"])).code).toBe(0);
    folder = tempHome("hub-upload-");
    mkdirSync(path.join(folder, "weights"));
    mkdirSync(path.join(folder, ".git"));
    writeFileSync(path.join(folder, "README.md"), "# Files\n");
    writeFileSync(path.join(folder, "config.json"), '{"layers": 2}\n');
    writeFileSync(path.join(folder, ".git", "HEAD"), "ref: refs/heads/main\n");
    writeFileSync(path.join(folder, "weights", "model.safetensors"), weights);
    writeFileSync(path.join(folder, "weights", "big.bin"), big);
  }, 120_000);
  afterAll(async () => {
    await proxy.stop();
    await hub?.stop();
  });

  it("uploads a folder, large files through LFS in parts, and resumes after a broken part", async () => {
    proxy.dropRequest = (request) =>
      request.method === "PUT" && /\/lfs\/parts\/.*[?&]part=2(&|$)/.test(request.url);
    const broken = await hubCli(["upload", "alice/files", folder]);
    expect(broken.code).toBe(1);
    expect(broken.stderr.trim().split("\n")).toHaveLength(1);
    expect(broken.stderr).toMatch(/^error: /);
    const partPuts = () =>
      proxy.requests.filter((r) => r.method === "PUT" && r.url.startsWith("/lfs/parts/"));
    expect(partPuts()).toHaveLength(2);

    proxy.requests.length = 0;
    const resumed = await hubCli(["upload", "alice/files", folder, "--message", "Add the files"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain("1 parts resumed");
    // Part 1 was not sent again; the 20 MiB object, which the first run never reached, was.
    expect(partPuts().map((r) => /[?&]part=(\d+)/.exec(r.url)?.[1])).toEqual(["2"]);
    expect(
      proxy.requests.filter((r) => r.method === "PUT" && r.url.startsWith("/lfs/objects/")),
    ).toHaveLength(1);
    expect(resumed.stdout.trim()).toMatch(/\/alice\/files\/commit\/[0-9a-f]{40}$/);

    const info = JSON.parse((await hubCli(["repo", "info", "alice/files", "--json"])).stdout) as RepoInfo;
    expect(info.siblings.map((s) => s.rfilename).sort()).toEqual([
      ".gitattributes",
      "README.md",
      "config.json",
      "weights/big.bin",
      "weights/model.safetensors",
    ]);
  });

  it("sends nothing for large files the hub already has", async () => {
    writeFileSync(path.join(folder, "README.md"), "# Files, again\n");
    proxy.requests.length = 0;
    const again = await hubCli(["upload", "alice/files", folder, "--json"]);
    expect(again.code, again.stderr).toBe(0);
    const result = JSON.parse(again.stdout) as {
      lfsSkipped: string[];
      lfsUploaded: string[];
      regular: string[];
    };
    expect(result.lfsUploaded).toEqual([]);
    expect(result.lfsSkipped.sort()).toEqual(["weights/big.bin", "weights/model.safetensors"]);
    expect(result.regular.sort()).toEqual(["README.md", "config.json"]);
    expect(proxy.requests.filter((r) => r.method === "PUT")).toHaveLength(0);
  });

  it("uploads one file to a chosen path", async () => {
    const file = path.join(folder, "config.json");
    const result = await hubCli(["upload", "alice/files", file, "configs/base.json"]);
    expect(result.code, result.stderr).toBe(0);
    const download = await hubCli(["download", "alice/files", "configs/base.json"]);
    expect(download.code, download.stderr).toBe(0);
    expect(readFileSync(download.stdout.trim(), "utf8")).toBe('{"layers": 2}\n');
  });

  it("downloads into a cache laid out like the Hugging Face cache", async () => {
    const result = await hubCli(["download", "alice/files"]);
    expect(result.code, result.stderr).toBe(0);
    const snapshot = result.stdout.trim();
    const commit = readFileSync(path.join(repoFolder(), "refs", "main"), "utf8");
    expect(snapshot).toBe(path.join(repoFolder(), "snapshots", commit));
    const link = path.join(snapshot, "weights", "model.safetensors");
    expect(readlinkSync(link)).toBe(path.join("..", "..", "..", "blobs", sha256(weights)));
    expect(sha256(readFileSync(link))).toBe(sha256(weights));
    expect(sha256(readFileSync(path.join(snapshot, "weights", "big.bin")))).toBe(sha256(big));
    expect(readFileSync(path.join(snapshot, "README.md"), "utf8")).toBe("# Files, again\n");

    proxy.requests.length = 0;
    const cached = await hubCli(["download", "alice/files", "--json"]);
    const files = (JSON.parse(cached.stdout) as { files: Array<{ cached: boolean }> }).files;
    expect(files.every((file) => file.cached)).toBe(true);
    expect(proxy.requests.filter((r) => r.url.includes("/resolve/"))).toHaveLength(0);
  });

  it("downloads chosen files into a local folder", async () => {
    const target = tempHome("hub-local-");
    const result = await hubCli([
      "download",
      "alice/files",
      "README.md",
      "weights/model.safetensors",
      "--local-dir",
      target,
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(sha256(readFileSync(path.join(target, "weights", "model.safetensors")))).toBe(sha256(weights));
    expect(statSync(path.join(target, "README.md")).isFile()).toBe(true);
    expect(existsSync(path.join(target, "config.json"))).toBe(false);
    const missing = await hubCli(["download", "alice/files", "nope.bin"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("(entry_not_found)");
  });

  it("resumes with Range a download whose connection broke", async () => {
    home = tempHome();
    expect((await hubCli(["login", "--token-stdin"], `${await hub.createToken("alice")}\n`)).code).toBe(0);
    proxy.cutResponse = { match: (r) => r.url.endsWith("/weights/big.bin"), afterBytes: 5 * MiB };
    const broken = await hubCli(["download", "alice/files", "weights/big.bin"]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/^error: .*run it again to resume\. \(download_interrupted\)$/m);
    const incomplete = path.join(repoFolder(), "blobs", `${sha256(big)}.incomplete`);
    // What reached the disk before the break: at most the bytes the proxy let through (the last of them
    // may be lost with the connection).
    const kept = statSync(incomplete).size;
    expect(kept).toBeGreaterThan(4 * MiB);
    expect(kept).toBeLessThanOrEqual(5 * MiB);

    proxy.requests.length = 0;
    const resumed = await hubCli(["download", "alice/files", "weights/big.bin"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/Resuming weights\/big\.bin from [45]\.\d MiB of 70\.0 MiB/);
    expect(proxy.requests.find((r) => r.url.endsWith("/weights/big.bin"))?.range).toBe(`bytes=${kept}-`);
    expect(sha256(readFileSync(resumed.stdout.trim()))).toBe(sha256(big));
    expect(existsSync(incomplete)).toBe(false);
  });

  it("resumes a download whose process was killed mid-way", async () => {
    const target = tempHome("hub-local-");
    proxy.stall = { match: (r) => r.url.endsWith("/weights/big.bin"), afterBytes: 3 * MiB };
    const child = spawn(
      process.execPath,
      [HUB_CLI, "download", "alice/files", "weights/big.bin", "--local-dir", target],
      {
        env: { PATH: process.env.PATH, ...env() },
        stdio: "ignore",
      },
    );
    const incomplete = path.join(
      target,
      ".cache",
      "hub",
      "download",
      "weights",
      `big.bin.${sha256(big)}.incomplete`,
    );
    for (let i = 0; i < 200 && !(existsSync(incomplete) && statSync(incomplete).size === 3 * MiB); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(statSync(incomplete).size).toBe(3 * MiB);
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    proxy.release();

    proxy.requests.length = 0;
    const resumed = await hubCli(["download", "alice/files", "weights/big.bin", "--local-dir", target]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(proxy.requests.find((r) => r.url.endsWith("/weights/big.bin"))?.range).toBe(`bytes=${3 * MiB}-`);
    expect(sha256(readFileSync(path.join(target, "weights", "big.bin")))).toBe(sha256(big));
  });

  it("follows the redirect of a renamed repository", async () => {
    const moved = await hub.request("/api/repos/move", {
      method: "POST",
      token: await hub.createToken("alice"),
      json: { fromRepo: "alice/files", toRepo: "alice/files-renamed" },
    });
    expect(moved.status).toBe(200);
    home = tempHome();
    expect((await hubCli(["login", "--token-stdin"], `${await hub.createToken("alice")}\n`)).code).toBe(0);
    proxy.requests.length = 0;
    const result = await hubCli(["download", "alice/files", "weights/model.safetensors"]);
    expect(result.code, result.stderr).toBe(0);
    expect(sha256(readFileSync(result.stdout.trim()))).toBe(sha256(weights));
    const resolves = proxy.requests
      .filter((r) => r.url.includes("/resolve/"))
      .map((r) => r.url.split("/resolve/")[0]);
    expect(resolves).toEqual(["/alice/files", "/alice/files-renamed"]);
  });
});

// A hub whose objects are in an S3-compatible store answers downloads of LFS files with a redirect to a
// presigned URL of the store, which takes no Authorization header: the CLI must follow it without the token.
describe("hub upload and hub download against a hub on MinIO", () => {
  let minio: TestMinio;
  let hub: TestHub;
  let home: string;
  const weights = randomBytes(12 * MiB);
  const env = () => ({ SERVICE_ENDPOINT: hub.url, SERVICE_HOME: home });
  const hubCli = (args: string[], stdin = "") => runCli(args, env(), stdin);

  beforeAll(async () => {
    minio = await startMinio();
    hub = await startHub({ env: minio.env(await minio.createBucket()) });
    await hub.createUser("alice");
    home = tempHome();
    expect((await hubCli(["login", "--token-stdin"], `${await hub.createToken("alice")}\n`)).code).toBe(0);
    expect((await hubCli(["repo", "create", "alice/stored"])).code).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await hub?.stop();
    await minio?.stop();
  });

  it("uploads a large file to the store and downloads it back through the store's presigned URL", async () => {
    const folder = tempHome("hub-upload-s3-");
    writeFileSync(path.join(folder, "weights.bin"), weights);
    const uploaded = await hubCli(["upload", "alice/stored", folder]);
    expect(uploaded.code, uploaded.stderr).toBe(0);
    const resolve = await hub.request("/alice/stored/resolve/main/weights.bin", { redirect: "manual" });
    expect(resolve.status).toBe(302);
    expect(new URL(resolve.headers.get("location") ?? "").origin).toBe(new URL(minio.endpoint).origin);

    const target = tempHome("hub-download-s3-");
    const downloaded = await hubCli(["download", "alice/stored", "weights.bin", "--local-dir", target]);
    expect(downloaded.code, downloaded.stderr).toBe(0);
    expect(sha256(readFileSync(path.join(target, "weights.bin")))).toBe(sha256(weights));
  });
});
