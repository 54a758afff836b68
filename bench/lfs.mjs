// Git LFS object transfers through a real hub, against nginx on loopback, in one run: upload (curl's PUT
// to the signed href the batch API hands out, vs a WebDAV PUT to nginx) and download (curl's GET of the
// batch API's download href, vs nginx serving the same file statically, with sendfile on and off).
//
// The object is one random file (1 GiB by default) generated from a fixed seed, so it neither compresses
// nor repeats. Every hub upload goes into a just-created repository after the stored object file is
// removed, so the batch API asks for the bytes each time and the hub hashes and stores all of them; every
// nginx upload goes to a path that does not exist yet. Both servers write a temporary file in the same
// file system and rename it into place; `sync` runs (untimed) before each transfer so no transfer pays for
// the previous one's write-back. Paths are interleaved run by run, after warm-ups.
//
// The hub process's resident memory is watched through each hub transfer: its peak (VmHWM, reset before the
// transfer through /proc/<pid>/clear_refs where the kernel allows it, and VmRSS sampled every 50 ms) against
// its VmRSS just before. An object streamed through must leave it flat whatever the object's size.
//
// The real git-lfs client pushes and fetches the same object once at the end, for context only.
//
// Needs Linux, curl and nginx with the dav module (`apt-get install -y curl nginx`; git and git-lfs for
// the client run), a built hub (`npm run build`) and about 3.5 times the object's size free in the
// temporary directory.
// `node bench/lfs.mjs [--runs 3] [--warmup 1] [--size-mib 1024] [--seed 1] [--no-git-lfs]`;
// about a minute on 2 vCPUs. HUB_BENCH_NODE_ARGS (space-separated) go to node before the serving hub's
// script, to profile it: HUB_BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" node bench/lfs.mjs
import { createHash } from "node:crypto";
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, statSync, statfsSync } from "node:fs";
import { writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { clearInterval, setInterval } from "node:timers";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { benchToken, benchWorkspace, hubd, isolatedGitEnv, run, startServer } from "./lib.mjs";
import { findProgram, freePorts, startNginx, stopGroups, version } from "./lib.mjs";
import { childTicks, descendants, readStat, TICKS } from "./lib.mjs";
import { interleave, median, printEndLoad, printTable, scenarioTitle } from "./lib.mjs";
import { isMain, wholeNumber, writeSeededFile } from "./lib.mjs";

const { fetch } = globalThis;
const MiB = 1024 * 1024;
/** Hub throughput over nginx throughput, by direction (issue 19: upload 0.85, download at least level). */
const TARGETS = { upload: 0.85, download: 1.0 };
/** Most the hub's resident memory may grow during one transfer, whatever the object's size. */
const RSS_TARGET_MIB = 100;
/** Where the hub and nginx listen. */
const PORTS = [19100, 19199];

/**
 * Runs the LFS benchmark and prints one table per direction with the hub/nginx ratios and the hub's memory
 * growth; resolves with every sample. Each direction runs `warmup` untimed rounds, then `runs` timed
 * rounds, every path once per round.
 */
export async function benchLfs({ runs = 3, warmup = 1, sizeMiB = 1024, seed = 1, gitLfs = true } = {}) {
  const size = sizeMiB * MiB;
  const nginxBin = findProgram("nginx");
  const curlBin = findProgram("curl");
  if (!nginxBin || !curlBin)
    throw new Error("bench/lfs.mjs needs nginx and curl: apt-get install -y nginx curl");
  if (!/--with-http_dav_module/.test(version(nginxBin, ["-V"]))) {
    throw new Error(`${nginxBin} was built without the WebDAV module (--with-http_dav_module) uploads need.`);
  }
  if (!existsSync(hubd)) throw new Error(`${hubd} is missing: run \`npm run build\` first.`);
  const gitLfsBin = gitLfs ? findProgram("git-lfs") : null;
  const withClient = Boolean(gitLfsBin && findProgram("git"));

  // The object, the hub's stored copy, one upload in flight and the git-lfs client's copy.
  const needed = Math.ceil(3.5 * size) + 256 * MiB;
  const fsStat = statfsSync(os.tmpdir());
  const free = fsStat.bavail * fsStat.bsize;
  if (free < needed) {
    throw new Error(
      `${os.tmpdir()} has ${(free / MiB).toFixed(0)} MiB free; a ${sizeMiB} MiB object needs ` +
        `${(needed / MiB).toFixed(0)} MiB (try --size-mib, or TMPDIR on a larger disk).`,
    );
  }

  const workspace = benchWorkspace("hub-bench-lfs-");
  const { tmp } = workspace;
  try {
    // The object, where nginx serves it from.
    const www = path.join(tmp, "www");
    mkdirSync(path.join(www, "files"), { recursive: true });
    mkdirSync(path.join(www, "upload"));
    const objectFile = path.join(www, "files", "object.bin");
    const t0 = performance.now();
    const oid = await writeSeededFile(objectFile, size, seed, "lfs-object");
    await run("sync", []);
    const generateSeconds = (performance.now() - t0) / 1000;

    const [hubPort, gitPort, nginxPort] = await freePorts(3, ...PORTS);

    // (a) The hub: a write token and its hub and git listeners (the git one answers LFS).
    const dataDir = path.join(tmp, "hub-data");
    const hubEnv = {
      PATH: process.env.PATH,
      HUB_DATA_DIR: dataDir,
      HUB_PORT: String(hubPort),
      HUB_GIT_PORT: String(gitPort),
      HUB_RATE_LIMIT: "1000000000",
      HUB_LOG_LEVEL: process.env.HUB_LOG_LEVEL ?? "info",
      // Only requests nginx marks with X-Sendfile-Type are answered with X-Accel-Redirect (the "accel" path).
      HUB_ACCEL_REDIRECT: "/_hub_lfs/",
    };
    const token = await benchToken(hubEnv, "write");
    // Node flags for the serving hub alone, to profile it (`--cpu-prof --cpu-prof-dir=...`) or try a change.
    const nodeArgs = (process.env.HUB_BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);
    const hub = await startServer(hubd, ["serve", "--only", "hub,git"], hubEnv, {
      surfaces: ["hub", "git"],
      nodeArgs,
    });
    workspace.onCleanup(() => stopWithin(hub, 5000));
    const storedObject = path.join(dataDir, "lfs", "objects", oid.slice(0, 2), oid.slice(2, 4), oid);

    const createRepo = async (name) => {
      const response = await fetch(`${hub.urls.hub}/api/repos`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ repo_id: `bench/${name}` }),
      });
      if (!response.ok) throw new Error(`POST /api/repos: ${response.status} ${await response.text()}`);
    };
    const lfsPost = async (url, body) => {
      const response = await fetch(url, {
        method: "POST",
        headers: {
          accept: "application/vnd.git-lfs+json",
          "content-type": "application/vnd.git-lfs+json",
          authorization: `Basic ${Buffer.from(`x:${token}`).toString("base64")}`,
        },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`POST ${new URL(url).pathname}: ${response.status} ${text}`);
      return JSON.parse(text);
    };
    /** The actions the batch API answers for the object, timed. */
    const batch = async (name, operation) => {
      const start = performance.now();
      const answer = await lfsPost(`${hub.urls.git}/bench/${name}.git/info/lfs/objects/batch`, {
        operation,
        transfers: ["basic"],
        objects: [{ oid, size }],
      });
      const object = answer.objects?.[0];
      if (object?.error) throw new Error(`batch ${operation}: ${object.error.code} ${object.error.message}`);
      if (!object?.actions?.[operation]) {
        throw new Error(
          `batch ${operation} in bench/${name}: no ${operation} action: ${JSON.stringify(object)}`,
        );
      }
      return { actions: object.actions, ms: performance.now() - start };
    };

    // (b) nginx: the same file served statically (sendfile on, and off) and a WebDAV PUT location.
    const nginxProcesses = [];
    workspace.onCleanup(() => stopGroups(nginxProcesses));
    const nginx = await startFileServer(path.join(tmp, "nginx"), nginxProcesses, {
      nginxBin,
      www,
      port: nginxPort,
      hubGitPort: gitPort,
      hubLfsDir: path.join(dataDir, "lfs"),
    });
    /** The same signed href, reached through nginx's `/hub/` location (docs/deployment.md). */
    const viaNginx = (href) => {
      const url = new URL(href);
      return `${nginx.url}/hub${url.pathname}${url.search}`;
    };

    console.log(
      `\nGit LFS transfers: hub vs ${version(nginxBin, ["-v"]).replace(/^nginx version: /, "")} on loopback, ` +
        `with ${version(curlBin, ["--version"]).split("\n")[0].split(" ").slice(0, 2).join(" ")}; ` +
        `Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim()}), ` +
        `load average ${os.loadavg()[0].toFixed(2)}`,
    );
    console.log(
      `Object: ${sizeMiB} MiB of seeded random bytes (seed ${seed}), sha256 ${oid.slice(0, 16)}…, ` +
        `generated in ${generateSeconds.toFixed(1)} s. MB/s are 10^6 bytes per second of curl's time_total; ` +
        `server CPU is the hub process or the nginx master and workers; client CPU is curl's.`,
    );

    // Every hub transfer is watched for memory; the first baseline is the idle hub before any transfer.
    const idle = readMemory(hub.pid);
    const hubMemory = [];
    const watchHub = (label) => {
      const watch = memoryWatch(hub.pid);
      return () => {
        const seen = watch.stop();
        hubMemory.push({ label, ...seen });
        return seen;
      };
    };

    let serial = 0;
    const curl = (args) =>
      run(curlBin, [
        "-sS",
        "--fail",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code} %{size_upload} %{size_download} %{time_total}",
        ...args,
      ]).then(({ stdout }) => {
        const [code, uploaded, downloaded, seconds] = stdout.trim().split(" ");
        return {
          code: Number(code),
          uploaded: Number(uploaded),
          downloaded: Number(downloaded),
          seconds: Number(seconds),
        };
      });

    // Upload: the hub's signed href against nginx's WebDAV PUT.
    let lastHubRepo = null;
    const upload = await scenario({
      key: "upload",
      title: `Upload: curl -T of the ${sizeMiB} MiB object (PUT)`,
      runs,
      warmup,
      paths: {
        hub: {
          serverPids: () => [hub.pid],
          setup: async () => {
            const name = `up-${++serial}`;
            await createRepo(name);
            const { actions, ms } = await batch(name, "upload");
            if (!actions.verify) throw new Error("The upload batch answer has no verify action.");
            return { name, actions, batchMs: ms };
          },
          // The fresh repository gets an upload action anyway; without the stored file the hub writes it all.
          beforeTransfer: () => rmSync(storedObject, { force: true }),
          transfer: ({ actions }) => curl(["-T", objectFile, actions.upload.href]),
          verify: async (context, result) => {
            expect(result.uploaded === size, `the hub upload sent ${result.uploaded} of ${size} bytes`);
            const start = performance.now();
            await lfsPost(context.actions.verify.href, { oid, size });
            context.verifyMs = performance.now() - start;
            expect(statSync(storedObject).size === size, "the hub did not store the whole object");
            lastHubRepo = context.name;
          },
        },
        nginx: {
          serverPids: () => nginx.pids(),
          beforeTransfer: () => rmSync(path.join(www, "upload", "object.bin"), { force: true }),
          transfer: () => curl(["-T", objectFile, `${nginx.url}/upload/object.bin`]),
          verify: async (_context, result) => {
            expect(result.uploaded === size, `the nginx upload sent ${result.uploaded} of ${size} bytes`);
            expect(
              statSync(path.join(www, "upload", "object.bin")).size === size,
              "nginx did not store the whole object",
            );
          },
        },
      },
    });
    rmSync(path.join(www, "upload", "object.bin"), { force: true });

    // Download: the hub's signed href against nginx's static file, with and without sendfile; and the same href
    // through nginx in front of the hub, which then sends the file (X-Accel-Redirect, docs/deployment.md).
    const download = await scenario({
      key: "download",
      title: `Download: curl -o /dev/null of the ${sizeMiB} MiB object (GET)`,
      runs,
      warmup,
      paths: {
        hub: {
          serverPids: () => [hub.pid],
          setup: async () => {
            const { actions, ms } = await batch(lastHubRepo, "download");
            return { actions, batchMs: ms };
          },
          transfer: ({ actions }) => curl([actions.download.href]),
          verify: async (_context, result) =>
            expect(result.downloaded === size, `the hub sent ${result.downloaded} of ${size} bytes`),
        },
        accel: {
          serverPids: () => [hub.pid, ...nginx.pids()],
          setup: async () => {
            const { actions, ms } = await batch(lastHubRepo, "download");
            return { actions, batchMs: ms };
          },
          transfer: ({ actions }) => curl([viaNginx(actions.download.href)]),
          verify: async (_context, result) =>
            expect(
              result.downloaded === size,
              `nginx sent ${result.downloaded} of ${size} bytes for the hub`,
            ),
        },
        sendfile: {
          serverPids: () => nginx.pids(),
          transfer: () => curl([`${nginx.url}/files/object.bin`]),
          verify: async (_context, result) =>
            expect(result.downloaded === size, `nginx sent ${result.downloaded} of ${size} bytes`),
        },
        copy: {
          serverPids: () => nginx.pids(),
          transfer: () => curl([`${nginx.url}/copy/object.bin`]),
          verify: async (_context, result) =>
            expect(result.downloaded === size, `nginx sent ${result.downloaded} of ${size} bytes`),
        },
      },
    });

    // The bytes the hub serves are the object's (the timed runs only count them).
    {
      const { actions } = await batch(lastHubRepo, "download");
      const response = await fetch(actions.download.href);
      if (!response.ok) throw new Error(`GET download href: ${response.status}`);
      const hash = createHash("sha256");
      for await (const chunk of response.body) hash.update(chunk);
      expect(hash.digest("hex") === oid, "the hub served bytes that do not hash to the object id");
    }

    const client = withClient
      ? await gitLfsClient({
          tmp,
          oid,
          size,
          token,
          gitUrl: hub.urls.git,
          hubPid: hub.pid,
          objectFile,
          storedObject,
          createRepo,
          watchHub,
        })
      : null;

    const end = readMemory(hub.pid);
    const results = { size, oid, upload, download, client, memory: { idle, end, transfers: hubMemory } };
    printSummary(results);
    printEndLoad();
    return results;

    async function scenario({ key, title, runs: count, warmup: warmups, paths }) {
      const measureOnce = async (name, p) => {
        const context = (await p.setup?.()) ?? {};
        // Write-back of earlier transfers happens now, untimed; the copy this path wrote last time goes
        // only then, so its page-cache pages are free again for this transfer (on VMs whose freed memory
        // returns to the host after a few seconds, first-touch pages would otherwise cap both servers).
        await run("sync", []);
        await p.beforeTransfer?.(context);
        const pids = p.serverPids();
        const cpu0 = cpuTicks(pids);
        const client0 = childTicks();
        const memory = name === "hub" ? watchHub(`${key} ${name}`) : null;
        let result;
        let seen;
        try {
          result = await p.transfer(context);
        } finally {
          seen = memory?.();
        }
        const server = (cpuTicks(pids) - cpu0) / TICKS;
        const client = (childTicks() - client0) / TICKS;
        expect(result.code >= 200 && result.code < 300, `${key} ${name}: HTTP ${result.code}`);
        await p.verify(context, result);
        return {
          seconds: result.seconds,
          mbps: size / result.seconds / 1e6,
          server,
          client,
          growthMiB: seen?.growthMiB,
          batchMs: context.batchMs,
          verifyMs: context.verifyMs,
        };
      };
      const samples = await interleave(paths, { runs: count, warmup: warmups }, measureOnce);
      const stats = Object.fromEntries(Object.entries(samples).map(([name, s]) => [name, summarize(s)]));
      const result = { key, title, runs: count, warmup: warmups, stats };
      printScenario(result);
      return result;
    }
  } finally {
    await workspace.close();
  }
}

