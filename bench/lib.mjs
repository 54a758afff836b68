// Shared helpers for the benchmarks: start processes, wait for their URL, load them with wrk (load.mjs); and,
// for the git and LFS benchmarks, everything they both need around the hub and their reference servers
// (processes, nginx, CPU accounting, clean-up, interleaved runs, markdown tables), written once here.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createCipheriv, createHash } from "node:crypto";
import { once } from "node:events";
import { accessSync, constants, mkdirSync, mkdtempSync, openSync, closeSync } from "node:fs";
import { readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { printProfile, profileArgs, profiling } from "./profile.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
/** The built hub's command line, which the git and LFS benchmarks start and set up accounts with. */
export const hubd = path.join(here, "../packages/server/dist/bin/hubd.js");

/**
 * Spawns a node script and resolves with its URL once it logs a JSON line `{msg:"listening", url}`.
 * With `surfaces` (like `["hub", "git"]`), it waits instead for a `listening` line naming each of those
 * surfaces; `urls` maps every surface seen to its URL and `pid` is the server's process id.
 * `nodeArgs` go to node before the script (flags NODE_OPTIONS refuses, like `--cpu-prof`). With `--profile`
 * on the benchmark's command line, a hub started here is CPU-profiled and its summary printed when it stops.
 * `onOutput`, when given, sees the server's stdout after it listens (to read its log), raw chunks unparsed.
 */
export function startServer(script, args, env, { surfaces, nodeArgs = [], onOutput } = {}) {
  const profile = profiling && script === hubd ? profileArgs() : null;
  const child = spawn(process.execPath, [...(profile?.nodeArgs ?? []), ...nodeArgs, script, ...args], {
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let buffered = "";
    let first;
    const urls = {};
    child.stdout.on("data", (chunk) => {
      buffered += chunk.toString();
      for (const line of buffered.split("\n")) {
        try {
          const entry = JSON.parse(line);
          if (entry.msg !== "listening") continue;
          first ??= entry.url;
          if (typeof entry.surface === "string") urls[entry.surface] = entry.url;
          if (!surfaces || surfaces.every((surface) => urls[surface])) {
            // From here on the output is only drained, never parsed: a server that logs every request
            // would otherwise cost the load generator, in this process, a JSON.parse per request.
            child.stdout.removeAllListeners("data");
            if (onOutput) child.stdout.on("data", onOutput);
            child.stdout.resume();
            const stopped = async () => {
              await stop(child);
              if (profile) printProfile(profile.dir, `hubd ${args.join(" ")}`);
            };
            resolve({ url: first, urls, pid: child.pid, stop: stopped });
            return;
          }
        } catch {
          // not a JSON line yet
        }
      }
      buffered = buffered.slice(buffered.lastIndexOf("\n") + 1);
    });
    child.once("exit", (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", resolve);
    child.kill("SIGTERM");
  });
}

export { load, loadSplit } from "./load.mjs";

/** The `q` quantile (0..1) of ascending `sorted` values, nearest rank. */
export function percentile(sorted, q) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

export function printComparison(title, rows, ratio, target) {
  printTable(
    title,
    ["path", "requests/s", "p50 ms", "p99 ms"],
    rows.map(([name, r]) => [name, r.rps.toFixed(0), r.p50.toFixed(2), r.p99.toFixed(2)]),
  );
  console.log(`ratio: ${ratio.toFixed(2)} (target ${target})`);
}

// ---------------------------------------------------------------------------------------------------------
// Output.

/**
 * Prints a blank line, `title`, then a markdown table (every benchmark reports this way, so its figures
 * paste into the docs as they are).
 */
export function printTable(title, headers, rows) {
  console.log(`\n${title}`);
  console.log(`| ${headers.join(" | ")} |`);
  console.log(`|${headers.map(() => "---").join("|")}|`);
  for (const row of rows) console.log(`| ${row.join(" | ")} |`);
}

/** The title of an interleaved scenario's table: what it measures, how many runs, how many warm-ups. */
export function scenarioTitle(title, runs, warmup) {
  return `${title}: ${runs} runs after ${warmup} warm-up${warmup === 1 ? "" : "s"}, interleaved`;
}

/** The last line of a benchmark: the load average, which says how far to trust the spread. */
export function printEndLoad() {
  console.log(`load average at the end: ${os.loadavg()[0].toFixed(2)} (a busy machine widens the spread)`);
}

// ---------------------------------------------------------------------------------------------------------
// Runs, statistics and options (git and LFS benchmarks).

/**
 * Measures every one of `paths` (an object, by name) `warmup` times untimed, then `runs` times, one round
 * at a time and each round in a rotated order, so no path always runs first (or right after the same
 * neighbour) and drift on a busy machine spreads over all of them. Resolves with the timed results of
 * `measure(name, path)`, in arrays by path name.
 */
export async function interleave(paths, { runs, warmup }, measure) {
  const names = Object.keys(paths);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  for (let w = 0; w < warmup; w++) for (const name of names) await measure(name, paths[name]);
  for (let i = 0; i < runs; i++) {
    const order = [...names.slice(i % names.length), ...names.slice(0, i % names.length)];
    for (const name of order) samples[name].push(await measure(name, paths[name]));
  }
  return samples;
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** A command-line option's value as a whole number of at least `min`, or a readable error. */
export function wholeNumber(name, raw, min = 1) {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`--${name} takes a whole number of ${min} or more.`);
  }
  return value;
}

/** Whether the module at `url` is the script node was started with (not imported by bench/run.mjs). */
export function isMain(url) {
  return Boolean(process.argv[1]) && url === pathToFileURL(process.argv[1]).href;
}

/** Writes `size` seeded random bytes (`seededKeystream`) to `file`; resolves with their sha256. */
export async function writeSeededFile(file, size, seed, label) {
  const cipher = seededKeystream(seed, label);
  const hash = createHash("sha256");
  const zeros = Buffer.alloc(4 * 1024 * 1024);
  const handle = await open(file, "wx");
  try {
    for (let written = 0; written < size;) {
      const chunk = cipher.update(zeros.subarray(0, Math.min(zeros.length, size - written)));
      hash.update(chunk);
      await handle.write(chunk);
      written += chunk.length;
    }
  } finally {
    await handle.close();
  }
  return hash.digest("hex");
}

/**
 * An AES-256-CTR keystream keyed by `seed` and `label`: seeded random bytes, the same on every machine and
 * run, that neither compress nor delta (git's big blobs, the LFS object).
 */
export function seededKeystream(seed, label) {
  const key = createHash("sha256").update(`${seed}:${label}`).digest();
  return createCipheriv("aes-256-ctr", key, Buffer.alloc(16));
}

// ---------------------------------------------------------------------------------------------------------
// Child processes and clean-up (git and LFS benchmarks).

/** The programs `run` (or `track`) has started and not yet seen end, so an interrupted benchmark can stop them. */
const running = new Set();
let stopping = false;

/** Counts `child` among the programs `stopRunning` kills until it closes; returns it. */
export function track(child) {
  running.add(child);
  child.once("close", () => running.delete(child));
  return child;
}

/** Kills whatever `run` started that is still running, and makes later `run` calls fail at once. */
async function stopRunning() {
  stopping = true;
  const ends = [...running].map((child) => once(child, "close"));
  for (const child of running) child.kill("SIGKILL");
  await Promise.race([Promise.all(ends), sleep(5000)]);
}

/** Runs a program (never a shell); resolves with its output, rejects with its stderr on a non-zero exit. */
export function run(command, args, { cwd, env, input } = {}) {
  if (stopping) return Promise.reject(new Error("The benchmark is stopping."));
  return new Promise((resolve, reject) => {
    const child = track(spawn(command, args, { cwd, env, stdio: ["pipe", "pipe", "pipe"] }));
    const out = [];
    const err = [];
    child.stdout.on("data", (chunk) => out.push(chunk));
    child.stderr.on("data", (chunk) => err.push(chunk));
    child.stdin.on("error", () => {});
    child.once("error", reject);
    child.once("close", (code, signal) => {
      const stdout = Buffer.concat(out).toString();
      const stderr = Buffer.concat(err).toString();
      if (code === 0) resolve({ stdout, stderr });
      else {
        // Signed hrefs and credentials in URLs stay out of error messages.
        const shown = args.map((a) => a.replace(/\/\/x:[^@]*@/, "//x:***@").replace(/\?.*$/, "?…")).join(" ");
        reject(new Error(`${path.basename(command)} ${shown} failed (${code ?? signal}): ${stderr.trim()}`));
      }
    });
    child.stdin.end(input ?? "");
  });
}

/**
 * A temporary directory `prefix…` for one benchmark run. `close()` (at the end of the run) or SIGINT/SIGTERM
 * (then exit 130), whichever comes first, kills what `run` started, runs the `onCleanup` steps last-added
 * first (stopping servers) and removes the directory, so a benchmark leaves no processes or GiBs behind.
 */
export function benchWorkspace(prefix) {
  stopping = false;
  const tmp = mkdtempSync(path.join(os.tmpdir(), prefix));
  const cleanups = [];
  let cleaning = null;
  const cleanUp = async () => {
    await stopRunning();
    for (const step of cleanups.reverse()) {
      try {
        await step();
      } catch (err) {
        console.error(`cleanup: ${err.message}`);
      }
    }
    rmSync(tmp, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  };
  // Once, whoever asks first (the end of the run or a signal); everyone else waits for that same cleanup.
  const cleanup = () => (cleaning ??= cleanUp());
  const onSignal = (signal) => {
    console.error(`\n${signal}: stopping the servers and removing ${tmp}`);
    cleanup()
      .catch((err) => console.error(`cleanup: ${err.message}`))
      .finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  return {
    tmp,
    onCleanup: (step) => cleanups.push(step),
    async close() {
      process.removeListener("SIGINT", onSignal);
      process.removeListener("SIGTERM", onSignal);
      await cleanup();
    },
  };
}

/** Creates the user `bench` in the hub that `env` describes; resolves with a new token of `role` for it. */
export async function benchToken(env, role) {
  await run(
    process.execPath,
    [hubd, "user", "create", "bench", "--email", "bench@example.com", "--password-stdin"],
    { env, input: "bench-password\n" },
  );
  const { stdout } = await run(
    process.execPath,
    [hubd, "token", "create", "bench", "--name", "bench", "--role", role],
    { env },
  );
  return stdout.trim().split("\n").pop();
}

/**
 * The environment of a git client with no system or user configuration (no credential helpers, no LFS
 * filters) and no prompts; `home` is created with an empty .gitconfig.
 */
export function isolatedGitEnv(home) {
  mkdirSync(home, { recursive: true });
  writeFileSync(path.join(home, ".gitconfig"), "");
  return {
    PATH: process.env.PATH,
    HOME: home,
    LANG: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: path.join(home, ".gitconfig"),
    GIT_TERMINAL_PROMPT: "0",
  };
}

/** The executable `name` on PATH or in /usr/sbin or /sbin (where nginx and fcgiwrap go), or null. */
export function findProgram(name) {
  const dirs = [...(process.env.PATH ?? "").split(path.delimiter), "/usr/sbin", "/sbin"];
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** What a program says about its version (nginx says it on stderr). */
export function version(program, args) {
  const result = spawnSync(program, args, { encoding: "utf8" });
  return `${result.stdout ?? ""}${result.stderr ?? ""}`.trim();
}

// ---------------------------------------------------------------------------------------------------------
// nginx and other servers in process groups of their own (git and LFS benchmarks).

/**
 * nginx in the foreground with a private configuration under `dir` (prefix, temporary files, logs, pid),
 * listening on 127.0.0.1:`port` with no access log and no body size limit; `http` adds http-level
 * directives and `server` the server block's locations. The process is added to `processes` as soon as it
 * starts, so the caller can stop it (stopGroups) whatever happens. Resolves once the port accepts
 * connections, with its URL and pid.
 */
export async function startNginx(dir, processes, { nginxBin, port, http = "", server }) {
  for (const sub of ["body", "fastcgi", "proxy", "uwsgi", "scgi", "logs"])
    mkdirSync(path.join(dir, sub), { recursive: true });
  const conf = path.join(dir, "nginx.conf");
  const userLine = process.getuid?.() === 0 ? "user root;" : "";
  writeFileSync(
    conf,
    `${userLine}
worker_processes 2;
events { worker_connections 256; }
http {
  access_log off;
  ${http}
  client_body_temp_path ${dir}/body;
  fastcgi_temp_path ${dir}/fastcgi;
  proxy_temp_path ${dir}/proxy;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 0;
${server}
  }
}
`,
  );
  const log = openSync(path.join(dir, "logs/nginx.log"), "a");
  const nginx = spawn(
    nginxBin,
    [
      "-p",
      `${dir}/`,
      "-e",
      path.join(dir, "logs/error.log"),
      "-c",
      conf,
      "-g",
      `daemon off; pid ${dir}/nginx.pid;`,
    ],
    { stdio: ["ignore", log, log], detached: true },
  );
  closeSync(log);
  processes.push(nginx);
  await waitFor(() => canConnect(port), nginx, "nginx", path.join(dir, "logs"));
  return { url: `http://127.0.0.1:${port}`, pid: nginx.pid };
}

/** Stops processes started in groups of their own, the last started first. */
export async function stopGroups(processes) {
  for (const child of [...processes].reverse()) await stopGroup(child);
}

/** Stops a process started in its own group, with everything it forked (nginx workers, fcgiwrap children). */
async function stopGroup(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    return;
  }
  const timedOut = await Promise.race([exited.then(() => false), sleep(5000).then(() => true)]);
  if (timedOut) {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
    await exited;
  }
  // The group leader may go first; give its children a moment, then make sure none stays behind.
  await sleep(100);
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // the whole group is gone
  }
}

/**
 * Waits up to 10 s for `ready()` while `child` lives; otherwise throws, with the files in `logs` (a
 * directory, if given) in the message.
 */
export async function waitFor(ready, child, name, logs) {
  const deadline = Date.now() + 10_000;
  while (!(await ready())) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      const log = logs
        ? readdirSync(logs)
            .map((f) => readFileSync(path.join(logs, f), "utf8"))
            .join("")
        : "";
      throw new Error(`${name} did not start (exit ${child.exitCode}). ${log}`);
    }
    await sleep(50);
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export function canConnect(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** `count` distinct ports in [from, to] nothing listens on. */
export async function freePorts(count, from, to) {
  const ports = [];
  for (let port = from; port <= to && ports.length < count; port++) {
    const free = await new Promise((resolve) => {
      const server = net.createServer();
      server.once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
    });
    if (free) ports.push(port);
  }
  if (ports.length < count) {
    const what = count === 1 ? "No free port" : `Fewer than ${count} free ports`;
    throw new Error(`${what} from ${from} to ${to}.`);
  }
  return ports;
}

// ---------------------------------------------------------------------------------------------------------
// CPU time from /proc (git and LFS benchmarks; Linux).

/** Clock ticks per second, the unit of /proc/<pid>/stat's CPU times. */
export const TICKS = clockTicks();

function clockTicks() {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;
  } catch {
    return 100;
  }
}

/** A process's own CPU ticks (utime + stime), its reaped children's (cutime + cstime) and its start time. */
export function readStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, from field 3 (state): utime..cstime are fields 14..17, starttime 22.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return {
      own: Number(fields[11]) + Number(fields[12]),
      children: Number(fields[13]) + Number(fields[14]),
      start: fields[19],
    };
  } catch {
    return null;
  }
}

/** CPU ticks of this process's reaped children: the clients the benchmark ran (and what they spawned). */
export function childTicks() {
  return readStat(process.pid)?.children ?? 0;
}

/** Every live process under `roots` (roots included), through each thread's `children` list. */
export function descendants(roots) {
  const found = [];
  const queue = [...roots];
  while (queue.length) {
    const pid = queue.shift();
    found.push(pid);
    let tasks = [];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      try {
        const children = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
        if (children) queue.push(...children.split(" ").map(Number));
      } catch {
        // the thread or process just ended
      }
    }
  }
  return found;
}

/**
 * Writes the providers file of the Router benchmarks into `dir`: one free model, `bench/model`, served by the
 * fake upstream at `upstreamUrl`. Returns its path, for HUB_PROVIDERS.
 */
export function writeBenchProviders(dir, upstreamUrl) {
  const file = path.join(dir, "providers.json");
  const models = [{ id: "bench/model", providerModel: "m", task: "chat", pricing: { input: 0, output: 0 } }];
  writeFileSync(
    file,
    JSON.stringify({ providers: [{ slug: "up", baseUrl: `${upstreamUrl}/v1`, apiKey: "dummy", models }] }),
  );
  return file;
}
