// The inference Router on loopback, in one run: non-streaming chat completions at several concurrencies
// (requests/s, p50, p99) and the time to the first byte of a 200-chunk stream, each straight to a fake
// upstream, through a minimal Node pass-through proxy (the floor), through the Router in a real hubd, and
// through the Portkey AI gateway pointed at the same upstream. Load generator and servers are separate
// processes; the figures are printed as markdown tables, with the targets and a JSON line at the end.
import { spawn } from "node:child_process";
import { once } from "node:events";
import http from "node:http";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  benchToken,
  benchWorkspace,
  canConnect,
  freePorts,
  hubd,
  isMain,
  load,
  percentile,
  printEndLoad,
  printTable,
  readStat,
  startServer,
  TICKS,
  track,
  waitFor,
  wholeNumber,
  writeBenchProviders,
} from "./lib.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const portkeyEntry = path.join(here, "../node_modules/@portkey-ai/gateway/build/start-server.js");

const CHUNKS = 200;
const MODEL = "bench/model:up";
const TARGETS = { addedP50Ms: 0.5, addedTtfbMs: 1, vsPortkey: 5, vsProxy: 0.5 };
/** The issue's figures for this kind of machine, printed beside ours for context. */
const REFERENCE =
  "direct ~5k req/s at c=1 and ~30k at c=16; Portkey ~600 req/s at every concurrency, +1.4 ms p50 at c=1, " +
  "+30 ms to the first streamed byte; a minimal Node pass-through proxy ~11k req/s";

const LABELS = {
  direct: "direct to the upstream",
  proxy: "minimal pass-through proxy",
  router: "hub Router",
  portkey: "Portkey gateway 1.15.2",
};

const chatBody = (stream) =>
  JSON.stringify({
    model: MODEL,
    messages: [{ role: "user", content: "Say hello." }],
    max_tokens: 16,
    ...(stream ? { stream: true } : {}),
  });

