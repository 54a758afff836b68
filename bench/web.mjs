// The web site's server time and weight, through a real hub, in one run against the API call a page is built on:
// a repository page and a file page of a repository with 10,000 files, under load (p50, p99, requests/s), next to
// `GET /api/models/{id}` of the same repository; and the JavaScript each page makes the browser load, gzipped.
// Targets (issue 16): the repository page renders in under 2x the JSON call's time and ships at most 150 KB of
// gzipped script.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import {
  benchToken,
  benchWorkspace,
  hubd,
  isMain,
  isolatedGitEnv,
  load,
  printTable,
  run,
  startServer,
  wholeNumber,
} from "./lib.mjs";

const REPO = "bench/big";
const FOLDERS = 100;
const PER_FOLDER = 100;

const CARD = `---
license: apache-2.0
pipeline_tag: text-generation
tags: [bench]
---
# A repository of ${FOLDERS * PER_FOLDER} files

| folder | files |
| ------ | ----- |
| src/f0 | ${PER_FOLDER} |

\`\`\`python
print("hello")
\`\`\`
`;

/** A git repository of FOLDERS × PER_FOLDER small Python files and a card, pushed to the hub over HTTP. */
async function pushBigRepository(tmp, hubUrl, token) {
  const work = path.join(tmp, "work");
  const env = isolatedGitEnv(path.join(tmp, "home"));
  const remote = new URL(`${hubUrl}/${REPO}`);
  remote.username = "x";
  remote.password = token;
  await run("git", ["clone", "-q", remote.href, work], { env });
  writeFileSync(path.join(work, "README.md"), CARD);
  for (let folder = 0; folder < FOLDERS; folder++) {
    const dir = path.join(work, "src", `f${folder}`);
    mkdirSync(dir, { recursive: true });
    for (let file = 0; file < PER_FOLDER; file++) {
      writeFileSync(
        path.join(dir, `m${file}.py`),
        `# module ${folder}/${file}\ndef f${file}(x):\n    """Doubles x."""\n    return 2 * x\n`,
      );
    }
  }
  await run("git", ["add", "-A"], { cwd: work, env });
  await run("git", ["-c", "user.name=bench", "-c", "user.email=b@example.com", "commit", "-qm", "files"], {
    cwd: work,
    env,
  });
  await run("git", ["push", "-q", "origin", "main"], { cwd: work, env });
}

/**
 * The scripts a page makes the browser fetch, gzipped, in bytes: the start-up modules its HTML imports and
 * preloads (in the page and in its Link header), and every module those import in turn.
 */
async function shippedScript(url) {
  const response = await fetch(url, { headers: { accept: "text/html" } });
  const html = await response.text();
  const named = `${html}\n${response.headers.get("link") ?? ""}`;
  const pending = [...named.matchAll(/(\/_app\/immutable\/[\w./-]+\.js)/g)].map((match) => match[1]);
  const seen = new Set();
  let bytes = 0;
  while (pending.length > 0) {
    const script = pending.pop();
    if (seen.has(script)) continue;
    seen.add(script);
    const source = await (await fetch(new URL(script, url))).text();
    bytes += gzipSync(source).length;
    for (const match of source.matchAll(/(?:from|import)\s*["'](\.{1,2}\/[^"']+\.js)["']/g)) {
      pending.push(path.posix.normalize(path.posix.join(path.posix.dirname(script), match[1])));
    }
  }
  return { bytes, files: seen.size };
}

