import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { CoalescedLines, FdSink, infoLineWriter, loggerOptions, type LineSink } from "./logger.js";

/** A sink that records each write it is asked for. */
function recordingSink() {
  const writes: string[] = [];
  const calls: string[] = [];
  const sink: LineSink = {
    fd: -1,
    write: (text) => writes.push(text),
    flushSync: () => void calls.push("flushSync"),
  };
  return { sink, writes, calls };
}

describe("log lines written together under load", () => {
  it("writes a line at once when the last write is older than the window", async () => {
    const { sink, writes } = recordingSink();
    const lines = new CoalescedLines(sink, 20);
    lines.write("a\n");
    expect(writes).toEqual(["a\n"]);
    await sleep(30);
    lines.write("b\n");
    expect(writes).toEqual(["a\n", "b\n"]);
  });

  it("holds lines that come within the window and writes them together, in order, when it passes", async () => {
    const { sink, writes } = recordingSink();
    const lines = new CoalescedLines(sink, 40);
    for (const name of ["a", "b", "c", "d"]) lines.write(`${name}\n`);
    expect(writes).toEqual(["a\n"]);
    await sleep(80);
    expect(writes).toEqual(["a\n", "b\nc\nd\n"]);
  });

  it("writes what waits when flushed, then flushes the sink", () => {
    const { sink, writes, calls } = recordingSink();
    const lines = new CoalescedLines(sink, 60_000);
    lines.write("a\n");
    lines.write("b\n");
    let flushed = false;
    lines.flush(() => (flushed = true));
    expect(writes).toEqual(["a\n", "b\n"]);
    expect(flushed).toBe(true);
    lines.write("c\n");
    lines.flushSync();
    expect(writes).toEqual(["a\n", "b\n", "c\n"]);
    expect(calls).toEqual(["flushSync", "flushSync"]);
  });

  it("at exit writes what waits straight to the sink's descriptor, after what the sink held", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "hub-log-"));
    const file = path.join(dir, "log");
    const fd = openSync(file, "w");
    try {
      const calls: string[] = [];
      const sink: LineSink = {
        fd,
        write: (text) => calls.push(`write ${text}`),
        flushSync: () => {
          calls.push("flushSync");
          writeSync(fd, "held by the sink\n");
        },
      };
      const lines = new CoalescedLines(sink, 60_000);
      lines.write("first\n");
      lines.write("second\n");
      lines.flushSync();
      expect(calls).toEqual(["write first\n", "flushSync"]);
      expect(readFileSync(file, "utf8")).toBe("held by the sink\nsecond\n");
    } finally {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("info lines built by the caller", () => {
  it("are the lines pino writes for the same fields", () => {
    const ours: string[] = [];
    const theirs: string[] = [];
    const direct = infoLineWriter(
      pino(loggerOptions("info"), { write: (line: string) => void ours.push(line) }),
    );
    const logger = pino(loggerOptions("info"), { write: (line: string) => void theirs.push(line) });
    const path = '/v1/"quoted"\\path\u2028';
    direct?.(`"inferenceId":"inf_1","path":${JSON.stringify(path)},"status":200,"ms":1.5,`, "router request");
    logger.info({ inferenceId: "inf_1", path, status: 200, ms: 1.5 }, "router request");
    const strip = (line: string) => line.replace(/"time":\d+/, '"time":0');
    expect(ours).toHaveLength(1);
    expect(strip(ours[0] ?? "")).toBe(strip(theirs[0] ?? ""));
  });

  it("write nothing below the logger's level, and are not offered for a logger that is not pino's", () => {
    const lines: string[] = [];
    const quiet = pino(loggerOptions("warn"), { write: (line: string) => void lines.push(line) });
    infoLineWriter(quiet)?.(`"status":200,`, "request");
    expect(lines).toEqual([]);
    expect(infoLineWriter({ info: () => undefined })).toBeNull();
  });
});

describe("the log's descriptor writer", () => {
  it("writes every line in order, joining what comes while a write is in flight", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "hub-fd-sink-"));
    const file = path.join(dir, "log");
    const fd = openSync(file, "w");
    const sink = new FdSink(fd);
    const lines = Array.from({ length: 500 }, (_, i) => `{"line":${i}}\n`);
    for (const line of lines.slice(0, 250)) sink.write(line);
    await sleep(50);
    for (const line of lines.slice(250, 400)) sink.write(line);
    // What is still queued goes synchronously, after what is in flight.
    for (const line of lines.slice(400)) sink.write(line);
    await sleep(50);
    sink.flushSync();
    closeSync(fd);
    expect(readFileSync(file, "utf8")).toBe(lines.join(""));
    rmSync(dir, { recursive: true, force: true });
  });

  it("stops at a closed pipe instead of retrying it forever, and flushes at once", async () => {
    // A pipe whose reader has gone, as a log collector that died leaves standard output.
    const dir = mkdtempSync(path.join(os.tmpdir(), "hub-fd-sink-"));
    const fifo = path.join(dir, "fifo");
    execFileSync("mkfifo", [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const fd = openSync(fifo, constants.O_WRONLY);
    closeSync(reader);
    const sink = new FdSink(fd);
    sink.write("lost\n");
    sink.write("lost too\n");
    const started = Date.now();
    sink.flushSync();
    await sleep(50);
    sink.write("after\n");
    sink.flushSync();
    expect(Date.now() - started).toBeLessThan(1000);
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  });
});