/**
 * The git-lfs client, once each way: `git lfs push --object-id` into a just-created repository (the
 * object sits in the local LFS store as a hard link to the generated file), then a pointer commit on a
 * branch so that a fresh clone's `git lfs fetch` downloads it into its own LFS store.
 */
async function gitLfsClient({
  tmp,
  oid,
  size,
  token,
  gitUrl,
  hubPid,
  objectFile,
  storedObject,
  createRepo,
  watchHub,
}) {
  const env = {
    ...isolatedGitEnv(path.join(tmp, "home")),
    GIT_AUTHOR_NAME: "Bench",
    GIT_AUTHOR_EMAIL: "bench@example.com",
    GIT_COMMITTER_NAME: "Bench",
    GIT_COMMITTER_EMAIL: "bench@example.com",
  };
  const git = (args, cwd) => run("git", ["-c", "lfs.locksverify=false", ...args], { cwd, env });
  const remote = `${gitUrl.replace("://", `://x:${token}@`)}/bench/lfs-client.git`;
  const lfsVersion = (await run("git", ["lfs", "version"], { env })).stdout.trim();
  await createRepo("lfs-client");

  const timed = async (label, args, cwd, beforeTransfer) => {
    await run("sync", []);
    beforeTransfer?.();
    const cpu0 = cpuTicks([hubPid]);
    const done = watchHub(label);
    const start = performance.now();
    let seen;
    try {
      await git(args, cwd);
    } finally {
      seen = done();
    }
    const seconds = (performance.now() - start) / 1000;
    const server = (cpuTicks([hubPid]) - cpu0) / TICKS;
    return { seconds, mbps: size / seconds / 1e6, server, growthMiB: seen.growthMiB };
  };

  const pushDir = path.join(tmp, "client-push");
  await run("git", ["init", "--quiet", "--initial-branch=lfs", pushDir], { env });
  await git(["remote", "add", "origin", remote], pushDir);
  const local = path.join(pushDir, ".git", "lfs", "objects", oid.slice(0, 2), oid.slice(2, 4));
  mkdirSync(local, { recursive: true });
  linkSync(objectFile, path.join(local, oid));
  const push = await timed("git lfs push", ["lfs", "push", "--object-id", "origin", oid], pushDir, () =>
    rmSync(storedObject, { force: true }),
  );

  writeFileSync(
    path.join(pushDir, "object.bin"),
    `version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize ${size}\n`,
  );
  writeFileSync(path.join(pushDir, ".gitattributes"), "*.bin filter=lfs diff=lfs merge=lfs -text\n");
  await git(["add", "object.bin", ".gitattributes"], pushDir);
  await git(["commit", "--quiet", "-m", "Add the object"], pushDir);
  await git(["push", "--quiet", "origin", "lfs:refs/heads/lfs"], pushDir);
  rmSync(pushDir, { recursive: true, force: true });

  const fetchDir = path.join(tmp, "client-fetch");
  await run("git", ["clone", "--quiet", "--no-checkout", "--branch", "lfs", remote, fetchDir], { env });
  const fetched = await timed("git lfs fetch", ["lfs", "fetch", "origin", "lfs"], fetchDir);
  const copy = path.join(fetchDir, ".git", "lfs", "objects", oid.slice(0, 2), oid.slice(2, 4), oid);
  expect(existsSync(copy) && statSync(copy).size === size, "git lfs fetch did not store the whole object");
  rmSync(fetchDir, { recursive: true, force: true });
  return { version: lfsVersion, push, fetch: fetched };
}