export async function benchRouter({
  duration = 5,
  warmup = 2,
  concurrencies = [1, 16, 64],
  streams = 200,
  pauseMs = 5,
  gapMs = 0,
} = {}) {
  const workspace = benchWorkspace("hub-bench-router-");
  try {
    const { tmp } = workspace;
    const upstream = await startServer(
      path.join(here, "fake-upstream.mjs"),
      ["--chunks", String(CHUNKS), "--pause-ms", String(pauseMs), "--gap-ms", String(gapMs)],
      { PATH: process.env.PATH },
    );
    workspace.onCleanup(upstream.stop);
    const proxy = await startServer(path.join(here, "pass-through-proxy.mjs"), [upstream.url], {
      PATH: process.env.PATH,
    });
    workspace.onCleanup(proxy.stop);

    const providersFile = writeBenchProviders(tmp, upstream.url);
    const env = {
      PATH: process.env.PATH,
      HUB_DATA_DIR: path.join(tmp, "data"),
      HUB_PORT: "0",
      HUB_GIT_PORT: "0",
      HUB_ROUTER_PORT: "0",
      HUB_SSH_PORT: "0",
      HUB_RATE_LIMIT: "1000000000",
      HUB_PROVIDERS: providersFile,
      HUB_LOG_LEVEL: process.env.HUB_LOG_LEVEL ?? "info",
      ...(process.env.HUB_DATABASE_URL ? { HUB_DATABASE_URL: process.env.HUB_DATABASE_URL } : {}),
    };
    const token = await benchToken(env, "write");
    const hub = await startServer(hubd, ["serve", "--only", "router"], env, {
      surfaces: ["router"],
    });
    workspace.onCleanup(hub.stop);

    const portkey = await startPortkey(workspace);

    const json = { "content-type": "application/json" };
    const paths = {
      direct: { url: `${upstream.url}/v1/chat/completions`, headers: json, pid: upstream.pid },
      proxy: { url: `${proxy.url}/v1/chat/completions`, headers: json, pid: proxy.pid },
      router: {
        url: `${hub.urls.router}/v1/chat/completions`,
        headers: { ...json, authorization: `Bearer ${token}` },
        pid: hub.pid,
      },
      portkey: {
        url: `${portkey.url}/v1/chat/completions`,
        headers: {
          ...json,
          authorization: "Bearer dummy",
          "x-portkey-provider": "openai",
          "x-portkey-custom-host": `${upstream.url}/v1`,
        },
        pid: portkey.pid,
      },
    };
    await verify(paths);

    // Non-streaming: every concurrency, the paths in a rotated order so none always runs first.
    const names = Object.keys(paths);
    const chat = {};
    for (const [index, connections] of concurrencies.entries()) {
      chat[connections] = {};
      const order = [...names.slice(index % names.length), ...names.slice(0, index % names.length)];
      for (const name of order) {
        const { url, headers, pid } = paths[name];
        let cpu0 = 0;
        const result = await load(url, {
          method: "POST",
          headers,
          body: chatBody(false),
          connections,
          duration,
          warmup,
          beforeTimed: () => (cpu0 = readStat(pid)?.own ?? 0),
        });
        // The server's own CPU (not the upstream's, for the paths in front of it) per request, in µs.
        result.cpuUs = (((readStat(pid)?.own ?? 0) - cpu0) / TICKS / result.requests) * 1e6;
        chat[connections][name] = result;
      }
      printChat(connections, chat[connections], { duration, warmup });
    }

    const ttfb = await measureStreams(paths, streams);
    printStreams(ttfb, { count: streams, pauseMs, gapMs });

    const verdicts = judge(chat, ttfb, concurrencies);
    printVerdicts(verdicts);
    printFloors(chat, ttfb, concurrencies);
    console.log(`reference figures from the issue: ${REFERENCE}`);
    printEndLoad();
    const summary = {
      bench: "router",
      duration,
      warmup,
      streams,
      pauseMs,
      gapMs,
      chat: Object.fromEntries(
        Object.entries(chat).map(([c, byPath]) => [
          c,
          Object.fromEntries(
            Object.entries(byPath).map(([name, r]) => [
              name,
              { rps: round(r.rps, 0), p50: round(r.p50, 3), p99: round(r.p99, 3), cpuUs: round(r.cpuUs, 0) },
            ]),
          ),
        ]),
      ),
      ttfb: Object.fromEntries(
        Object.entries(ttfb).map(([name, r]) => [name, { p50: round(r.p50, 3), p99: round(r.p99, 3) }]),
      ),
      targets: Object.fromEntries(verdicts.map((v) => [v.key, { value: round(v.value, 3), pass: v.pass }])),
    };
    console.log(JSON.stringify(summary));
    return summary;
  } finally {
    for (const agent of agents.values()) agent.destroy();
    agents.clear();
    await workspace.close();
  }
}

const round = (value, digits) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Portkey's gateway as its package starts it, headless, on a free port; with the stream fix preloaded. */
async function startPortkey(workspace) {
  const [port] = await freePorts(1, 18_700, 19_700);
  const child = track(
    spawn(
      process.execPath,
      ["--import", path.join(here, "portkey-preload.mjs"), portkeyEntry, `--port=${port}`, "--headless"],
      { env: { PATH: process.env.PATH, NODE_ENV: "production" }, stdio: ["ignore", "ignore", "inherit"] },
    ),
  );
  workspace.onCleanup(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    await exited;
  });
  await waitFor(() => canConnect(port), child, "the Portkey gateway");
  return { url: `http://127.0.0.1:${port}`, pid: child.pid };
}

// ---------------------------------------------------------------------------------------------------------
// One request at a time, with node:http over a keep-alive connection per path.

const agents = new Map();

/**
 * POSTs `body` to `url` and resolves with the status, the body, and the milliseconds from the request's
 * start to the first byte of the body and to its end.
 */
