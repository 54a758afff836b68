// Downloading a repository the way `from_pretrained` does, through a real hub, in one run against references:
// snapshot_download of a 200-file repository by the real Python client (`.venv`, pinned), timed inside Python,
// against the same client downloading from a trivial server that answers from memory (bench/static-hub.mjs,
// the client's own floor) and against `git clone` of the same repository; and `resolve` GET and HEAD of one
// file under 16 connections against nginx serving the same file from disk.
// Needs nginx (apt-get install -y nginx) and the Python client in .venv (.ci/run makes it).
import { performance } from "node:perf_hooks";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  benchToken,
  benchWorkspace,
  findProgram,
  freePorts,
  hubd,
  isMain,
  isolatedGitEnv,
  load,
  median,
  percentile,
  printTable,
  run,
  startNginx,
  startServer,
  stopGroups,
  wholeNumber,
} from "./lib.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const python = path.join(here, "../.venv/bin/python");
const REPO = "bench/snap";

const SNAPSHOT = `
import sys, time
from huggingface_hub import snapshot_download
start = time.perf_counter()
snapshot_download(sys.argv[1], cache_dir=sys.argv[2])
print(time.perf_counter() - start)
`;

/**
 * HEAD requests from `connections` concurrent fetch loops for `duration` seconds (wrk waits for the body
 * a HEAD answer never has): requests/s and latency percentiles in milliseconds.
 */
async function loadHead(url, { headers, connections, duration }) {
  const latencies = [];
  const end = performance.now() + duration * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const start = performance.now();
        const response = await globalThis.fetch(url, { method: "HEAD", headers });
        if (response.status !== 200) throw new Error(`HEAD ${url}: ${response.status}`);
        latencies.push(performance.now() - start);
      }
    }),
  );
  const sorted = Float64Array.from(latencies).sort();
  return { rps: latencies.length / duration, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
}

/** Deterministic content for file `i`: `size` bytes, different for every file. */
function contentOf(i, size) {
  const chunks = [];
  for (let block = 0; chunks.length * 32 < size; block++)
    chunks.push(createHash("sha256").update(`file ${i} block ${block}`).digest());
  return Buffer.concat(chunks).subarray(0, size);
}