// ---------------------------------------------------------------------------------------------------------
// Output.

const LABELS = {
  upload: { hub: "hub signed href (hash + store)", nginx: "nginx WebDAV PUT" },
  download: {
    hub: "hub signed href",
    accel: "hub behind nginx, X-Accel-Redirect",
    sendfile: "nginx static, sendfile on",
    copy: "nginx static, sendfile off",
  },
};

function printScenario({ key, title, runs, warmup, stats }) {
  printTable(
    scenarioTitle(title, runs, warmup),
    [
      "path",
      "median MB/s",
      "min MB/s",
      "max MB/s",
      "median s",
      "server CPU s",
      "client CPU s",
      "max hub RSS growth MiB",
    ],
    Object.entries(stats).map(([name, s]) => [
      LABELS[key][name],
      ...[s.mbps, s.min, s.max].map((mbps) => mbps.toFixed(0)),
      s.seconds.toFixed(3),
      s.server.toFixed(2),
      s.client.toFixed(2),
      s.growthMiB === undefined ? "-" : s.growthMiB.toFixed(1),
    ]),
  );
  const hub = stats.hub;
  const extra = [`batch ${hub.batchMs.toFixed(1)} ms`];
  if (hub.verifyMs !== undefined) extra.push(`verify ${hub.verifyMs.toFixed(1)} ms`);
  console.log(`hub requests around the transfer (medians, not in MB/s): ${extra.join(", ")}`);
  for (const [ours, reference, ratio] of ratios(key, stats)) {
    const target = TARGETS[key];
    console.log(
      `ratio ${LABELS[key][ours]}/${LABELS[key][reference]}: ${ratio.toFixed(2)} (medians); ` +
        `target >= ${target.toFixed(2)}: ${ratio >= target ? "met" : "MISSED"}`,
    );
  }
}

