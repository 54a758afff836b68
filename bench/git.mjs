// git over HTTP through a real hub, against git's own http-backend behind nginx + fcgiwrap and against a
// `git clone --no-local file://`, in one run: full bare clone (protocol v2), incremental fetch of the last
// commits, and full push of a generated repository into a just-created one.
//
// The repository is generated with `git fast-import` from a fixed seed, so every run measures the same
// objects; its default shape is the "M" of the reference measurements (../shared/reference/git-anchors.md
// section 4): 5,000 text files of 1-8 KB, 1,000 commits touching 20 files each, 10 random 2 MB blobs.
//
// Both servers hold their repositories with the hub's repository configuration (receive.fsckObjects,
// uploadpack.allowFilter, core.logAllRefUpdates) and start from one initial commit on main, so the two
// differ only in what sits between git and the socket: the hub (Node, authentication, the pre-receive push
// policy) or nginx + fcgiwrap + git-http-backend (no authentication, `http.receivepack true`). Paths are
// interleaved run by run, after warm-ups, so drift on a busy machine spreads over all of them.
//
// Needs Linux, git, nginx and fcgiwrap (`apt-get install -y nginx fcgiwrap`), and a built hub
// (`npm run build`).
// `node bench/git.mjs [--runs 7] [--fetch-runs 15] [--seed 1]`; about a minute and a half on 2 vCPUs.
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { clearInterval, setInterval } from "node:timers";
import { parseArgs } from "node:util";
import { benchToken, benchWorkspace, hubd, isolatedGitEnv, run, startServer, track } from "./lib.mjs";
import { findProgram, freePorts, startNginx, stopGroups, version, waitFor } from "./lib.mjs";
import { childTicks, descendants, readStat, TICKS } from "./lib.mjs";
import { interleave, median, printEndLoad, printTable, scenarioTitle } from "./lib.mjs";
import { isMain, seededKeystream, wholeNumber } from "./lib.mjs";

const { fetch } = globalThis;
const MiB = 1024 * 1024;
/** Most the hub's median may take over git http-backend's, each operation (issue 19: "stay within 1.05x"). */
const TARGET = 1.05;

/**
 * Runs the git benchmark and prints one table per scenario with the hub/http-backend ratio (and hub/file
 * for clones); resolves with every sample and ratio. Each scenario runs `warmup` untimed rounds, then
 * `runs` timed rounds (`fetchRuns` for the short fetch), every path once per round.
 */
