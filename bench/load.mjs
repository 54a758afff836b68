// HTTP load for the benchmarks: wrk (a C load generator, one thread per process), never a generator in the
// benchmark's own Node process. On two cores the load generator shares the machine with what it measures:
// autocannon, which these benchmarks used until 2026-11-27, spent 12-19 µs of CPU per request in one event
// loop for every connection, and when busy servers preempted it every connection waited at once. With two
// hubs on the machine that made one hub look 20% faster than two (`bench/scale.mjs`, 0.79x with autocannon
// against 1.02-1.07x with wrk in the same hour); wrk spends 2 µs of user time per request.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * Loads a URL for `duration` seconds after `warmup` seconds untimed; returns requests/s, latency percentiles
 * in milliseconds and the number of requests. `method` and `body` make it, say, a POST of JSON;
 * `beforeTimed` runs between the warm-up and the timed run (to read a server's CPU time, say). One request
 * is sent first and must answer 2xx; under load a 4xx or 5xx answer, a socket error or a timeout fails the run
 * (wrk counts no other status as an error: a redirect under load would pass unnoticed). Durations are whole
 * seconds.
 */
export async function load(url, options = {}) {
  const { p50, p99, rps, requests } = await loadSplit([url], { connections: 10, ...options });
  return { rps, p50, p99, requests };
}

/**
 * Loads the `urls` together, `connections` in all spread evenly over them (one wrk per URL, run at once), so
 * each of several processes gets its share. Answers the summed requests/s and requests, and the worst of
 * the URLs' p50 and p99 (wrk reports percentiles, not every response's time, so they are not merged).
 */
export async function loadSplit(
  urls,
  { connections, duration = 10, warmup = 2, headers = {}, method = "GET", body, beforeTimed },
) {
  if (connections < urls.length)
    throw new Error(`${connections} connections cannot load ${urls.length} URLs`);
  for (const seconds of [duration, warmup])
    if (!Number.isInteger(seconds) || seconds < 0) throw new Error(`wrk runs whole seconds, not ${seconds}`);
  for (const url of urls) await expectSuccess(url, { headers, method, body });
  const dir = mkdtempSync(path.join(os.tmpdir(), "hub-bench-wrk-"));
  try {
    const script = path.join(dir, "load.lua");
    writeFileSync(script, wrkScript({ headers, method, body, dir }));
    const share = (i) => Math.floor(connections / urls.length) + (i < connections % urls.length ? 1 : 0);
    const runAll = (seconds) => Promise.all(urls.map((url, i) => wrk(url, script, share(i), seconds)));
    if (warmup > 0) await runAll(warmup);
    beforeTimed?.();
    const results = await runAll(duration);
    const requests = results.reduce((sum, result) => sum + result.requests, 0);
    return {
      rps: results.reduce((sum, result) => sum + result.requests / result.seconds, 0),
      p50: Math.max(...results.map((result) => result.p50)),
      p99: Math.max(...results.map((result) => result.p99)),
      requests,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One request before the load: wrk counts only 4xx and 5xx as errors, and a redirect is no success either. */
async function expectSuccess(url, { headers, method, body }) {
  const response = await fetch(url, { method, headers, body });
  await response.arrayBuffer();
  if (response.status < 200 || response.status > 299)
    throw new Error(`${method} ${url}: ${response.status} before the load; the benchmark expects 2xx`);
}

/** Runs one wrk for `seconds` and answers what its script's `done` printed, latencies in milliseconds. */
function wrk(url, script, connections, seconds) {
  const args = ["--threads", "1", "--connections", String(connections), "--duration", `${seconds}s`];
  args.push("--timeout", "10s", "--script", script, url);
  return new Promise((resolve, reject) => {
    execFile("wrk", args, { maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      if (error) {
        const missing = error.code === "ENOENT";
        reject(
          new Error(missing ? "wrk is not installed (apt-get install wrk; .ci/run installs it)" : stderr),
        );
        return;
      }
      const line = stdout.split("\n").find((text) => text.startsWith("RESULT "));
      if (!line) return reject(new Error(`wrk printed no result for ${url}:\n${stdout}${stderr}`));
      const result = JSON.parse(line.slice("RESULT ".length));
      const failed = result.status + result.connect + result.read + result.write + result.timeout;
      if (failed > 0)
        return reject(
          new Error(
            `${url}: ${result.status} non-2xx answers, ${result.connect + result.read + result.write} socket errors and ${result.timeout} timeouts under load`,
          ),
        );
      resolve({
        requests: result.requests,
        seconds: result.micros / 1e6,
        p50: result.p50 / 1000,
        p99: result.p99 / 1000,
      });
    });
  });
}

/** The Lua script that sets the request and prints the summary as one JSON line. The body is read from a file. */
function wrkScript({ headers, method, body, dir }) {
  const lines = [`wrk.method = ${luaString(method)}`];
  for (const [name, value] of Object.entries(headers))
    lines.push(`wrk.headers[${luaString(name)}] = ${luaString(value)}`);
  if (body !== undefined) {
    const file = path.join(dir, "body");
    writeFileSync(file, body);
    lines.push(
      `local file = io.open(${luaString(file)}, "rb")`,
      `wrk.body = file:read("*a")`,
      `file:close()`,
    );
  }
  lines.push(
    "done = function(summary, latency)",
    "  local e = summary.errors",
    `  io.write(string.format('\\nRESULT {"requests":%d,"micros":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,"p50":%d,"p99":%d}\\n',`,
    "    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,",
    "    latency:percentile(50), latency:percentile(99)))",
    "end",
  );
  return `${lines.join("\n")}\n`;
}

/** A Lua string literal of `text`'s UTF-8 bytes, every byte but letters and digits as a decimal escape. */
function luaString(text) {
  let literal = "";
  for (const byte of Buffer.from(text)) {
    const char = String.fromCharCode(byte);
    literal += /[A-Za-z0-9]/.test(char) ? char : `\\${String(byte).padStart(3, "0")}`;
  }
  return `"${literal}"`;
}