/**
 * The hub's figures over nginx's: the hub alone against every nginx path, and the hub behind nginx
 * (X-Accel-Redirect) against nginx's own sendfile, the same sending path.
 */
function ratios(key, stats) {
  const references = Object.keys(stats).filter((name) => name !== "hub" && name !== "accel");
  const pairs = references.map((reference) => ["hub", reference]);
  if (stats.accel && stats.sendfile) pairs.push(["accel", "sendfile"]);
  return pairs.map(([ours, reference]) => [ours, reference, stats[ours].mbps / stats[reference].mbps]);
}

function printSummary({ upload, download, client, memory }) {
  const rows = [];
  for (const s of [upload, download]) {
    for (const [ours, name, ratio] of ratios(s.key, s.stats)) {
      const target = TARGETS[s.key];
      rows.push([
        `${s.key}${ours === "hub" ? "" : ` (${LABELS[s.key][ours]})`} vs ${LABELS[s.key][name]}`,
        s.stats[ours].mbps.toFixed(0),
        s.stats[name].mbps.toFixed(0),
        ratio.toFixed(2),
        `>= ${target.toFixed(2)} ${ratio >= target ? "met" : "MISSED"}`,
      ]);
    }
  }
  printTable("Summary (medians)", ["direction", "hub MB/s", "nginx MB/s", "hub/nginx", "target"], rows);
  if (client) {
    console.log(
      `${client.version}, once each (context, not a target; whole commands, batch request included): ` +
        `git lfs push ${client.push.mbps.toFixed(0)} MB/s (${client.push.seconds.toFixed(2)} s, ` +
        `hub CPU ${client.push.server.toFixed(2)} s), git lfs fetch ${client.fetch.mbps.toFixed(0)} MB/s ` +
        `(${client.fetch.seconds.toFixed(2)} s, hub CPU ${client.fetch.server.toFixed(2)} s)`,
    );
  }
  const worst = memory.transfers.reduce((a, b) => (b.growthMiB > a.growthMiB ? b : a));
  const peak = Math.max(...memory.transfers.map((t) => t.peakMiB));
  const method = memory.transfers.every((t) => t.hwmReset)
    ? "VmHWM reset before each transfer, and VmRSS every 50 ms"
    : "VmRSS every 50 ms (VmHWM could not be reset)";
  const verdict = worst.growthMiB < RSS_TARGET_MIB ? "met" : "MISSED";
  console.log(
    `hub RSS over ${memory.transfers.length} transfers of the object ` +
      `(warm-ups${client ? " and git-lfs" : ""} included; ${method}): ` +
      `idle before any ${memory.idle.rssMiB.toFixed(1)} MiB, highest peak ${peak.toFixed(1)} MiB ` +
      `(${(peak - memory.idle.rssMiB).toFixed(1)} MiB over idle), largest growth within one transfer ` +
      `${worst.growthMiB.toFixed(1)} MiB (${worst.label}); target < ${RSS_TARGET_MIB} MiB: ${verdict}; ` +
      `VmHWM before any transfer (start-up) ${memory.idle.hwmMiB.toFixed(1)} MiB, ` +
      `RSS at the end ${memory.end.rssMiB.toFixed(1)} MiB`,
  );
}