export async function benchGit({
  runs = 7,
  warmup = 1,
  fetchRuns = 15,
  seed = 1,
  files = 5000,
  commits = 1000,
  filesPerCommit = 20,
  bigBlobs = 10,
  bigBlobBytes = 2 * MiB,
  fetchCommits = 10,
} = {}) {
  const nginxBin = findProgram("nginx");
  const fcgiwrapBin = findProgram("fcgiwrap");
  const httpBackend = path.join(execFileSync("git", ["--exec-path"]).toString().trim(), "git-http-backend");
  if (!nginxBin || !fcgiwrapBin || !existsSync(httpBackend)) {
    throw new Error(
      "bench/git.mjs needs nginx, fcgiwrap and git-http-backend: apt-get install -y nginx fcgiwrap git",
    );
  }

  const workspace = benchWorkspace("hub-bench-git-");
  const { tmp } = workspace;
  try {
    const work = path.join(tmp, "work");
    mkdirSync(work);
    const clientEnv = isolatedGitEnv(path.join(tmp, "home"));
    const git = (args, cwd = work) => run("git", args, { cwd, env: clientEnv });

    // The repository under test.
    const source = path.join(tmp, "source.git");
    const started = performance.now();
    await generateRepository(source, clientEnv, {
      seed,
      files,
      commits,
      filesPerCommit,
      bigBlobs,
      bigBlobBytes,
      fetchCommits,
    });
    const mainSha = (await git(["rev-parse", "refs/heads/main"], source)).stdout.trim();
    const baseSha = (await git(["rev-parse", "refs/heads/base"], source)).stdout.trim();
    const objectCount = (await git(["rev-list", "--objects", "--all"], source)).stdout.split("\n").length - 1;
    const packBytes = readdirSync(path.join(source, "objects/pack"))
      .filter((name) => name.endsWith(".pack"))
      .reduce((sum, name) => sum + fileSize(path.join(source, "objects/pack", name)), 0);
    const repoSummary = {
      commits,
      files,
      bigBlobs,
      objects: objectCount,
      packMiB: packBytes / MiB,
      generateSeconds: (performance.now() - started) / 1000,
    };
    const nginxVersion = version(nginxBin, ["-v"]).replace(/^nginx version: /, "");
    console.log(
      `\nGit over HTTP: hub vs ${nginxVersion} + fcgiwrap + git-http-backend vs file://; ` +
        `${version("git", ["--version"])}, Node ${process.version}, ${os.cpus().length} CPUs, ` +
        `load average ${os.loadavg()[0].toFixed(2)}`,
    );
    console.log(
      `Generated (seed ${seed}): ${files} text files of 1-8 KB, ${commits} commits touching ${filesPerCommit} files each, ` +
        `${bigBlobs} x ${(bigBlobBytes / MiB).toFixed(0)} MB random blobs: ${objectCount} objects, ` +
        `${repoSummary.packMiB.toFixed(1)} MiB pack (${repoSummary.generateSeconds.toFixed(1)} s)`,
    );
    console.log(
      "Server CPU: the server's process tree sampled every 10 ms (processes shorter than that are missed); " +
        "client CPU: the git client and what it ran (for file://, the upload-pack too).",
    );

    // (a) The hub, with a write token and a public repository holding the generated history.
    const dataDir = path.join(tmp, "hub-data");
    const hubEnv = {
      PATH: process.env.PATH,
      HUB_DATA_DIR: dataDir,
      HUB_PORT: "0",
      HUB_GIT_PORT: "0",
      HUB_RATE_LIMIT: "1000000000",
      HUB_MAX_GIT_BLOB_BYTES: String(2 ** 40),
      HUB_LOG_LEVEL: process.env.HUB_LOG_LEVEL ?? "info",
    };
    const token = await benchToken(hubEnv, "write");
    const hub = await startServer(hubd, ["serve", "--only", "hub,git"], hubEnv, { surfaces: ["hub", "git"] });
    workspace.onCleanup(() => hub.stop());
    const hubApi = async (method, route, body) => {
      const response = await fetch(`${hub.urls.hub}${route}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`);
      return response.status === 204 ? null : response.json();
    };
    const hubRepo = async (name) => {
      const created = await hubApi("POST", "/api/repos", { repo_id: `bench/${name}`, private: false });
      return path.join(dataDir, "repositories", created._id.slice(0, 2), `${created._id}.git`);
    };
    const gitUrl = new URL(hub.urls.git);
    const hubPushUrl = (name) => `http://x:${token}@${gitUrl.host}/bench/${name}`;

    // (b) nginx + fcgiwrap + git-http-backend on loopback, with repositories set up like the hub's.
    const projectRoot = path.join(tmp, "backend-repos");
    mkdirSync(projectRoot);
    const backendProcesses = [];
    workspace.onCleanup(() => stopGroups(backendProcesses));
    const backend = await startHttpBackend(path.join(tmp, "nginx"), backendProcesses, {
      nginxBin,
      fcgiwrapBin,
      httpBackend,
      projectRoot,
      port: (await freePorts(1, 19000, 19099))[0],
    });
    const backendRepo = async (name) => {
      const dir = path.join(projectRoot, `${name}.git`);
      await initLikeTheHub(dir, clientEnv);
      await git(["config", "http.receivepack", "true"], dir);
      return dir;
    };

    // The repository every clone and fetch reads, pushed once into each server.
    const hubMain = await hubRepo("m");
    await git(["push", "--force", "--quiet", hubPushUrl("m"), "main:refs/heads/main"], source);
    const backendMain = await backendRepo("m");
    await git(["push", "--force", "--quiet", `${backend.url}/m.git`, "main:refs/heads/main"], source);
    for (const dir of [hubMain, backendMain]) await expectRef(git, dir, "refs/heads/main", mainSha);

    // The client state a fetch starts from: a clone of main~fetchCommits, holding none of the newer objects.
    const fetchTemplate = path.join(tmp, "fetch-template.git");
    await git([
      "clone",
      "--bare",
      "--quiet",
      "--no-local",
      "--single-branch",
      "--branch",
      "base",
      `file://${source}`,
      fetchTemplate,
    ]);
    await expectRef(git, fetchTemplate, "refs/heads/base", baseSha);

    let serial = 0;
    const scratch = (label) => path.join(work, `${label}-${++serial}.git`);
    const v2 = ["-c", "protocol.version=2"];

    const cloneFrom = (url, serverPids) => ({
      serverPids,
      setup: async () => ({ dest: scratch("clone") }),
      args: ({ dest }) => [...v2, "clone", "--bare", "--quiet", "--no-local", url, dest],
      cwd: () => work,
      verify: ({ dest }) => expectRef(git, dest, "refs/heads/main", mainSha),
      teardown: ({ dest }) => rmSync(dest, { recursive: true, force: true }),
    });
    const fetchFrom = (url, serverPids) => ({
      serverPids,
      setup: async () => {
        const dest = scratch("fetch");
        await git(["clone", "--bare", "--quiet", "--local", fetchTemplate, dest]);
        return { dest };
      },
      args: () => [...v2, "fetch", "--quiet", "--no-tags", url, "+refs/heads/main:refs/heads/main"],
      cwd: ({ dest }) => dest,
      verify: ({ dest }) => expectRef(git, dest, "refs/heads/main", mainSha),
      teardown: ({ dest }) => rmSync(dest, { recursive: true, force: true }),
    });

    const clone = await scenario({
      key: "clone",
      title: `git clone --bare (protocol v2) of the whole repository`,
      runs,
      warmup,
      paths: {
        hub: cloneFrom(`${hub.urls.git}/bench/m`, [hub.pid]),
        backend: cloneFrom(`${backend.url}/m.git`, backend.pids),
        file: cloneFrom(`file://${backendMain}`, []),
      },
    });

    const fetched = await scenario({
      key: "fetch",
      title: `git fetch of the last ${fetchCommits} commits into a clone of main~${fetchCommits} (protocol v2)`,
      runs: fetchRuns,
      warmup,
      paths: {
        hub: fetchFrom(`${hub.urls.git}/bench/m`, [hub.pid]),
        backend: fetchFrom(`${backend.url}/m.git`, backend.pids),
      },
    });

    const pushed = await scenario({
      key: "push",
      title: `git push --force of the whole history into a just-created repository`,
      runs,
      warmup,
      paths: {
        hub: {
          serverPids: [hub.pid],
          setup: async () => {
            const name = `push-${++serial}`;
            return { name, dir: await hubRepo(name) };
          },
          args: ({ name }) => [...v2, "push", "--force", "--quiet", hubPushUrl(name), "main:refs/heads/main"],
          cwd: () => source,
          verify: ({ dir }) => expectRef(git, dir, "refs/heads/main", mainSha),
          teardown: ({ name }) => hubApi("DELETE", "/api/repos/delete", { name }),
        },
        backend: {
          serverPids: backend.pids,
          setup: async () => {
            const name = `push-${++serial}`;
            return { name, dir: await backendRepo(name) };
          },
          args: ({ name }) => [
            ...v2,
            "push",
            "--force",
            "--quiet",
            `${backend.url}/${name}.git`,
            "main:refs/heads/main",
          ],
          cwd: () => source,
          verify: ({ dir }) => expectRef(git, dir, "refs/heads/main", mainSha),
          teardown: ({ dir }) => rmSync(dir, { recursive: true, force: true }),
        },
      },
    });

    const results = { repo: repoSummary, scenarios: { clone, fetch: fetched, push: pushed } };
    printSummary(results.scenarios);
    printEndLoad();
    return results;

    async function scenario({ key, title, runs: count, warmup: warmups, paths }) {
      const measureOnce = async (name, p) => {
        const context = await p.setup();
        try {
          const sampler = cpuSampler(p.serverPids);
          const client0 = childTicks();
          const t0 = performance.now();
          let wall;
          let server;
          try {
            await run("git", p.args(context), { cwd: p.cwd(context), env: clientEnv });
            wall = (performance.now() - t0) / 1000;
          } finally {
            server = sampler.stop();
          }
          const client = (childTicks() - client0) / TICKS;
          await p.verify(context);
          return { wall, client, server };
        } finally {
          await p.teardown(context);
        }
      };
      const samples = await interleave(paths, { runs: count, warmup: warmups }, measureOnce);
      const stats = Object.fromEntries(Object.entries(samples).map(([name, s]) => [name, summarize(s)]));
      const ratio = (a, b) =>
        stats[a] && stats[b]
          ? { median: stats[a].median / stats[b].median, mean: stats[a].mean / stats[b].mean }
          : null;
      const result = {
        key,
        title,
        runs: count,
        warmup: warmups,
        stats,
        hubVsBackend: ratio("hub", "backend"),
        hubVsFile: ratio("hub", "file"),
      };
      printScenario(result);
      return result;
    }
  } finally {
    await workspace.close();
  }
}

