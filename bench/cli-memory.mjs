// The hub CLI's memory on large transfers: a 1 GiB file uploaded (`hub upload`, through Git LFS in
// multipart parts) and downloaded (`hub download`, into the cache) against a real hub, with the CLI
// process's peak resident memory (VmHWM from /proc/<pid>/status, sampled every 20 ms while it runs) next
// to references measured in the same run: an idle `node` (what any Node CLI costs before doing anything)
// and curl moving the same bytes (a PUT to the signed LFS href the batch API hands out, a GET of the
// resolve URL into a file). The CLI streams and hashes as it reads, so its peak should stay near the idle
// node's whatever the file size: the ratio to idle node is the figure to watch.
//
// Needs Linux (/proc) and curl; builds nothing: run `npm run build` first.
// `node bench/cli-memory.mjs [--size-mib 1024] [--seed 1]`
import { spawn } from "node:child_process";
import { existsSync, readFileSync, statfsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { clearInterval, setInterval } from "node:timers";
import { parseArgs } from "node:util";
import { benchToken, benchWorkspace, findProgram, freePorts, hubd, isMain, printEndLoad } from "./lib.mjs";
import { printTable, run, startServer, track, wholeNumber, writeSeededFile } from "./lib.mjs";

const MiB = 1024 * 1024;
const PORTS = [19200, 19299];
const hubCli = path.join(path.dirname(fileURLToPath(import.meta.url)), "../packages/client/dist/cli/hub.js");

/** A field of /proc/<pid>/status in KiB (VmHWM, VmRSS), or null once the process is gone. */
function statusKiB(pid, field) {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(
      readFileSync(`/proc/${pid}/status`, "utf8"),
    );
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/**
 * Runs a program to its end, sampling its VmHWM and VmRSS every 20 ms. Resolves with its peak (the last
 * VmHWM read, which only grows), the RSS samples, and the wall time; rejects on a non-zero exit.
 */
function measured(command, args, { env, input = "" } = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = track(spawn(command, args, { env, stdio: ["pipe", "ignore", "pipe"] }));
    let stderr = "";
    let hwm = 0;
    const rss = [];
    const sample = () => {
      const high = statusKiB(child.pid, "VmHWM");
      const now = statusKiB(child.pid, "VmRSS");
      if (high !== null) hwm = Math.max(hwm, high);
      if (now !== null) rss.push(now);
    };
    sample();
    const timer = setInterval(sample, 20);
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.once("exit", (code, signal) => {
      clearInterval(timer);
      const seconds = (performance.now() - started) / 1000;
      if (code !== 0)
        reject(
          new Error(`${path.basename(command)} ${args.join(" ")} failed (${code ?? signal}): ${stderr}`),
        );
      else resolve({ peakMiB: hwm / 1024, rssMiB: rss.map((kib) => kib / 1024), seconds });
    });
    child.stdin.end(input);
  });
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)] : NaN;
};