function summarize(samples) {
  const pick = (field) => samples.map((s) => s[field]).filter((v) => v !== undefined);
  const maybe = (field) => (pick(field).length ? median(pick(field)) : undefined);
  const mbps = pick("mbps");
  return {
    samples: mbps,
    mbps: median(mbps),
    min: Math.min(...mbps),
    max: Math.max(...mbps),
    seconds: median(pick("seconds")),
    server: median(pick("server")),
    client: median(pick("client")),
    growthMiB: pick("growthMiB").length ? Math.max(...pick("growthMiB")) : undefined,
    batchMs: maybe("batchMs"),
    verifyMs: maybe("verifyMs"),
  };
}

// ---------------------------------------------------------------------------------------------------------
// The object.

// ---------------------------------------------------------------------------------------------------------
// nginx.

/**
 * nginx (see startNginx): `/files/` serves the object with sendfile, `/copy/` the same file through
 * userspace buffers (sendfile off, the default output_buffers), `/upload/` takes WebDAV PUTs (the body goes
 * to a temporary file in the same file system, renamed into place when whole). Each process is added to
 * `processes` as soon as it starts, so the caller can stop them whatever happens.
 */
async function startFileServer(dir, processes, { nginxBin, www, port, hubGitPort, hubLfsDir }) {
  const nginx = await startNginx(dir, processes, {
    nginxBin,
    port,
    http: "default_type application/octet-stream;",
    server: `    location /files/ {
      root ${www};
      sendfile on;
    }
    location /copy/ {
      alias ${www}/files/;
      sendfile off;
    }
    location /upload/ {
      root ${www};
      dav_methods PUT;
      client_body_temp_path ${dir}/body;
    }
    location /hub/ {
      proxy_pass http://127.0.0.1:${hubGitPort}/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-Sendfile-Type X-Accel-Redirect;
      proxy_buffering off;
    }
    location /_hub_lfs/ {
      internal;
      alias ${hubLfsDir}/;
      sendfile on;
    }`,
  });
  return { url: nginx.url, pids: () => descendants([nginx.pid]) };
}