const LABELS = {
  hub: "hub git listener",
  backend: "nginx + fcgiwrap + git-http-backend",
  file: "git clone --no-local file://",
};

function printScenario({ title, runs, warmup, stats, hubVsBackend, hubVsFile }) {
  printTable(
    scenarioTitle(title, runs, warmup),
    ["path", "median s", "mean s", "min s", "max s", "server CPU s", "client CPU s"],
    Object.entries(stats).map(([name, s]) => [
      LABELS[name],
      ...[s.median, s.mean, s.min, s.max].map((seconds) => seconds.toFixed(3)),
      name === "file" ? "(in client)" : s.server.toFixed(2),
      s.client.toFixed(2),
    ]),
  );
  if (hubVsBackend) {
    console.log(
      `ratio hub/http-backend: ${hubVsBackend.median.toFixed(2)} (median), ${hubVsBackend.mean.toFixed(2)} (mean); ` +
        `target <= ${TARGET.toFixed(2)}: ${hubVsBackend.median <= TARGET ? "met" : "MISSED"}`,
    );
  }
  if (hubVsFile) {
    console.log(
      `ratio hub/file: ${hubVsFile.median.toFixed(2)} (median), ${hubVsFile.mean.toFixed(2)} (mean)`,
    );
  }
}

function printSummary(scenarios) {
  printTable(
    "Summary (medians)",
    ["scenario", "hub s", "http-backend s", "file s", "hub/http-backend", "hub/file", "target"],
    Object.values(scenarios).map((s) => [
      s.key,
      s.stats.hub.median.toFixed(3),
      s.stats.backend.median.toFixed(3),
      s.stats.file ? s.stats.file.median.toFixed(3) : "-",
      s.hubVsBackend.median.toFixed(2),
      s.hubVsFile ? s.hubVsFile.median.toFixed(2) : "-",
      `<= ${TARGET.toFixed(2)} ${s.hubVsBackend.median <= TARGET ? "met" : "MISSED"}`,
    ]),
  );
}