export async function benchCliMemory({ sizeMiB = 1024, seed = 1 } = {}) {
  const size = sizeMiB * MiB;
  if (!existsSync(hubd) || !existsSync(hubCli)) throw new Error("Run `npm run build` first.");
  const curlBin = findProgram("curl");
  if (!curlBin) throw new Error("bench/cli-memory.mjs needs curl: apt-get install -y curl");
  // The file, the hub's copy, the cache's copy and curl's copy.
  const fsStat = statfsSync(os.tmpdir());
  if (fsStat.bavail * fsStat.bsize < 4 * size + 256 * MiB) {
    throw new Error(`${os.tmpdir()} needs ${((4 * size) / MiB).toFixed(0)} MiB free (try --size-mib).`);
  }
  const workspace = benchWorkspace("hub-bench-cli-");
  const { tmp } = workspace;
  try {
    const file = path.join(tmp, "object.bin");
    const oid = await writeSeededFile(file, size, seed, "cli-object");
    const [hubPort, gitPort] = await freePorts(2, ...PORTS);
    const hubEnv = {
      PATH: process.env.PATH,
      HUB_DATA_DIR: path.join(tmp, "hub-data"),
      HUB_PORT: String(hubPort),
      HUB_GIT_PORT: String(gitPort),
      HUB_RATE_LIMIT: "1000000000",
      HUB_LOG_LEVEL: "info",
    };
    const token = await benchToken(hubEnv, "write");
    const hub = await startServer(hubd, ["serve", "--only", "hub,git"], hubEnv, { surfaces: ["hub", "git"] });
    workspace.onCleanup(() => hub.stop());
    const cliEnv = {
      PATH: process.env.PATH,
      HOME: tmp,
      SERVICE_ENDPOINT: hub.urls.hub,
      SERVICE_HOME: path.join(tmp, "home"),
    };
    const cli = (args, input) => run(process.execPath, [hubCli, ...args], { env: cliEnv, input });
    await cli(["login", "--token-stdin"], `${token}\n`);
    await cli(["repo", "create", "bench/cli-memory"]);
    await cli(["repo", "create", "bench/curl-reference"]);

    const idle = await measured(process.execPath, ["-e", "setTimeout(() => {}, 300)"]);
    // The CLI doing almost nothing: loading its modules and reading its configuration.
    const cliIdle = await measured(process.execPath, [hubCli, "token", "list", "--saved"], { env: cliEnv });
    const upload = await measured(
      process.execPath,
      [hubCli, "upload", "bench/cli-memory", file, "object.bin"],
      {
        env: cliEnv,
      },
    );
    const download = await measured(
      process.execPath,
      [hubCli, "download", "bench/cli-memory", "object.bin"],
      {
        env: cliEnv,
      },
    );
    const cached = path.join(cliEnv.SERVICE_HOME, "hub", "models--bench--cli-memory", "blobs", oid);
    if (!existsSync(cached)) throw new Error(`The download did not leave ${cached}.`);

    // curl, the same bytes each way: a basic-transfer PUT to a signed href, a GET of the resolve URL.
    const batch = await globalThis.fetch(`${hub.urls.hub}/bench/curl-reference.git/info/lfs/objects/batch`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        accept: "application/vnd.git-lfs+json",
        "content-type": "application/vnd.git-lfs+json",
      },
      body: JSON.stringify({ operation: "upload", transfers: ["basic"], objects: [{ oid, size }] }),
    });
    const href = (await batch.json()).objects[0]?.actions?.upload?.href;
    if (!href) throw new Error("The batch API offered no upload href for the curl reference.");
    const curlArgs = ["--silent", "--show-error", "--fail", "--output", "/dev/null"];
    const curlUpload = await measured(curlBin, [...curlArgs, "-T", file, href]);
    const curlDownload = await measured(curlBin, [
      "--silent",
      "--show-error",
      "--fail",
      "--output",
      path.join(tmp, "curl-copy.bin"),
      "-H",
      `authorization: Bearer ${token}`,
      `${hub.urls.hub}/bench/cli-memory/resolve/main/object.bin`,
    ]);

    const mbps = (result) => (size / 1e6 / result.seconds).toFixed(0);
    const row = (name, result, reference) => [
      name,
      result.seconds.toFixed(1),
      mbps(result),
      result.peakMiB.toFixed(1),
      median(result.rssMiB).toFixed(1),
      (result.peakMiB / idle.peakMiB).toFixed(2),
      reference ? (result.peakMiB / reference.peakMiB).toFixed(2) : "",
    ];
    printTable(
      `The hub CLI's memory moving a ${sizeMiB} MiB file (peak RSS = VmHWM; ${os.cpus().length} cores)`,
      ["process", "seconds", "MB/s", "peak RSS MiB", "median RSS MiB", "x idle node", "x curl"],
      [
        [
          "node, idle (reference)",
          idle.seconds.toFixed(1),
          "",
          idle.peakMiB.toFixed(1),
          median(idle.rssMiB).toFixed(1),
          "1.00",
          "",
        ],
        [
          "hub token list --saved (the CLI at rest, reference)",
          cliIdle.seconds.toFixed(1),
          "",
          cliIdle.peakMiB.toFixed(1),
          median(cliIdle.rssMiB).toFixed(1),
          (cliIdle.peakMiB / idle.peakMiB).toFixed(2),
          "",
        ],
        row("hub upload (hash + LFS multipart + commit)", upload, curlUpload),
        row("curl -T to the LFS href (reference)", curlUpload),
        row("hub download (into the cache, hash checked)", download, curlDownload),
        row("curl GET of the resolve URL (reference)", curlDownload),
      ],
    );
    console.log(
      `hub CLI peak RSS: upload ${upload.peakMiB.toFixed(1)} MiB, download ${download.peakMiB.toFixed(1)} MiB ` +
        `for a ${sizeMiB} MiB file; an idle node peaks at ${idle.peakMiB.toFixed(1)} MiB ` +
        `(ratios ${(upload.peakMiB / idle.peakMiB).toFixed(2)} and ${(download.peakMiB / idle.peakMiB).toFixed(2)})`,
    );
    printEndLoad();
  } finally {
    await workspace.close();
  }
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      // Read by lib.mjs: profile the hubs this run serves from.
      profile: { type: "boolean" },
      "size-mib": { type: "string" },
      seed: { type: "string" },
    },
  });
  const options = {};
  if (values["size-mib"]) options.sizeMiB = wholeNumber("size-mib", values["size-mib"]);
  if (values.seed) options.seed = wholeNumber("seed", values.seed);
  await benchCliMemory(options);
}
