import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { gitEnvironment, runGit } from "./git-command.js";
import type { RepoStorage } from "./repo-storage.js";

/** What git says of an object: its id, type and size in bytes. */
export interface ObjectInfo {
  oid: string;
  type: "blob" | "tree" | "commit" | "tag";
  size: number;
}

const HEADER = /^([0-9a-f]{40}|[0-9a-f]{64}) (blob|tree|commit|tag) (\d+)$/;

/**
 * Reads objects of repositories by name (`<commit>`, `<rev>^{commit}`,
 * `<commit>:<path>`) for the download path. Each repository gets a
 * long-lived `git cat-file --batch-command -z` (one process answers every
 * lookup, no spawn per request); the processes are bounded in number and
 * end when idle. Git sees new refs and objects on every lookup.
 */
export interface ObjectReader {
  info(repositoryId: string, name: string): Promise<ObjectInfo | null>;
  contents(repositoryId: string, name: string): Promise<{ info: ObjectInfo; content: Buffer } | null>;
  close(): void;
}

interface Pending {
  kind: "info" | "contents";
  resolve: (value: { info: ObjectInfo; content?: Buffer } | null) => void;
  reject: (err: Error) => void;
}

/** One `git cat-file --batch-command -z` process: commands go in NUL-terminated, answers come back in order. */
class BatchProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly queue: Pending[] = [];
  private buffer: Buffer = Buffer.alloc(0);
  private ended = false;
  lastUsed = Date.now();

  constructor(cwd: string, onExit: () => void) {
    this.child = spawn("git", ["cat-file", "--batch-command", "-z"], { cwd, env: gitEnvironment() });
    this.child.stdout.on("data", (chunk: Buffer) => this.take(chunk));
    this.child.stderr.resume();
    this.child.stdin.on("error", () => {});
    const fail = (err: Error) => {
      this.ended = true;
      for (const pending of this.queue.splice(0)) pending.reject(err);
      onExit();
    };
    this.child.once("error", fail);
    this.child.once("exit", (code) => fail(new Error(`git cat-file exited (${code ?? "signal"})`)));
  }

  get busy(): boolean {
    return this.queue.length > 0;
  }

  ask(kind: "info" | "contents", name: string): Promise<{ info: ObjectInfo; content?: Buffer } | null> {
    if (this.ended) return Promise.reject(new Error("git cat-file has ended"));
    this.lastUsed = Date.now();
    return new Promise((resolve, reject) => {
      this.queue.push({ kind, resolve, reject });
      this.child.stdin.write(`${kind} ${name}\0`);
    });
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.child.stdin.end();
    this.child.kill();
  }

  /** Answers the oldest questions whose whole answer has arrived. */
  private take(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (let head = this.queue[0]; head; head = this.queue[0]) {
      const newline = this.buffer.indexOf(10);
      if (newline === -1) return;
      const line = this.buffer.subarray(0, newline).toString("utf8");
      const match = HEADER.exec(line);
      if (!match) {
        // "<name> missing" or "<name> ambiguous": nothing by that name.
        this.buffer = this.buffer.subarray(newline + 1);
        this.queue.shift();
        head.resolve(null);
        continue;
      }
      const info = { oid: match[1] ?? "", type: match[2] as ObjectInfo["type"], size: Number(match[3]) };
      if (head.kind === "info") {
        this.buffer = this.buffer.subarray(newline + 1);
        this.queue.shift();
        head.resolve({ info });
        continue;
      }
      const end = newline + 1 + info.size;
      if (this.buffer.length < end + 1) return;
      const content = Buffer.from(this.buffer.subarray(newline + 1, end));
      this.buffer = this.buffer.subarray(end + 1);
      this.queue.shift();
      head.resolve({ info, content });
    }
  }
}

/** Whether this git has `cat-file --batch-command -z` (2.38 and newer). */
export async function batchCommandSupported(cwd: string): Promise<boolean> {
  const version = /git version (\d+)\.(\d+)/.exec((await runGit(["--version"], { cwd })).toString());
  const [major, minor] = [Number(version?.[1] ?? 0), Number(version?.[2] ?? 0)];
  return major > 2 || (major === 2 && minor >= 38);
}

/** Long-lived readers, at most `maxProcesses` at once, each ended after `idleMs` without a question. */
export function createObjectReader(
  storage: RepoStorage,
  { maxProcesses = 16, idleMs = 30_000 }: { maxProcesses?: number; idleMs?: number } = {},
): ObjectReader {
  const processes = new Map<string, BatchProcess>();
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [id, process] of processes)
        if (!process.busy && now - process.lastUsed > idleMs) {
          processes.delete(id);
          process.end();
        }
    },
    Math.max(1000, idleMs / 2),
  );
  sweep.unref();

  function processOf(id: string): BatchProcess {
    const found = processes.get(id);
    if (found) {
      // Most recently used last, so the first entry is the one to end when full.
      processes.delete(id);
      processes.set(id, found);
      return found;
    }
    if (processes.size >= maxProcesses) {
      const idle = [...processes].find(([, process]) => !process.busy);
      if (idle) {
        processes.delete(idle[0]);
        idle[1].end();
      }
    }
    const created = new BatchProcess(storage.pathOf(id), () => {
      if (processes.get(id) === created) processes.delete(id);
    });
    processes.set(id, created);
    return created;
  }

  /** A name git reads as one command argument: no NUL, which ends a command. */
  const askable = (name: string) => name.length > 0 && !name.includes("\0");

  return {
    async info(id, name) {
      if (!askable(name)) return null;
      return (await processOf(id).ask("info", name))?.info ?? null;
    },
    async contents(id, name) {
      if (!askable(name)) return null;
      const answer = await processOf(id).ask("contents", name);
      return answer?.content ? { info: answer.info, content: answer.content } : null;
    },
    close() {
      clearInterval(sweep);
      for (const process of processes.values()) process.end();
      processes.clear();
    },
  };
}

/** The same questions answered by a git process per question, for a git older than 2.38. */
export function createSpawningObjectReader(storage: RepoStorage): ObjectReader {
  const ask = async (id: string, name: string, contents: boolean) => {
    if (name.length === 0 || name.includes("\n") || name.includes("\0")) return null;
    const out = await runGit(["cat-file", contents ? "--batch" : "--batch-check"], {
      cwd: storage.pathOf(id),
      input: `${name}\n`,
    });
    const newline = out.indexOf(10);
    const match = HEADER.exec(out.subarray(0, newline).toString("utf8"));
    if (!match) return null;
    const info = { oid: match[1] ?? "", type: match[2] as ObjectInfo["type"], size: Number(match[3]) };
    return { info, content: out.subarray(newline + 1, newline + 1 + info.size) };
  };
  return {
    info: async (id, name) => (await ask(id, name, false))?.info ?? null,
    contents: (id, name) => ask(id, name, true),
    close: () => {},
  };
}
