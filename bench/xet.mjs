// Xet against the LFS path through a real hub, in one run, with the official Python client (huggingface_hub
// with hf_xet, the checkout's .venv that .ci/run builds from packages/server/test-python/requirements.txt):
// `upload_file` and `hf_hub_download` of a 1 GiB seeded random file through the hub's Xet CAS (the client's
// default) and through the LFS batch and its signed hrefs (the same client with HF_HUB_DISABLE_XET=1).
//
// Every upload sends new bytes (a file of its own, from the seed and the upload's name, written untimed just
// before it) so neither path can deduplicate against an earlier run; every download starts from an empty
// cache (HF_HOME of its own) and both paths download the same file, uploaded once through Xet before the
// timed runs. Paths are interleaved run by run, after warm-ups; `sync` runs untimed before each transfer.
// Times are the client call's own (`time.perf_counter()` around it in Python, interpreter start-up left out),
// so they cover every request the call makes (pre-upload, batch or CAS, commit; resolve, reconstruction).
//
// Then the file uploaded before the runs is uploaded again with 1 MiB changed in its middle, from the same
// client cache: the bytes the client sent are the hub's own accounting, the `xet xorb received` log lines.
//
// Needs Linux, a built hub (`npm run build`), the Python client (`--python PATH`, default .venv/bin/python of
// the checkout) and about 3 + 3 x (runs + warm-ups) times the file's size free in the temporary directory.
// `node bench/xet.mjs [--runs 3] [--warmup 1] [--size-mib 1024] [--seed 1] [--python PATH]`
import { createHash } from "node:crypto";
import { existsSync, rmSync, statSync } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { benchToken, benchWorkspace, childTicks, freePorts, hubd, interleave, isMain } from "./lib.mjs";
import { median, printEndLoad, printTable, readStat, run, scenarioTitle, startServer } from "./lib.mjs";
import { seededKeystream, TICKS, wholeNumber, writeSeededFile } from "./lib.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const MiB = 1024 * 1024;
/** Xet throughput over the LFS path's, per direction. */
const TARGETS = { upload: 0.8, download: 1.0 };
/** The re-upload of a file with 1 MiB changed must send less than this share of the file. */
const REUPLOAD_TARGET = 0.05;
const REPO = "bench/xet";

/** One upload or download by the Python client; prints the call's own seconds (and the file downloaded). */
const CLIENT = `
import json, sys, time
from huggingface_hub import HfApi, hf_hub_download
from huggingface_hub.utils._runtime import is_xet_available
request = json.loads(sys.argv[1])
start = time.perf_counter()
if request["op"] == "upload":
    HfApi().upload_file(path_or_fileobj=request["path"], path_in_repo=request["name"], repo_id=request["repo"])
    file = None
else:
    file = hf_hub_download(repo_id=request["repo"], filename=request["name"])
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "file": file, "xet": is_xet_available()}))
`;

/**
 * Runs the benchmark and prints one table per direction, the Xet/LFS ratios against their targets and the
 * bytes the edited re-upload sent; resolves with every figure.
 */