export async function benchSnapshot({
  files = 200,
  fileBytes = 4096,
  runs = 3,
  duration = 10,
  connections = 16,
} = {}) {
  const nginxBin = findProgram("nginx");
  if (!nginxBin) throw new Error("bench/snapshot.mjs needs nginx: apt-get install -y nginx");
  if (!existsSync(python))
    throw new Error("bench/snapshot.mjs needs the Python client in .venv: run .ci/run once");
  const workspace = benchWorkspace("hub-bench-snapshot-");
  const processes = [];
  workspace.onCleanup(() => stopGroups(processes));
  try {
    const [hubPort, nginxPort] = await freePorts(2, 20000, 30000);
    const env = {
      PATH: process.env.PATH,
      HUB_DATA_DIR: path.join(workspace.tmp, "hub"),
      HUB_PORT: String(hubPort),
      HUB_RATE_LIMIT: "1000000000",
      HUB_DOWNLOAD_RATE_LIMIT: "1000000000",
      ...(process.env.HUB_DATABASE_URL ? { HUB_DATABASE_URL: process.env.HUB_DATABASE_URL } : {}),
    };
    const token = await benchToken(env, "write");
    const hub = await startServer(hubd, ["serve", "--only", "hub"], { ...env, HUB_LOG_LEVEL: "info" });
    workspace.onCleanup(() => hub.stop());
    const auth = { authorization: `Bearer ${token}` };

    // The repository: `files` files of `fileBytes` bytes in one commit, and the same files on disk for nginx.
    const created = await globalThis.fetch(`${hub.url}/api/repos`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ repo_id: REPO }),
    });
    if (created.status !== 201) throw new Error(`creating ${REPO}: ${created.status}`);
    const served = path.join(workspace.tmp, "files");
    const lines = [{ key: "header", value: { summary: `${files} files` } }];
    for (let i = 0; i < files; i++) {
      const name = `data/part-${String(i).padStart(4, "0")}.bin`;
      const content = contentOf(i, fileBytes);
      mkdirSync(path.dirname(path.join(served, name)), { recursive: true });
      writeFileSync(path.join(served, name), content);
      lines.push({
        key: "file",
        value: { path: name, content: content.toString("base64"), encoding: "base64" },
      });
    }
    const committed = await globalThis.fetch(`${hub.url}/api/models/${REPO}/commit/main`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/x-ndjson" },
      body: lines.map((line) => JSON.stringify(line)).join("\n"),
    });
    if (committed.status !== 200)
      throw new Error(`committing: ${committed.status} ${await committed.text()}`);
    const { commitOid } = await committed.json();
    writeFileSync(
      path.join(served, ".gitattributes"),
      await (
        await globalThis.fetch(`${hub.url}/${REPO}/resolve/main/.gitattributes`, { headers: auth })
      ).text(),
    );

    const nginx = await startNginx(path.join(workspace.tmp, "nginx"), processes, {
      nginxBin,
      port: nginxPort,
      server: `    location / { root ${served}; }`,
    });
    const floor = await startServer(path.join(here, "static-hub.mjs"), [served, REPO, commitOid], {
      PATH: process.env.PATH,
    });
    workspace.onCleanup(() => floor.stop());

    // One file, many times: the resolve path itself.
    const file = "data/part-0000.bin";
    const resolveUrl = `${hub.url}/${REPO}/resolve/main/${file}`;
    const nginxGet = await load(`${nginx.url}/${file}`, { connections, duration });
    const hubGet = await load(resolveUrl, { headers: auth, connections, duration });
    const hubHead = await loadHead(resolveUrl, { headers: auth, connections, duration });
    printTable(
      `resolve of one ${fileBytes}-byte file, ${connections} connections, ${duration}s`,
      ["", "requests/s", "p50 ms", "p99 ms"],
      [
        ["nginx, the file from disk", nginxGet],
        ["hub resolve GET", hubGet],
        ["hub resolve HEAD", hubHead],
      ].map(([name, r]) => [name, r.rps.toFixed(0), r.p50.toFixed(2), r.p99.toFixed(2)]),
    );
    const resolveRatio = hubGet.rps / nginxGet.rps;
    console.log(
      `resolve GET: ${resolveRatio.toFixed(2)}x nginx's request rate (target >= 0.30); p50 ${hubGet.p50.toFixed(2)} ms (target < 5)\n`,
    );

    // The whole repository, the client's way, against its floor and against git clone.
    const timeSnapshot = async (endpoint, label, n) => {
      const cache = path.join(workspace.tmp, `cache-${label}-${n}`);
      const { stdout } = await run(python, ["-c", SNAPSHOT, REPO, cache], {
        env: {
          PATH: process.env.PATH,
          HOME: workspace.tmp,
          HF_ENDPOINT: endpoint,
          HF_TOKEN: token,
          HF_HUB_DISABLE_XET: "1",
          HF_HUB_DISABLE_TELEMETRY: "1",
          HF_HUB_DISABLE_PROGRESS_BARS: "1",
        },
      });
      rmSync(cache, { recursive: true, force: true });
      return Number(stdout.trim().split("\n").pop());
    };
    const gitHome = path.join(workspace.tmp, "git-home");
    const gitEnv = isolatedGitEnv(gitHome);
    const timeClone = async (n) => {
      const target = path.join(workspace.tmp, `clone-${n}`);
      const remote = new URL(`${hub.url}/${REPO}`);
      remote.username = "x";
      remote.password = token;
      const start = performance.now();
      await run("git", ["clone", "--quiet", remote.href, target], { env: gitEnv });
      const seconds = (performance.now() - start) / 1000;
      rmSync(target, { recursive: true, force: true });
      return seconds;
    };
    const hubCli = path.join(here, "../packages/client/bin/hub.js");
    const timeHubDownload = async (n) => {
      const home = path.join(workspace.tmp, `hub-home-${n}`);
      const start = performance.now();
      await run(process.execPath, [hubCli, "download", REPO], {
        env: { PATH: process.env.PATH, SERVICE_ENDPOINT: hub.url, SERVICE_TOKEN: token, SERVICE_HOME: home },
      });
      const seconds = (performance.now() - start) / 1000;
      rmSync(home, { recursive: true, force: true });
      return seconds;
    };
    const times = { hub: [], floor: [], clone: [], cli: [] };
    await timeSnapshot(hub.url, "warm", 0);
    for (let n = 0; n < runs; n++) {
      times.floor.push(await timeSnapshot(floor.url, "floor", n));
      times.hub.push(await timeSnapshot(hub.url, "hub", n));
      times.clone.push(await timeClone(n));
      times.cli.push(await timeHubDownload(n));
    }
    const [hubS, floorS, cloneS] = [median(times.hub), median(times.floor), median(times.clone)];
    printTable(
      `snapshot_download of ${files} files of ${fileBytes} bytes (huggingface_hub in .venv), median of ${runs}`,
      ["", "seconds", "runs"],
      [
        [
          "the client against a trivial in-memory server (its floor)",
          floorS.toFixed(2),
          times.floor.map((t) => t.toFixed(2)).join(" "),
        ],
        ["the client against the hub", hubS.toFixed(2), times.hub.map((t) => t.toFixed(2)).join(" ")],
        [
          "git clone of the same repository",
          cloneS.toFixed(2),
          times.clone.map((t) => t.toFixed(2)).join(" "),
        ],
        [
          "`hub download` (this project's CLI, process start included)",
          median(times.cli).toFixed(2),
          times.cli.map((t) => t.toFixed(2)).join(" "),
        ],
      ],
    );
    const bound = Math.max(1.5 * floorS, 3 * cloneS);
    console.log(
      `snapshot: ${(hubS / floorS).toFixed(2)}x the floor, ${(hubS / cloneS).toFixed(1)}x git clone (target: within ${bound.toFixed(2)} s, the larger of 1.5x the floor and 3x git clone)\n`,
    );
    return { resolveRatio, hubGet, hubHead, nginxGet, snapshot: { hub: hubS, floor: floorS, clone: cloneS } };
  } finally {
    await workspace.close();
  }
}

if (isMain(import.meta.url)) {
  const args = process.argv.slice(2);
  const option = (name, fallback) => {
    const index = args.indexOf(name);
    return index === -1 ? fallback : wholeNumber(name, args[index + 1]);
  };
  await benchSnapshot({
    files: option("--files", 200),
    runs: option("--runs", 3),
    duration: option("--duration", 10),
  });
}
