// Shared helpers for the benchmarks: start processes, wait for their URL, load them with autocannon.
import { spawn } from "node:child_process";
import autocannon from "autocannon";

/**
 * Spawns a node script and resolves with its URL once it logs a JSON line `{msg:"listening", url}`.
 * With `surfaces` (like `["hub", "git"]`), it waits instead for a `listening` line naming each of those
 * surfaces; `urls` maps every surface seen to its URL and `pid` is the server's process id.
 * `nodeArgs` go to node before the script (flags NODE_OPTIONS refuses, like `--cpu-prof`).
 */
export function startServer(script, args, env, { surfaces, nodeArgs = [] } = {}) {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
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
            resolve({ url: first, urls, pid: child.pid, stop: () => stop(child) });
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

/** Loads a URL for `duration` seconds after a short warm-up; returns requests/s and latency percentiles. */
export async function load(url, { headers = {}, connections = 10, duration = 10 } = {}) {
  await autocannon({ url, headers, connections, duration: 2 });
  const result = await autocannon({ url, headers, connections, duration });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx responses and ${result.errors} errors under load`);
  }
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

export function printComparison(title, rows, ratio, target) {
  console.log(`\n${title}`);
  console.log("| path | requests/s | p50 ms | p99 ms |");
  console.log("|---|---|---|---|");
  for (const [name, r] of rows) console.log(`| ${name} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} |`);
  console.log(`ratio: ${ratio.toFixed(2)} (target ${target})`);
}
