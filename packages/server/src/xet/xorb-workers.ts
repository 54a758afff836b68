/**
 * Xorb verification off the event loop: `parseXorb` (every chunk decompressed and hashed with BLAKE3, the
 * Merkle hash against the name) costs 0.1-0.4 s for a full 64 MiB xorb, during which the hub would answer
 * nothing else. Large xorbs go to a small pool of worker threads instead; the bytes are transferred to the
 * worker and back, never copied. The answer is exactly `parseXorb`'s, its `XetFormatError` included.
 * https://huggingface.co/docs/xet/xorb
 */
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { XetFormatError, type XetObjectKind } from "./xet-format-error.js";
import { parseXorb, type ParsedXorb } from "./xorb.js";

/** Xorbs from this size on are verified on a worker; a small one costs less here than the trip. */
const OFFLOAD_BYTES = 1024 * 1024;
/** Verification workers at most: one per core the event loop does not need, at least one. */
const MAX_WORKERS = Math.min(4, Math.max(1, availableParallelism() - 1));

/** A compiled module of this folder, as a worker can import it (under the test runner: the built one). */
function compiled(name: string): string {
  const url = new URL(`./${name}.js`, import.meta.url);
  if (import.meta.url.endsWith(".ts")) url.pathname = url.pathname.replace("/src/xet/", "/dist/xet/");
  return url.href;
}

/**
 * A verification worker's program, run from this string (a CommonJS script that imports the compiled
 * modules): it loads the hashing once, then parses each xorb it is sent and sends the bytes back with the
 * answer, or the format error's fields.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const ready = Promise.all([import(workerData.xorb), import(workerData.hashing)]).then(
  async ([xorb, hashing]) => {
    await hashing.loadXetHashing();
    return xorb;
  },
);
parentPort.on("message", async ({ id, bytes, expectedHash }) => {
  try {
    const { parseXorb } = await ready;
    const parsed = parseXorb(bytes, { expectedHash });
    parentPort.postMessage({ id, bytes, parsed }, [bytes.buffer]);
  } catch (error) {
    const format =
      error && error.name === "XetFormatError"
        ? { kind: error.kind, message: error.message, offset: error.offset, chunkIndex: error.chunkIndex }
        : undefined;
    parentPort.postMessage({ id, bytes, format, failure: format ? undefined : String(error && error.stack) }, [
      bytes.buffer,
    ]);
  }
});
`;

interface VerifyReply {
  id: number;
  bytes: Uint8Array;
  parsed?: ParsedXorb;
  format?: { kind: XetObjectKind; message: string; offset?: number; chunkIndex?: number };
  failure?: string;
}

interface Pending {
  resolve: (answer: { parsed: ParsedXorb; bytes: Buffer }) => void;
  reject: (error: Error) => void;
}

interface VerifyWorker {
  worker: Worker;
  pending: Map<number, Pending>;
}

/** The process's verification workers, started on first use and kept; they do not keep the process alive. */
const workers: VerifyWorker[] = [];
let nextId = 1;

function leastBusy(): VerifyWorker {
  const idle = workers.reduce<VerifyWorker | undefined>(
    (best, w) => (!best || w.pending.size < best.pending.size ? w : best),
    undefined,
  );
  if (idle && (idle.pending.size === 0 || workers.length >= MAX_WORKERS)) return idle;
  const started: VerifyWorker = {
    worker: new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { xorb: compiled("xorb"), hashing: compiled("hashing") },
    }),
    pending: new Map(),
  };
  started.worker.unref();
  started.worker.on("message", (reply: VerifyReply) => {
    const job = started.pending.get(reply.id);
    if (!job) return;
    started.pending.delete(reply.id);
    const bytes = Buffer.from(reply.bytes.buffer, reply.bytes.byteOffset, reply.bytes.byteLength);
    if (reply.parsed) job.resolve({ parsed: reply.parsed, bytes });
    else if (reply.format) {
      const { kind, message, offset, chunkIndex } = reply.format;
      job.reject(new XetFormatError(kind, message, { offset, chunkIndex }));
    } else job.reject(new Error(`Xorb verification failed on a worker: ${reply.failure ?? "unknown"}`));
  });
  const fail = (error: Error) => {
    const at = workers.indexOf(started);
    if (at >= 0) workers.splice(at, 1);
    for (const job of started.pending.values()) job.reject(error);
    started.pending.clear();
  };
  started.worker.on("error", fail);
  started.worker.on("exit", (code) => fail(new Error(`A xorb verification worker exited with ${code}.`)));
  workers.push(started);
  return started;
}

/**
 * Parses and verifies a xorb as `parseXorb` does (rejecting with the same `XetFormatError`), on a worker
 * thread when it is large. The bytes move to the worker and back: the caller gets them again in the answer and
 * must not use `bytes` meanwhile (it is detached while the worker holds it).
 */
export function verifyXorb(
  bytes: Buffer,
  expectedHash: string,
): Promise<{ parsed: ParsedXorb; bytes: Buffer }> {
  if (bytes.length < OFFLOAD_BYTES) {
    try {
      return Promise.resolve({ parsed: parseXorb(bytes, { expectedHash }), bytes });
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }
  // Only a buffer that owns its whole memory can be transferred; anything else is copied once.
  let view = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteOffset !== 0 || bytes.byteLength !== bytes.buffer.byteLength || isShared(bytes.buffer)) {
    view = new Uint8Array(bytes.byteLength);
    view.set(bytes);
  }
  const home = leastBusy();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    home.pending.set(id, { resolve, reject });
    home.worker.postMessage({ id, bytes: view, expectedHash }, [view.buffer as ArrayBuffer]);
  });
}

function isShared(buffer: ArrayBufferLike): boolean {
  return typeof SharedArrayBuffer !== "undefined" && buffer instanceof SharedArrayBuffer;
}