function summarize(samples) {
  const walls = samples.map((s) => s.wall);
  return {
    samples: walls,
    median: median(walls),
    mean: walls.reduce((a, b) => a + b, 0) / walls.length,
    min: Math.min(...walls),
    max: Math.max(...walls),
    server: median(samples.map((s) => s.server)),
    client: median(samples.map((s) => s.client)),
  };
}

// ---------------------------------------------------------------------------------------------------------
// The generated repository.

/** A small seeded generator (xorshift128), so the repository is the same on every machine and run. */
function prng(seed) {
  let a = (seed >>> 0) ^ 0x6d2b79f5;
  let b = 0x9e3779b9;
  let c = 0x243f6a88;
  let d = 0xb7e15162;
  const next = () => {
    const t = (a ^ (a << 11)) >>> 0;
    a = b;
    b = c;
    c = d;
    d = (d ^ (d >>> 19) ^ (t ^ (t >>> 8))) >>> 0;
    return d;
  };
  for (let i = 0; i < 32; i++) next();
  return { int: (n) => next() % n };
}

/** Seeded random bytes, for blobs that neither compress nor delta. */
function randomBytesFrom(seed, label, length) {
  return seededKeystream(seed, label).update(Buffer.alloc(length));
}

/**
 * Writes the repository with `git fast-import`: one commit adding every text file, then commits that each
 * edit a few lines in `filesPerCommit` files; the big random blobs arrive in commits spread over the
 * history. `refs/heads/base` is `main~fetchCommits`, the state a fetch starts from. Then a full repack,
 * as a repository that has lived for a while would be.
 */