export async function benchWeb({ duration = 10, connections = 8 } = {}) {
  const workspace = benchWorkspace("hub-bench-web-");
  const { tmp } = workspace;
  try {
    const env = {
      PATH: process.env.PATH,
      HOME: tmp,
      HUB_DATA_DIR: path.join(tmp, "data"),
      HUB_PORT: "0",
      HUB_RATE_LIMIT: "1000000000",
      HUB_LOG_LEVEL: "info",
      ...(process.env.HUB_DATABASE_URL ? { HUB_DATABASE_URL: process.env.HUB_DATABASE_URL } : {}),
    };
    const token = await benchToken(env, "write");
    const hub = await startServer(hubd, ["serve", "--only", "hub"], env);
    workspace.onCleanup(() => hub.stop());
    const created = await fetch(`${hub.url}/api/repos`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ repo_id: REPO }),
    });
    if (created.status !== 201) throw new Error(`create: ${created.status} ${await created.text()}`);
    console.error(`pushing ${FOLDERS * PER_FOLDER} files to ${REPO}…`);
    await pushBigRepository(tmp, hub.url, token);
    console.error("loading…");

    const html = { accept: "text/html" };
    if (process.env.BENCH_WEB_DIAG) {
      const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
      for (const [name, p, init] of [
        ["info", `/api/models/${REPO}`, {}],
        ["info expand", `/api/models/${REPO}?expand[]=sha&expand[]=author`, {}],
        ["refs", `/api/models/${REPO}/refs`, {}],
        ["config", `/.well-known/hub-configuration`, {}],
        ["tree", `/api/models/${REPO}/tree/main/src/f7`, {}],
        [
          "paths-info",
          `/api/models/${REPO}/paths-info/main`,
          { method: "POST", body: JSON.stringify({ paths: ["src/f7/m42.py"] }) },
        ],
        ["resolve", `/${REPO}/resolve/main/src/f7/m42.py`, {}],
        ["auth-check", `/api/models/${REPO}/auth-check/write`, {}],
        ["file page", `/${REPO}/blob/main/src/f7/m42.py`, { headers: html }],
        ["repo page", `/${REPO}`, { headers: html }],
      ]) {
        const times = [];
        for (let i = 0; i < 15; i++) {
          const start = performance.now();
          const r = await fetch(`${hub.url}${p}`, { headers: auth, ...init });
          await r.arrayBuffer();
          times.push(performance.now() - start);
        }
        times.sort((a, b) => a - b);
        console.log(`${name}: ${times[7].toFixed(1)} ms`);
      }
    }
    const json = await load(`${hub.url}/api/models/${REPO}`, { duration, connections });
    const repoPage = await load(`${hub.url}/${REPO}`, { headers: html, duration, connections });
    const filePage = await load(`${hub.url}/${REPO}/blob/main/src/f7/m42.py`, {
      headers: html,
      duration,
      connections,
    });
    const treePage = await load(`${hub.url}/${REPO}/tree/main/src/f7`, {
      headers: html,
      duration,
      connections,
    });
    printTable(
      `The web pages of a ${FOLDERS * PER_FOLDER}-file repository against the API call they are built on, ${connections} connections, ${duration}s`,
      ["path", "requests/s", "p50 ms", "p99 ms", "p50 vs JSON"],
      [
        ["GET /api/models/{id} (JSON)", json],
        ["repository page", repoPage],
        ["file page", filePage],
        ["folder page (100 files)", treePage],
      ].map(([name, r]) => [
        name,
        r.rps.toFixed(0),
        r.p50.toFixed(2),
        r.p99.toFixed(2),
        `${(r.p50 / json.p50).toFixed(2)}x`,
      ]),
    );
    const ratio = repoPage.p50 / json.p50;
    console.log(
      `repository page p50 / JSON p50: ${ratio.toFixed(2)} (target < 2): ${ratio < 2 ? "met" : "MISSED"}`,
    );

    const rows = [];
    let worst = 0;
    for (const [name, url] of [
      ["repository page", `${hub.url}/${REPO}`],
      ["file page", `${hub.url}/${REPO}/blob/main/src/f7/m42.py`],
      ["models listing", `${hub.url}/models`],
    ]) {
      const { bytes, files } = await shippedScript(url);
      worst = Math.max(worst, bytes);
      rows.push([name, String(files), (bytes / 1000).toFixed(1)]);
    }
    printTable("JavaScript each page loads", ["page", "scripts", "gzipped KB"], rows);
    console.log(
      `largest: ${(worst / 1000).toFixed(1)} KB gzipped (target <= 150 KB): ${worst <= 150_000 ? "met" : "MISSED"}`,
    );
    return { ratio, scriptBytes: worst, json, repoPage, filePage, treePage };
  } finally {
    await workspace.close();
  }
}

if (isMain(import.meta.url)) {
  const duration = wholeNumber("BENCH_DURATION", process.env.BENCH_DURATION ?? "10");
  await benchWeb({ duration });
}
