// The Xet protocol core (packages/server/src/xet) on a 100 MB buffer: chunking, chunk hashing, the file hash,
// xorb serialization and xorb verification, in MB/s; against, in the same run, Node's native SHA-256 over the
// same bytes (what verifying an LFS object costs) and the reference client hashing the same file (hf_xet's
// hash_files, in .venv: chunking and hashing in Rust). Needs `npm run build` and the Python client in .venv
// (.ci/run makes it; `--python PATH` names another interpreter with hf_xet).
//
//   node bench/xet-core.mjs --size-mib 100 --runs 3
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isMain, median, printEndLoad, printTable, seededKeystream, wholeNumber } from "./lib.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, "../packages/server/dist/xet");

const HASH_FILES = `
import sys, time, hf_xet
path, runs = sys.argv[1], int(sys.argv[2])
hf_xet.hash_files([path])
times = []
for _ in range(runs):
    t = time.perf_counter()
    info = hf_xet.hash_files([path])[0]
    times.append(time.perf_counter() - t)
print(info.hash, *times)
`;

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

/** Seconds of the median of `runs` timed calls of `fn` (after one untimed). */
function time(runs, fn) {
  fn();
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    fn();
    samples.push((performance.now() - start) / 1000);
  }
  return median(samples);
}

export async function benchXetCore({
  sizeMib = 100,
  runs = 3,
  python = path.join(here, "../.venv/bin/python"),
} = {}) {
  if (!existsSync(path.join(dist, "chunking.js")))
    throw new Error("bench/xet-core.mjs needs `npm run build` first");
  if (!existsSync(python))
    throw new Error(`bench/xet-core.mjs needs the Python client: ${python} (run .ci/run once)`);
  const { Chunker, chunkBuffer } = await import(path.join(dist, "chunking.js"));
  const { chunkHash, fileHash, hashToHex, loadXetHashing } = await import(path.join(dist, "hashing.js"));
  await loadXetHashing();
  const { parseXorb, serializeXorb, XORB_MAX_BYTES } = await import(path.join(dist, "xorb.js"));

  const size = sizeMib * 1024 * 1024;
  const random = seededKeystream(1, "xet-core").update(Buffer.alloc(size));
  // Compressible data for the LZ4 path: a vocabulary of words picked by the same keystream.
  const words = ["tensor ", "weights ", "layer ", "model ", "token ", "dataset ", "the ", "of "];
  const text = Buffer.from(Array.from(random.subarray(0, size / 6), (b) => words[b & 7]).join("")).subarray(
    0,
    size / 4,
  );
  const mb = (bytes, seconds) => (bytes / 1e6 / seconds).toFixed(0);
  const rows = [];

  const chunking = time(runs, () => {
    const chunker = new Chunker();
    for (let at = 0; at < size; at += 8 * 1024 * 1024)
      chunker.push(random.subarray(at, at + 8 * 1024 * 1024));
    chunker.finish();
  });
  rows.push(["chunking (Gear hash, boundaries only)", mb(size, chunking)]);

  const chunks = chunkBuffer(random);
  const hashing = time(runs, () => {
    for (const chunk of chunks) chunkHash(chunk.data);
  });
  rows.push([`chunk hashing (BLAKE3 keyed, hash-wasm, ${chunks.length} chunks)`, mb(size, hashing)]);

  let ours;
  const whole = time(runs, () => {
    ours = hashToHex(fileHash(chunkBuffer(random).map((c) => ({ hash: c.hash, length: c.data.length }))));
  });
  rows.push(["file hash: chunking + chunk hashes + Merkle tree", mb(size, whole)]);

  const sha = time(runs, () => createHash("sha256").update(random).digest());
  rows.push(["reference: SHA-256 (node:crypto, native)", mb(size, sha)]);

  const dir = mkdtempSync(path.join(os.tmpdir(), "xet-bench-"));
  let reference;
  try {
    const file = path.join(dir, "data.bin");
    writeFileSync(file, random);
    const result = spawnSync(python, ["-c", HASH_FILES, file, String(runs)], {
      encoding: "utf8",
      env: { ...process.env, HOME: dir },
    });
    if (result.status !== 0) throw new Error(`hf_xet hash_files failed: ${result.stderr}`);
    const [hash, ...times] = result.stdout.trim().split(" ");
    if (hash !== ours) throw new Error(`file hash ${ours} differs from hf_xet's ${hash}`);
    reference = median(times.map(Number));
    rows.push(["reference: hf_xet hash_files (Rust) on the same file", mb(size, reference)]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const { lz4CompressFrame, lz4DecompressFrame } = await import(path.join(dist, "lz4.js"));
  const textChunks = chunkBuffer(text).map((c) => c.data);
  let frames;
  const compress = time(runs, () => {
    frames = textChunks.map((chunk) => lz4CompressFrame(chunk));
  });
  const decompress = time(runs, () => {
    frames.forEach((frame, i) => lz4DecompressFrame(frame, textChunks[i].length));
  });
  rows.push(["LZ4 compression of text chunks", mb(text.length, compress)]);
  rows.push(["LZ4 decompression of text chunks", mb(text.length, decompress)]);

  /** Xorbs of at most 64 MiB from chunks of `data`. */
  const xorbsOf = (data, compression) => {
    const groups = [[]];
    let bytes = 0;
    for (const chunk of chunkBuffer(data)) {
      if (bytes + chunk.data.length + 8 > XORB_MAX_BYTES - 1024 * 1024) {
        groups.push([]);
        bytes = 0;
      }
      groups.at(-1).push(chunk.data);
      bytes += chunk.data.length + 8;
    }
    return groups.map((group) => serializeXorb(group, { compression }));
  };
  for (const [name, data] of [
    ["random, stored uncompressed", random],
    ["text, LZ4", text],
  ]) {
    let xorbs;
    const serialize = time(1, () => {
      xorbs = xorbsOf(data, "lz4");
    });
    const stored = xorbs.reduce((n, x) => n + x.bytes.length, 0);
    const verify = time(runs, () => {
      for (const xorb of xorbs) parseXorb(xorb.bytes, { expectedHash: xorb.hash });
    });
    rows.push([
      `xorb serialization, ${name} (${(stored / data.length).toFixed(2)} of the size)`,
      mb(data.length, serialize),
    ]);
    rows.push([`xorb verification, ${name}: parse, decompress, hash, Merkle`, mb(data.length, verify)]);
  }

  printTable(
    `Xet protocol core on ${sizeMib} MiB (median of ${runs}; MB/s of uncompressed data)`,
    ["step", "MB/s"],
    rows,
  );
  console.log(
    `ratio: file hash ${(reference / whole).toFixed(2)}x hf_xet's hash_files, ${(sha / whole).toFixed(2)}x SHA-256's speed`,
  );
  printEndLoad();
}

if (isMain(import.meta.url)) {
  await benchXetCore({
    sizeMib: wholeNumber("size-mib", option("size-mib", "100")),
    runs: wholeNumber("runs", option("runs", "3")),
    python: option("python", path.join(here, "../.venv/bin/python")),
  });
}