async function generateRepository(
  dir,
  env,
  { seed, files, commits, filesPerCommit, bigBlobs, bigBlobBytes, fetchCommits },
) {
  await run("git", ["init", "--bare", "--quiet", "--initial-branch=main", dir], { env });
  const random = prng(seed);
  const syllables = [
    "ka",
    "lo",
    "mi",
    "ren",
    "tas",
    "vo",
    "qui",
    "zen",
    "dra",
    "pel",
    "sun",
    "or",
    "ex",
    "ti",
  ];
  const words = Array.from({ length: 800 }, () => {
    let word = "";
    for (let n = 1 + random.int(4); n > 0; n--) word += syllables[random.int(syllables.length)];
    return word;
  });
  const line = () => {
    const n = 3 + random.int(12);
    const out = [];
    for (let i = 0; i < n; i++) out.push(words[random.int(words.length)]);
    return out.join(" ");
  };
  const paths = Array.from(
    { length: files },
    (_, i) => `src/d${String(Math.floor(i / 50)).padStart(3, "0")}/f${String(i).padStart(5, "0")}.txt`,
  );
  const contents = paths.map(() => {
    const target = 1024 + random.int(7 * 1024);
    const lines = [];
    let size = 0;
    while (size < target) {
      const text = line();
      lines.push(text);
      size += text.length + 1;
    }
    return lines;
  });
  const edit = (lines) => {
    for (let n = 1 + random.int(4); n > 0; n--) {
      const at = random.int(lines.length);
      const op = random.int(3);
      if (op === 0 || (op === 2 && lines.length < 16)) lines[at] = line();
      else if (op === 1) lines.splice(at, 0, line());
      else lines.splice(at, 1);
    }
  };
  const bigAt = new Map(
    Array.from({ length: bigBlobs }, (_, k) => [
      Math.round(((k + 1) * (commits - fetchCommits)) / (bigBlobs + 1)),
      k,
    ]),
  );

  const child = spawn("git", ["fast-import", "--quiet", "--done"], {
    cwd: dir,
    env,
    stdio: ["pipe", "ignore", "pipe"],
  });
  const stderr = [];
  child.stderr.on("data", (chunk) => stderr.push(chunk));
  track(child);
  child.stdin.on("error", () => {});
  const closed = new Promise((resolve) => child.once("close", resolve));
  const write = async (data) => {
    if (!child.stdin.write(data)) await Promise.race([once(child.stdin, "drain"), closed]);
  };
  const fileData = (name, body) => `M 100644 inline ${name}\ndata ${Buffer.byteLength(body)}\n${body}\n`;

  for (let i = 0; i < commits; i++) {
    const when = 1_700_000_000 + i * 600;
    const touched = new Set();
    if (i === 0) paths.forEach((_, index) => touched.add(index));
    else while (touched.size < Math.min(filesPerCommit, files)) touched.add(random.int(files));
    const message = i === 0 ? "Add the sources\n" : `Update ${touched.size} files (${i})\n`;
    let chunk =
      `commit refs/heads/main\n` +
      `author Bench <bench@example.com> ${when} +0000\n` +
      `committer Bench <bench@example.com> ${when} +0000\n` +
      `data ${Buffer.byteLength(message)}\n${message}`;
    for (const index of touched) {
      if (i > 0) edit(contents[index]);
      chunk += fileData(paths[index], `${contents[index].join("\n")}\n`);
    }
    await write(chunk);
    const big = bigAt.get(i);
    if (big !== undefined) {
      await write(`M 100644 inline weights/shard-${big}.bin\ndata ${bigBlobBytes}\n`);
      await write(randomBytesFrom(seed, `shard-${big}`, bigBlobBytes));
      await write("\n");
    }
    await write("\n");
  }
  await write("done\n");
  child.stdin.end();
  const code = await closed;
  if (code !== 0) throw new Error(`git fast-import failed (${code}): ${Buffer.concat(stderr).toString()}`);
  await run("git", ["update-ref", "refs/heads/base", `refs/heads/main~${fetchCommits}`], { cwd: dir, env });
  await run("git", ["repack", "-a", "-d", "-f", "-q"], { cwd: dir, env });
}