export async function benchXet({
  runs = 3,
  warmup = 1,
  sizeMiB = 1024,
  seed = 1,
  python = path.join(here, "../.venv/bin/python"),
} = {}) {
  const size = sizeMiB * MiB;
  if (!existsSync(hubd)) throw new Error("bench/xet.mjs needs `npm run build` first");
  if (!existsSync(python)) {
    throw new Error(
      `bench/xet.mjs needs the Python client with hf_xet: ${python} (run .ci/run once, or pass --python)`,
    );
  }
  const workspace = benchWorkspace("hub-bench-xet-");
  const { tmp } = workspace;
  try {
    const [port] = await freePorts(1, 19200, 19299);
    const env = {
      PATH: process.env.PATH,
      HUB_DATA_DIR: path.join(tmp, "hub"),
      HUB_PORT: String(port),
      HUB_RATE_LIMIT: "1000000000",
      HUB_DOWNLOAD_RATE_LIMIT: "1000000000",
      ...(process.env.HUB_DATABASE_URL ? { HUB_DATABASE_URL: process.env.HUB_DATABASE_URL } : {}),
    };
    const token = await benchToken(env, "write");
    // The hub's log, kept as lines that may matter: what the CAS received, and the requests it answered.
    const log = [];
    let partial = "";
    const hub = await startServer(
      hubd,
      ["serve", "--only", "hub"],
      { ...env, HUB_LOG_LEVEL: "info" },
      {
        onOutput: (chunk) => {
          const lines = (partial + chunk.toString()).split("\n");
          partial = lines.pop() ?? "";
          for (const line of lines) if (line.includes("xet") || line.includes("/resolve/")) log.push(line);
        },
      },
    );
    workspace.onCleanup(() => hub.stop());
    const created = await fetch(`${hub.url}/api/repos`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ repo_id: REPO }),
    });
    if (created.status !== 201)
      throw new Error(`creating ${REPO}: ${created.status} ${await created.text()}`);

    /** Runs the client once with `request`; `xet` false sets HF_HUB_DISABLE_XET=1. */
    const client = async (request, { xet, home }) => {
      const { stdout } = await run(python, ["-c", CLIENT, JSON.stringify({ repo: REPO, ...request })], {
        env: {
          PATH: process.env.PATH,
          HOME: home,
          HF_HOME: path.join(home, "hf"),
          HF_ENDPOINT: hub.url,
          HF_TOKEN: token,
          HF_HUB_DISABLE_TELEMETRY: "1",
          HF_HUB_DISABLE_PROGRESS_BARS: "1",
          ...(xet ? {} : { HF_HUB_DISABLE_XET: "1" }),
        },
      });
      const answer = JSON.parse(stdout.trim().split("\n").pop() ?? "{}");
      if (xet && !answer.xet) throw new Error(`${python} has no hf_xet: install the requirements`);
      return answer;
    };
    /** Bytes of xorbs and shards the CAS took, and its fetch requests, in the log lines from `from` on. */
    const casTraffic = (from) => {
      const seen = { xorbBytes: 0, shardBytes: 0, fetches: 0, resolves: 0 };
      for (const line of log.slice(from)) {
        if (line.includes("/xet-cas/fetch/")) seen.fetches++;
        if (line.includes("/resolve/")) seen.resolves++;
        if (!line.includes('"msg":"xet ')) continue;
        const entry = JSON.parse(line);
        if (entry.msg === "xet xorb received") seen.xorbBytes += entry.bytes ?? 0;
        if (entry.msg === "xet shard registered") seen.shardBytes += entry.bytes ?? 0;
      }
      return seen;
    };

    /** One timed client call, with the hub's and the client's CPU time and what the CAS saw meanwhile. */
    const timed = async (request, options) => {
      await run("sync", []);
      const from = log.length;
      const hub0 = readStat(hub.pid)?.own ?? 0;
      const client0 = childTicks();
      const answer = await client(request, options);
      // The log is a pipe: give the hub's last lines a moment to arrive.
      await new Promise((resolve) => setTimeout(resolve, 200));
      return {
        answer,
        seconds: answer.seconds,
        mbps: size / answer.seconds / 1e6,
        server: ((readStat(hub.pid)?.own ?? 0) - hub0) / TICKS,
        client: (childTicks() - client0) / TICKS,
        cas: casTraffic(from),
      };
    };

    // The file both paths download, uploaded through Xet before any timed run; its client cache stays for
    // the edited re-upload at the end.
    const baseFile = path.join(tmp, "base.bin");
    const baseSha = await writeSeededFile(baseFile, size, seed, "xet-base");
    const baseHome = path.join(tmp, "home-base");
    const base = await timed(
      { op: "upload", path: baseFile, name: "base.bin" },
      { xet: true, home: baseHome },
    );
    expect(base.cas.xorbBytes >= size * 0.99, `the base upload sent ${base.cas.xorbBytes} bytes of xorbs`);

    let uploads = 0;
    const upload = await scenario("upload", "Upload (upload_file)", async (name) => {
      const n = uploads++;
      const file = path.join(tmp, `up-${n}.bin`);
      await writeSeededFile(file, size, seed, `xet-upload-${n}`);
      const home = path.join(tmp, `home-up-${n}`);
      try {
        const result = await timed(
          { op: "upload", path: file, name: `up-${n}-${name}.bin` },
          { xet: name === "xet", home },
        );
        // Through Xet every byte goes to the CAS; through LFS none does.
        if (name === "xet")
          expect(result.cas.xorbBytes >= size * 0.99, `Xet upload ${n} sent too few xorb bytes`);
        else expect(result.cas.xorbBytes === 0, `LFS upload ${n} went through the CAS`);
        return result;
      } finally {
        rmSync(file, { force: true });
        rmSync(home, { recursive: true, force: true });
      }
    });

    let downloads = 0;
    const download = await scenario("download", "Download (hf_hub_download, empty cache)", async (name) => {
      const home = path.join(tmp, `home-down-${downloads++}`);
      try {
        const result = await timed({ op: "download", name: "base.bin" }, { xet: name === "xet", home });
        expect(statSync(result.answer.file).size === size, `${name} download: wrong size`);
        expect((await sha256(result.answer.file)) === baseSha, `${name} download: bytes differ`);
        if (name === "xet") expect(result.cas.fetches > 0, "the Xet download fetched no xorb range");
        else expect(result.cas.fetches === 0, "the LFS download fetched xorb ranges");
        return result;
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    });

    // The edited re-upload: 1 MiB in the middle of the base file changed, the same path, the same cache.
    const handle = await open(baseFile, "r+");
    try {
      const middle = Math.floor(size / 2 / MiB) * MiB;
      await handle.write(seededKeystream(seed, "xet-edit").update(Buffer.alloc(MiB)), 0, MiB, middle);
    } finally {
      await handle.close();
    }
    const edited = await timed(
      { op: "upload", path: baseFile, name: "base.bin" },
      { xet: true, home: baseHome },
    );
    const reupload = {
      seconds: edited.seconds,
      xorbBytes: edited.cas.xorbBytes,
      shardBytes: edited.cas.shardBytes,
      share: edited.cas.xorbBytes / size,
    };

    printSummary({ size, upload, download, reupload, base });
    printEndLoad();
    return { size, upload, download, reupload };

    async function scenario(key, title, measure) {
      const samples = await interleave({ xet: "xet", lfs: "lfs" }, { runs, warmup }, (name) => measure(name));
      const stats = Object.fromEntries(Object.entries(samples).map(([name, s]) => [name, summarize(s)]));
      printTable(
        scenarioTitle(`${title} of ${sizeMiB} MiB`, runs, warmup),
        ["path", "median MB/s", "min MB/s", "max MB/s", "median s", "hub CPU s", "client CPU s"],
        Object.entries(stats).map(([name, s]) => [
          LABELS[name],
          ...[s.mbps, s.min, s.max].map((mbps) => mbps.toFixed(0)),
          s.seconds.toFixed(2),
          s.server.toFixed(2),
          s.client.toFixed(2),
        ]),
      );
      return { key, stats };
    }
  } finally {
    await workspace.close();
  }
}

