import { write, writeSync } from "node:fs";
import pino, { type LoggerOptions } from "pino";

/**
 * Structured JSON logs. Credentials can never reach them: the request
 * serializer records no headers, and the redaction list guards any header
 * object that is logged deliberately.
 */
export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: {
      paths: [
        "req.headers.authorization",
        "req.headers.cookie",
        "res.headers['set-cookie']",
        "headers.authorization",
        "headers.cookie",
        "password",
        "token",
      ],
      censor: "[redacted]",
    },
  };
}

/** What `CoalescedLines` writes to: an `FdSink` (or any writer with a synchronous flush). */
export interface LineSink {
  /** The descriptor it writes to, written to directly at exit. */
  readonly fd?: number;
  write(text: string): unknown;
  flushSync(): void;
}

/** How long a write waits, and how many times a flush at exit tries, when the reader is not keeping up. */
const AGAIN_MS = 10;
const AGAIN_AT_EXIT = 100;

/**
 * Text written to a descriptor (standard output) asynchronously: one write in flight, what comes meanwhile
 * joined into the next, in order. It stands where pino's destination (sonic-boom) stood, whose synchronous
 * flush retries a failed write forever: with the log's reader gone (a closed pipe) a process could never
 * finish its shutdown. Here a write that fails (EPIPE, say) stops the log for good and drops what waits: the
 * process goes on, and exits when asked. A full non-blocking pipe (EAGAIN) is tried again a little later.
 */
export class FdSink implements LineSink {
  private queued: string[] = [];
  /** The bytes in flight and how many of them are written, while a write is. */
  private inFlight: { bytes: Buffer; done: number } | null = null;
  private broken = false;

  constructor(readonly fd: number) {}

  write(text: string): boolean {
    if (this.broken) return true;
    this.queued.push(text);
    if (this.inFlight === null) this.next();
    return true;
  }

  private next(): void {
    if (this.broken || this.queued.length === 0) {
      this.inFlight = null;
      return;
    }
    this.inFlight = { bytes: Buffer.from(this.queued.join("")), done: 0 };
    this.queued = [];
    this.writeOn();
  }

  private writeOn(): void {
    const flight = this.inFlight;
    if (flight === null) return;
    write(this.fd, flight.bytes, flight.done, flight.bytes.length - flight.done, null, (err, written) => {
      if (err) {
        if (err.code === "EAGAIN") setTimeout(() => this.writeOn(), AGAIN_MS);
        else this.stop();
        return;
      }
      flight.done += written;
      if (flight.done < flight.bytes.length) this.writeOn();
      else this.next();
    });
  }

  private stop(): void {
    this.broken = true;
    this.queued = [];
    this.inFlight = null;
  }

  /**
   * Writes what waits synchronously (at exit or shutdown). A write in flight is left to finish on its own:
   * the queue only holds what came after it. A failed write stops the log; a full pipe is tried a bounded
   * number of times.
   */
  flushSync(): void {
    if (this.broken || this.queued.length === 0) return;
    const bytes = Buffer.from(this.queued.join(""));
    this.queued = [];
    let done = 0;
    for (let tries = 0; done < bytes.length;) {
      try {
        done += writeSync(this.fd, bytes, done, bytes.length - done);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EAGAIN" || ++tries > AGAIN_AT_EXIT) {
          this.stop();
          return;
        }
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, AGAIN_MS);
      }
    }
  }
}

/** The coalesced logs of this process, written out at exit (held weakly: a command's logger may come and go). */
const open = new Set<WeakRef<CoalescedLines>>();
let exitHandled = false;

function writeAtExit(lines: CoalescedLines): void {
  if (!exitHandled) {
    exitHandled = true;
    process.once("exit", () => {
      for (const ref of open) ref.deref()?.flushSync();
    });
  }
  for (const ref of open) if (ref.deref() === undefined) open.delete(ref);
  open.add(new WeakRef(lines));
}

/** How long lines may wait to be written together, by default. */
const COALESCE_MS = 5;

/**
 * Writes log lines as they come while they come rarely, and together once
 * they come faster: a line that follows the last write by less than
 * `windowMs` waits, with every line after it, for one write when the window
 * has passed. Every line is written, in order; under load one write carries
 * hundreds of access lines instead of one each (a write, a wake-up of the
 * thread pool and of the reader per request cost the Router about a tenth of
 * its time). At exit whatever waits is written synchronously; a process killed
 * outright can lose the last `windowMs` of lines.
 */
export class CoalescedLines {
  private pending = "";
  private timer: NodeJS.Timeout | null = null;
  private lastWrite = -Infinity;

  constructor(
    private readonly sink: LineSink,
    private readonly windowMs = COALESCE_MS,
    private readonly now: () => number = () => performance.now(),
  ) {
    writeAtExit(this);
  }

  write(line: string): boolean {
    const now = this.now();
    if (this.pending === "" && now - this.lastWrite >= this.windowMs) {
      this.lastWrite = now;
      this.sink.write(line);
    } else {
      this.pending += line;
      this.timer ??= setTimeout(this.release, Math.max(0, this.lastWrite + this.windowMs - now));
    }
    return true;
  }

  /** What waits, taken out, with its timer stopped. */
  private take(): string {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const text = this.pending;
    this.pending = "";
    return text;
  }

  /** Writes what waits now. */
  private readonly release = (): void => {
    this.lastWrite = this.now();
    const text = this.take();
    if (text !== "") this.sink.write(text);
  };

  /** pino's `flush`, used once, at shutdown: everything is written synchronously, then `callback` runs. */
  flush(callback?: (err?: Error) => void): void {
    this.flushSync();
    callback?.();
  }

  /**
   * Writes everything now, synchronously (at exit): what the sink holds, then
   * what waits here, straight to its descriptor, since a write handed to the
   * sink now would be asynchronous and could be cut short by the exit.
   */
  flushSync(): void {
    const text = this.take();
    try {
      this.sink.flushSync();
      if (text === "") return;
      if (this.sink.fd !== undefined && this.sink.fd >= 0) writeSync(this.sink.fd, text);
      else this.sink.write(text);
    } catch {
      // Exiting: there is nowhere left to say that the log could not be written.
    }
  }
}

/** Where pino writes a logger's lines, and the bindings (pid, hostname) each of its lines carries. */
interface PinoInternals {
  [pino.symbols.streamSym]?: { write(line: string): unknown };
  [pino.symbols.chindingsSym]?: string;
  isLevelEnabled(level: string): boolean;
}

/**
 * Writes `info` lines exactly as pino would for `logger.info({...fields}, msg)`,
 * from fields the caller has already written as JSON (`"key":value,` pairs,
 * each value through `JSON.stringify`): for the one line per request on hot
 * paths, where pino's generic serialization and redaction cost more than the
 * request's own work. Only fields that need no redaction belong here. Null
 * when the logger is not pino's (the line then goes through `logger.info`).
 */
export function infoLineWriter(logger: object): ((fields: string, msg: string) => void) | null {
  const pinoLogger = logger as PinoInternals;
  const stream = pinoLogger[pino.symbols.streamSym];
  if (!stream || typeof pinoLogger.isLevelEnabled !== "function") return null;
  const bindings = pinoLogger[pino.symbols.chindingsSym] ?? "";
  return (fields, msg) => {
    if (!pinoLogger.isLevelEnabled("info")) return;
    stream.write(`{"level":30,"time":${Date.now()}${bindings},${fields}"msg":${JSON.stringify(msg)}}\n`);
  };
}