// ---------------------------------------------------------------------------------------------------------
// The reference server and the repositories on it.

/** A bare repository like the hub creates one: its configuration and one initial commit on main. */
async function initLikeTheHub(dir, env) {
  const git = (args, input) => run("git", args, { cwd: dir, env, input });
  await run("git", ["init", "--bare", "--quiet", "--initial-branch=main", dir], { env });
  await git(["config", "receive.fsckObjects", "true"]);
  await git(["config", "uploadpack.allowFilter", "true"]);
  await git(["config", "core.logAllRefUpdates", "true"]);
  const blob = (
    await git(["hash-object", "-w", "--stdin"], "*.bin filter=lfs diff=lfs merge=lfs -text\n")
  ).stdout.trim();
  const tree = (await git(["mktree"], `100644 blob ${blob}\t.gitattributes\n`)).stdout.trim();
  const commit = (
    await run("git", ["commit-tree", tree, "-m", "Initial commit"], {
      cwd: dir,
      env: {
        ...env,
        GIT_AUTHOR_NAME: "Hub",
        GIT_AUTHOR_EMAIL: "hub@localhost",
        GIT_COMMITTER_NAME: "Hub",
        GIT_COMMITTER_EMAIL: "hub@localhost",
      },
    })
  ).stdout.trim();
  await git(["update-ref", "refs/heads/main", commit]);
}

/**
 * nginx (see startNginx) passing every request to git-http-backend through fcgiwrap on a unix socket, with
 * buffering off both ways as a streaming deployment would have it. Each process is added to `processes` as
 * soon as it starts, so the caller can stop them whatever happens.
 */