const LABELS = { xet: "Xet (hf_xet, the hub's CAS)", lfs: "LFS (HF_HUB_DISABLE_XET=1)" };

function printSummary({ size, upload, download, reupload, base }) {
  const rows = [upload, download].map(({ key, stats }) => {
    const ratio = stats.xet.mbps / stats.lfs.mbps;
    return [
      key,
      stats.xet.mbps.toFixed(0),
      stats.lfs.mbps.toFixed(0),
      ratio.toFixed(2),
      `>= ${TARGETS[key].toFixed(1)} ${ratio >= TARGETS[key] ? "met" : "MISSED"}`,
    ];
  });
  printTable("Summary (medians)", ["direction", "Xet MB/s", "LFS MB/s", "Xet/LFS", "target"], rows);
  console.log(
    `first upload of the file through Xet (untimed setup, context): ${base.mbps.toFixed(0)} MB/s, ` +
      `hub CPU ${base.server.toFixed(2)} s`,
  );
  const verdict = reupload.share < REUPLOAD_TARGET ? "met" : "MISSED";
  console.log(
    `edited re-upload (1 MiB changed in the middle of ${(size / MiB).toFixed(0)} MiB, same client cache): ` +
      `${reupload.xorbBytes} bytes of xorbs (${(reupload.share * 100).toFixed(2)}% of the file; target < ` +
      `${REUPLOAD_TARGET * 100}%: ${verdict}) and ${reupload.shardBytes} bytes of shards, ` +
      `${reupload.seconds.toFixed(2)} s`,
  );
}

function summarize(samples) {
  const pick = (field) => samples.map((s) => s[field]);
  const mbps = pick("mbps");
  return {
    mbps: median(mbps),
    min: Math.min(...mbps),
    max: Math.max(...mbps),
    seconds: median(pick("seconds")),
    server: median(pick("server")),
    client: median(pick("client")),
  };
}

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

async function sha256(file) {
  const hash = createHash("sha256");
  const handle = await open(file, "r");
  try {
    for await (const chunk of handle.createReadStream({ highWaterMark: 4 * MiB })) hash.update(chunk);
  } finally {
    await handle.close().catch(() => {});
  }
  return hash.digest("hex");
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      // Read by lib.mjs: profile the hub this run serves from.
      profile: { type: "boolean" },
      runs: { type: "string" },
      warmup: { type: "string" },
      "size-mib": { type: "string" },
      seed: { type: "string" },
      python: { type: "string" },
    },
  });
  const options = {};
  if (values.runs) options.runs = wholeNumber("runs", values.runs);
  if (values.warmup !== undefined) options.warmup = wholeNumber("warmup", values.warmup, 0);
  if (values["size-mib"]) options.sizeMiB = wholeNumber("size-mib", values["size-mib"]);
  if (values.seed) options.seed = wholeNumber("seed", values.seed);
  if (values.python) options.python = values.python;
  await benchXet(options);
}
