import { createHash } from "node:crypto";
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";

/** Bytes in one slot of a job's shared arena: what the worker hashes at a time. */
const SLOT_BYTES = 1024 * 1024;
/** Slots per job: how far the worker may fall behind before `update` waits (so memory stays bounded). */
const SLOTS = 8;
/** Objects from this size on are hashed on a worker; starting one costs more than hashing a small object here. */
const OFFLOAD_BYTES = 16 * 1024 * 1024;
/** Hashing workers at most: one per core the event loop does not need, at least one. */
const MAX_WORKERS = Math.min(4, Math.max(1, availableParallelism() - 1));

/** What the hub sends a hashing worker: a job's arena, a filled slot of it, then its digest (or its end). */
type HashRequest =
  | { job: number; arena: SharedArrayBuffer }
  | { job: number; slot: number; length: number }
  | { job: number; digest: true }
  | { job: number; abort: true };

/** What a hashing worker answers: a slot hashed (free again), or a job's hex digest. */
type HashReply = { job: number; slot: number } | { job: number; hex: string };

/**
 * A hashing worker's whole program, run from this string (so it needs no file
 * of its own beside the compiled module). Each job has its own SHA-256 and its
 * own arena of slots shared with the hub: the bytes are never moved or copied
 * between threads, and nothing is allocated per batch.
 */
const WORKER_SOURCE = `
const { createHash } = require("node:crypto");
const { parentPort } = require("node:worker_threads");
const SLOT_BYTES = ${SLOT_BYTES};
const jobs = new Map();
parentPort.on("message", (request) => {
  const { job } = request;
  if (request.arena) {
    jobs.set(job, { hash: createHash("sha256"), arena: Buffer.from(request.arena) });
  } else if (request.length !== undefined) {
    const { hash, arena } = jobs.get(job);
    const start = request.slot * SLOT_BYTES;
    hash.update(arena.subarray(start, start + request.length));
    parentPort.postMessage({ job, slot: request.slot });
  } else if (request.digest) {
    const hex = jobs.get(job).hash.digest("hex");
    jobs.delete(job);
    parentPort.postMessage({ job, hex });
  } else {
    jobs.delete(job);
  }
});
`;

interface HashWorker {
  worker: Worker;
  jobs: Map<number, OffloadedSha256>;
}

/**
 * The process's hashing workers, started on first use and kept; they do not
 * keep the process alive. A job goes to the least busy one, and a new one
 * starts while every worker has a job and there is room for another.
 */
const workers: HashWorker[] = [];
let nextJob = 1;

function leastBusy(): HashWorker {
  const idle = workers.reduce<HashWorker | undefined>(
    (best, w) => (!best || w.jobs.size < best.jobs.size ? w : best),
    undefined,
  );
  if (idle && (idle.jobs.size === 0 || workers.length >= MAX_WORKERS)) return idle;
  const started: HashWorker = { worker: new Worker(WORKER_SOURCE, { eval: true }), jobs: new Map() };
  started.worker.unref();
  started.worker.on("message", (reply: HashReply) => started.jobs.get(reply.job)?.receive(reply));
  started.worker.on("error", (error) => {
    workers.splice(workers.indexOf(started), 1);
    for (const job of started.jobs.values()) job.fail(error);
  });
  workers.push(started);
  return started;
}

/**
 * SHA-256 of one upload computed on a hashing worker, so the event loop keeps
 * serving while a large object streams in and the hashing runs on another
 * core. `update` copies a chunk into the job's shared slots and hands each
 * full slot to the worker, waiting while every slot is taken; `digest`
 * resolves with the hex digest once the worker has hashed it all.
 */
class OffloadedSha256 implements UploadHash {
  private readonly job = nextJob++;
  private readonly home = leastBusy();
  private readonly arena = new SharedArrayBuffer(SLOTS * SLOT_BYTES);
  private readonly free = Array.from({ length: SLOTS }, (_, slot) => slot);
  private slot: number | null = null;
  private filled = 0;
  private failure: Error | null = null;
  private slotFreed: { resolve: () => void; reject: (error: Error) => void } | null = null;
  private digested: { resolve: (hex: string) => void; reject: (error: Error) => void } | null = null;

  constructor() {
    this.home.jobs.set(this.job, this);
    this.post({ job: this.job, arena: this.arena });
  }

  async update(chunk: Buffer): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.failure) throw this.failure;
      if (this.slot === null) {
        const next = this.free.pop();
        if (next === undefined) {
          await new Promise<void>((resolve, reject) => (this.slotFreed = { resolve, reject }));
          continue;
        }
        this.slot = next;
      }
      const target = Buffer.from(this.arena, this.slot * SLOT_BYTES, SLOT_BYTES);
      const copied = chunk.copy(target, this.filled, offset);
      this.filled += copied;
      offset += copied;
      if (this.filled === SLOT_BYTES) this.send();
    }
  }

  digest(): Promise<string> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.filled > 0) this.send();
    const answer = new Promise<string>((resolve, reject) => (this.digested = { resolve, reject }));
    this.post({ job: this.job, digest: true });
    return answer;
  }

  /** Forgets the job, finished or not; the worker drops what it holds of it. */
  close(): void {
    if (!this.home.jobs.delete(this.job)) return;
    if (!this.failure) this.post({ job: this.job, abort: true });
  }

  /** A reply from the worker for this job. */
  receive(reply: HashReply): void {
    if ("hex" in reply) {
      this.home.jobs.delete(this.job);
      this.digested?.resolve(reply.hex);
      return;
    }
    this.free.push(reply.slot);
    this.slotFreed?.resolve();
    this.slotFreed = null;
  }

  /** The worker failed: every wait of this job ends with the error. */
  fail(error: Error): void {
    this.failure = error;
    this.slotFreed?.reject(error);
    this.digested?.reject(error);
  }

  private send(): void {
    if (this.slot === null) return;
    this.post({ job: this.job, slot: this.slot, length: this.filled });
    this.slot = null;
    this.filled = 0;
  }

  private post(request: HashRequest): void {
    this.home.worker.postMessage(request);
  }
}

/** The SHA-256 of one upload as it streams in: `update` gives a promise to wait for while the hashing is behind. */
export interface UploadHash {
  update(chunk: Buffer): Promise<void> | null;
  digest(): Promise<string>;
  close(): void;
}

/** The hash for an upload of `size` bytes: on a hashing worker when large, on the event loop otherwise. */
export function uploadHash(size: number): UploadHash {
  if (size >= OFFLOAD_BYTES) return new OffloadedSha256();
  const hash = createHash("sha256");
  return {
    update: (chunk) => {
      hash.update(chunk);
      return null;
    },
    digest: async () => hash.digest("hex"),
    close: () => {},
  };
}