async function startHttpBackend(dir, processes, { nginxBin, fcgiwrapBin, httpBackend, projectRoot, port }) {
  mkdirSync(path.join(dir, "logs"), { recursive: true });
  const socket = path.join(dir, "fcgiwrap.sock");
  const fcgiLog = openSync(path.join(dir, "logs/fcgiwrap.log"), "a");
  // One fcgiwrap process is enough for git's one request at a time, and leaves no orphaned workers.
  const fcgiwrap = spawn(fcgiwrapBin, ["-s", `unix:${socket}`], {
    env: { PATH: process.env.PATH },
    stdio: ["ignore", fcgiLog, fcgiLog],
    detached: true,
  });
  closeSync(fcgiLog);
  processes.push(fcgiwrap);
  await waitFor(() => existsSync(socket), fcgiwrap, "fcgiwrap");

  const nginx = await startNginx(dir, processes, {
    nginxBin,
    port,
    server: `    location / {
      fastcgi_pass unix:${socket};
      fastcgi_buffering off;
      fastcgi_request_buffering off;
      fastcgi_read_timeout 600s;
      fastcgi_param SCRIPT_FILENAME ${httpBackend};
      fastcgi_param GIT_PROJECT_ROOT ${projectRoot};
      fastcgi_param GIT_HTTP_EXPORT_ALL "";
      fastcgi_param GIT_PROTOCOL $http_git_protocol;
      fastcgi_param GIT_CONFIG_NOSYSTEM 1;
      fastcgi_param PATH /usr/local/bin:/usr/bin:/bin;
      fastcgi_param PATH_INFO $uri;
      fastcgi_param QUERY_STRING $query_string;
      fastcgi_param REQUEST_METHOD $request_method;
      fastcgi_param CONTENT_TYPE $content_type;
      fastcgi_param CONTENT_LENGTH $content_length;
      fastcgi_param REMOTE_ADDR $remote_addr;
      fastcgi_param SERVER_PROTOCOL $server_protocol;
    }`,
  });
  return { url: nginx.url, pids: [nginx.pid, fcgiwrap.pid] };
}

// ---------------------------------------------------------------------------------------------------------
// CPU time and checks.

async function expectRef(git, dir, ref, sha) {
  const actual = (await git(["rev-parse", "--verify", "--quiet", ref], dir)).stdout.trim();
  if (actual !== sha) throw new Error(`${dir}: ${ref} is ${actual || "missing"}, expected ${sha}`);
}

function fileSize(file) {
  return statSync(file).size;
}

/**
 * Approximate server-side CPU seconds of the process trees under `roots` while a command runs. fcgiwrap
 * ignores SIGCHLD, so the CPU of git-http-backend and its git children never reaches anyone's cutime;
 * instead the trees are sampled every few milliseconds and each process that came and went is counted
 * with its own CPU time as last seen (processes shorter than one interval are missed on both sides). The
 * long-lived processes (hub, nginx master and workers, fcgiwrap) count with their own CPU time's growth.
 */
function cpuSampler(roots, intervalMs = 10) {
  const baseline = new Map();
  for (const pid of descendants(roots)) {
    const stat = readStat(pid);
    if (stat) baseline.set(pid, { ...stat, last: stat.own });
  }
  const transient = new Map();
  const sample = () => {
    for (const pid of descendants(roots)) {
      const stat = readStat(pid);
      if (!stat) continue;
      const known = baseline.get(pid);
      if (known && known.start === stat.start) known.last = stat.own;
      else transient.set(`${pid}:${stat.start}`, stat.own);
    }
  };
  const timer = roots.length ? setInterval(sample, intervalMs) : null;
  let stopped = false;
  return {
    /** Stops sampling and returns the CPU seconds seen. */
    stop() {
      if (!timer) return 0;
      if (!stopped) {
        stopped = true;
        clearInterval(timer);
        sample();
      }
      let ticks = 0;
      for (const known of baseline.values()) ticks += known.last - known.own;
      for (const own of transient.values()) ticks += own;
      return ticks / TICKS;
    },
  };
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      // Read by lib.mjs: profile the hubs this run serves from.
      profile: { type: "boolean" },
      runs: { type: "string" },
      "fetch-runs": { type: "string" },
      seed: { type: "string" },
    },
  });
  const options = {};
  if (values.runs) options.runs = wholeNumber("runs", values.runs);
  if (values["fetch-runs"]) options.fetchRuns = wholeNumber("fetch-runs", values["fetch-runs"]);
  if (values.seed) options.seed = wholeNumber("seed", values.seed);
  await benchGit(options);
}