/** Stops a server from startServer, killing it if it has not ended after `ms`. */
async function stopWithin(server, ms) {
  const stopped = server.stop();
  const timedOut = await Promise.race([stopped.then(() => false), sleep(ms).then(() => true)]);
  if (timedOut) {
    try {
      process.kill(server.pid, "SIGKILL");
    } catch {
      // already gone
    }
    await stopped;
  }
}

// ---------------------------------------------------------------------------------------------------------
// CPU time, memory and checks.

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

/** The CPU ticks the long-lived server processes `pids` have used so far. */
function cpuTicks(pids) {
  return pids.reduce((sum, pid) => sum + (readStat(pid)?.own ?? 0), 0);
}

/** A process's resident set now and its high-water mark, in MiB. */
function readMemory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field) => Number(new RegExp(`^${field}:\\s*(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { rssMiB: kib("VmRSS") / 1024, hwmMiB: kib("VmHWM") / 1024 };
}

/**
 * Watches a process's resident memory from now until `stop()`: VmRSS every `intervalMs`, and VmHWM after
 * resetting it (writing 5 to /proc/<pid>/clear_refs, Linux 4.0+, for our own children) so it covers only
 * this window. `stop()` returns the RSS before, the peak, and the growth in MiB.
 */
function memoryWatch(pid, intervalMs = 50) {
  const before = readMemory(pid).rssMiB;
  let hwmReset = false;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    hwmReset = true;
  } catch {
    // not allowed here: sampling alone
  }
  let peak = before;
  const sample = () => {
    try {
      peak = Math.max(peak, readMemory(pid).rssMiB);
    } catch {
      // the process ended; the caller will notice
    }
  };
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      if (hwmReset) peak = Math.max(peak, readMemory(pid).hwmMiB);
      return { beforeMiB: before, peakMiB: peak, growthMiB: peak - before, hwmReset };
    },
  };
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      // Read by lib.mjs: profile the hubs this run serves from.
      profile: { type: "boolean" },
      runs: { type: "string" },
      warmup: { type: "string" },
      "size-mib": { type: "string" },
      seed: { type: "string" },
      "no-git-lfs": { type: "boolean" },
    },
  });
  const options = {};
  if (values.runs) options.runs = wholeNumber("runs", values.runs);
  if (values.warmup !== undefined) options.warmup = wholeNumber("warmup", values.warmup, 0);
  if (values["size-mib"]) options.sizeMiB = wholeNumber("size-mib", values["size-mib"]);
  if (values.seed) options.seed = wholeNumber("seed", values.seed);
  if (values["no-git-lfs"]) options.gitLfs = false;
  await benchLfs(options);
}