function post(url, headers, body) {
  const target = new URL(url);
  let agent = agents.get(target.origin);
  if (!agent) agents.set(target.origin, (agent = new http.Agent({ keepAlive: true, maxSockets: 1 })));
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstByte = null;
    const req = http.request(
      target,
      {
        method: "POST",
        agent,
        headers: { ...headers, "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        const chunks = [];
        res.on("data", (chunk) => {
          firstByte ??= performance.now() - started;
          chunks.push(chunk);
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode,
            body: Buffer.concat(chunks),
            firstByteMs: firstByte,
            totalMs: performance.now() - started,
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** The content of every data event of an SSE body, `[DONE]` included. */
function sseData(text) {
  return text
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).trim());
}

/** The tokens a chat completion stream carries, in order, and whether it ends with `[DONE]`. */
function streamContent(text) {
  const data = sseData(text);
  const done = data.at(-1) === "[DONE]";
  const tokens = data
    .filter((d) => d !== "[DONE]")
    .map((d) => JSON.parse(d).choices?.[0]?.delta?.content ?? "")
    .join("");
  return { done, tokens, events: data.length };
}

/** Checks, before anything is measured, that every path really answers with the upstream's completion and stream. */
async function verify(paths) {
  const expected = await post(paths.direct.url, paths.direct.headers, chatBody(false));
  const expectedJson = JSON.parse(expected.body.toString());
  const expectedStream = streamContent(
    (await post(paths.direct.url, paths.direct.headers, chatBody(true))).body.toString(),
  );
  if (!expectedStream.done || expectedStream.events !== CHUNKS + 1) {
    throw new Error(`the fake upstream sent ${expectedStream.events} events, not ${CHUNKS + 1}`);
  }
  for (const [name, { url, headers }] of Object.entries(paths)) {
    const whole = await post(url, headers, chatBody(false));
    if (whole.status !== 200) throw new Error(`${name}: HTTP ${whole.status}: ${whole.body}`);
    const json = JSON.parse(whole.body.toString());
    for (const key of ["id", "choices", "usage"]) {
      if (JSON.stringify(json[key]) !== JSON.stringify(expectedJson[key])) {
        throw new Error(`${name}: the completion's ${key} is not the upstream's: ${whole.body}`);
      }
    }
    const streamed = await post(url, headers, chatBody(true));
    if (streamed.status !== 200) throw new Error(`${name}: HTTP ${streamed.status} to a stream request`);
    const got = streamContent(streamed.body.toString());
    if (!got.done || got.tokens !== expectedStream.tokens) {
      throw new Error(`${name}: the stream is not the upstream's (${got.events} events, done: ${got.done})`);
    }
  }
}

/**
 * `count` streamed requests per path after a tenth as many untimed, one at a time, the paths taking turns
 * request by request so drift on the machine spreads over all of them; p50 and p99 of the time to the first
 * body byte and to the end of the stream.
 */
async function measureStreams(paths, count) {
  const samples = Object.fromEntries(Object.keys(paths).map((name) => [name, { first: [], total: [] }]));
  const body = chatBody(true);
  const warmups = Math.max(1, Math.ceil(count / 10));
  for (let i = 0; i < warmups + count; i++) {
    for (const [name, { url, headers }] of Object.entries(paths)) {
      const res = await post(url, headers, body);
      if (res.status !== 200 || !res.body.toString().endsWith("data: [DONE]\n\n")) {
        throw new Error(`${name}: a streamed request ended with HTTP ${res.status} and no [DONE]`);
      }
      if (i >= warmups) {
        samples[name].first.push(res.firstByteMs);
        samples[name].total.push(res.totalMs);
      }
    }
    // A breath between rounds, so no path's request lands on another's leftover work.
    await sleep(1);
  }
  return Object.fromEntries(
    Object.entries(samples).map(([name, { first, total }]) => {
      const f = Float64Array.from(first).sort();
      const t = Float64Array.from(total).sort();
      return [name, { p50: percentile(f, 0.5), p99: percentile(f, 0.99), totalP50: percentile(t, 0.5) }];
    }),
  );
}

// ---------------------------------------------------------------------------------------------------------
// Output and targets.

const ms = (value) => value.toFixed(3);
const signed = (value) => `${value >= 0 ? "+" : ""}${value.toFixed(3)}`;

function printChat(connections, results, { duration, warmup }) {
  const direct = results.direct;
  printTable(
    `Non-streaming chat completion, ${connections} connection${connections === 1 ? "" : "s"}, ${duration} s after ${warmup} s warm-up`,
    ["path", "requests/s", "p50 ms", "p99 ms", "p50 added ms", "server CPU µs/req"],
    Object.entries(results).map(([name, r]) => [
      LABELS[name],
      r.rps.toFixed(0),
      ms(r.p50),
      ms(r.p99),
      name === "direct" ? "-" : signed(r.p50 - direct.p50),
      r.cpuUs.toFixed(0),
    ]),
  );
}

function printStreams(results, { count, pauseMs, gapMs }) {
  const pacing = `first chunk, ${pauseMs} ms pause, then ${gapMs > 0 ? `one every ${gapMs} ms` : "one per event-loop turn"}`;
  const direct = results.direct;
  printTable(
    `Streamed chat completion (${CHUNKS} chunks: ${pacing}), ${count} requests each, one at a time`,
    ["path", "first byte p50 ms", "first byte p99 ms", "first byte added ms", "whole stream p50 ms"],
    Object.entries(results).map(([name, r]) => [
      LABELS[name],
      ms(r.p50),
      ms(r.p99),
      name === "direct" ? "-" : signed(r.p50 - direct.p50),
      ms(r.totalP50),
    ]),
  );
}

function judge(chat, ttfb, concurrencies) {
  const verdicts = [];
  const lowest = Math.min(...concurrencies);
  const added = chat[lowest].router.p50 - chat[lowest].direct.p50;
  verdicts.push({
    key: `addedP50Ms_c${lowest}`,
    what: `p50 added over direct at c=${lowest}`,
    value: added,
    shown: `${signed(added)} ms`,
    limit: `<= ${TARGETS.addedP50Ms} ms`,
    pass: added <= TARGETS.addedP50Ms,
  });
  const addedFirst = ttfb.router.p50 - ttfb.direct.p50;
  verdicts.push({
    key: "addedTtfbMs",
    what: "first streamed byte added over direct (p50)",
    value: addedFirst,
    shown: `${signed(addedFirst)} ms`,
    limit: `<= ${TARGETS.addedTtfbMs} ms`,
    pass: addedFirst <= TARGETS.addedTtfbMs,
  });
  for (const c of concurrencies) {
    const vsPortkey = chat[c].router.rps / chat[c].portkey.rps;
    verdicts.push({
      key: `vsPortkey_c${c}`,
      what: `throughput vs Portkey at c=${c}`,
      value: vsPortkey,
      shown: `${vsPortkey.toFixed(2)}x`,
      limit: `>= ${TARGETS.vsPortkey}x`,
      pass: vsPortkey >= TARGETS.vsPortkey,
    });
  }
  for (const c of concurrencies) {
    const vsProxy = chat[c].router.rps / chat[c].proxy.rps;
    verdicts.push({
      key: `vsProxy_c${c}`,
      what: `throughput vs the minimal proxy at c=${c}`,
      value: vsProxy,
      shown: `${vsProxy.toFixed(2)}x`,
      limit: `>= ${TARGETS.vsProxy}x`,
      pass: vsProxy >= TARGETS.vsProxy,
    });
  }
  return verdicts;
}

/**
 * For context, not targets: what the pass-through proxy, which does nothing but forward, costs itself in the
 * same run. A target tighter than the proxy's own cost cannot be met by any proxy on this machine.
 */
function printFloors(chat, ttfb, concurrencies) {
  const lowest = Math.min(...concurrencies);
  const proxyFirst = ttfb.proxy.p50 - ttfb.direct.p50;
  const routerOverProxy = ttfb.router.p50 - ttfb.proxy.p50;
  console.log(
    `for context: the pass-through proxy alone adds ${signed(proxyFirst)} ms to the first streamed byte ` +
      `(the Router ${signed(routerOverProxy)} ms more than the proxy); at c=${lowest} the proxy answers ` +
      `${(chat[lowest].proxy.rps / chat[lowest].portkey.rps).toFixed(2)}x Portkey's requests/s`,
  );
}

function printVerdicts(verdicts) {
  printTable(
    "Router targets",
    ["target", "Router", "limit", "result"],
    verdicts.map((v) => [v.what, v.shown, v.limit, v.pass ? "PASS" : "MISS"]),
  );
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      // Read by lib.mjs: profile the hubs this run serves from.
      profile: { type: "boolean" },
      duration: { type: "string" },
      warmup: { type: "string" },
      streams: { type: "string" },
      "pause-ms": { type: "string" },
      "gap-ms": { type: "string" },
    },
  });
  const options = {};
  if (values.duration) options.duration = wholeNumber("duration", values.duration);
  if (values.warmup) options.warmup = wholeNumber("warmup", values.warmup, 0);
  if (values.streams) options.streams = wholeNumber("streams", values.streams);
  if (values["pause-ms"]) options.pauseMs = wholeNumber("pause-ms", values["pause-ms"], 0);
  if (values["gap-ms"]) options.gapMs = wholeNumber("gap-ms", values["gap-ms"], 0);
  await benchRouter(options);
}
