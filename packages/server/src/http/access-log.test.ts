import type { FastifyReply, FastifyRequest } from "fastify";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loggerOptions } from "../logger.js";
import { startInProcessHub, type InProcessHub } from "../test-support/hub-inprocess.js";
import { AccessLog, lazyChildLoggers } from "./access-log.js";

interface LogLine {
  level: number;
  time: number;
  pid: number;
  hostname: string;
  reqId: string;
  msg: string;
  method?: string;
  path?: string;
  status?: number;
  ms?: number;
}

describe("the access log", () => {
  let hub: InProcessHub;
  let token: string;

  beforeAll(async () => {
    hub = await startInProcessHub({ env: { HUB_LOG_LEVEL: "info" } });
    await hub.createUser("alice");
    token = await hub.createToken("alice", ["--role", "read"]);
  });
  afterAll(() => hub?.stop());

  function linesOf(requestId: string): LogLine[] {
    return hub.logs.map((line) => JSON.parse(line) as LogLine).filter((line) => line.reqId === requestId);
  }

  it("writes one line per request as pino would, without the query string", async () => {
    const before = Date.now();
    const response = await hub.request("/api/whoami?signature=not-for-the-log", { token });
    expect(response.status).toBe(200);
    const requestId = response.headers.get("x-request-id") ?? "";
    const lines = linesOf(requestId);
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(line).toEqual({
      level: 30,
      time: expect.any(Number) as number,
      pid: process.pid,
      hostname: expect.any(String) as string,
      reqId: requestId,
      method: "GET",
      path: "/api/whoami",
      status: 200,
      ms: expect.any(Number) as number,
      msg: "request",
    });
    expect(line?.time).toBeGreaterThanOrEqual(before);
    expect(hub.logs.join("\n")).not.toContain("not-for-the-log");
  });

  it("writes nothing for a request when the level is above info", async () => {
    const quiet = await startInProcessHub({ env: { HUB_LOG_LEVEL: "warn" } });
    try {
      const response = await quiet.request("/api/health");
      expect(response.status).toBe(200);
      expect(quiet.logs.filter((line) => line.includes('"msg":"request"'))).toEqual([]);
    } finally {
      await quiet.stop();
    }
  });
});

describe("the access line and a request's logger", () => {
  function memoryLogger() {
    const lines: string[] = [];
    const logger = pino(loggerOptions("info"), { write: (line: string) => void lines.push(line) });
    return { logger, lines };
  }

  it("escapes what the path holds, so each access line stays one JSON object", () => {
    const { logger, lines } = memoryLogger();
    const request = { id: "r-0", method: "GET", url: '/api/models/a"b\\c\u2028d?x=1' };
    const reply = { statusCode: 404, elapsedTime: 1.26, getHeader: () => undefined };
    new AccessLog(logger).requestCompleted(
      null,
      request as unknown as FastifyRequest,
      reply as unknown as FastifyReply,
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]?.endsWith("}\n")).toBe(true);
    expect(JSON.parse(lines[0] ?? "")).toMatchObject({
      reqId: "r-0",
      path: '/api/models/a"b\\c\u2028d',
      status: 404,
      ms: 1.3,
    });
  });

  it("is made when something logs through it, with the request's bindings", () => {
    const { logger, lines } = memoryLogger();
    const child = lazyChildLoggers(logger, { reqId: "r-1" }, {});
    expect(lines).toEqual([]);
    child.warn({ repo: "alice/model" }, "git could not start");
    child.debug("below the level");
    const [line] = lines.map((text) => JSON.parse(text) as Record<string, unknown>);
    expect(lines).toHaveLength(1);
    expect(line).toMatchObject({ level: 40, reqId: "r-1", repo: "alice/model", msg: "git could not start" });
  });

  it("keeps redacting, reads and sets its level, and makes children of its own", () => {
    const { logger, lines } = memoryLogger();
    const child = lazyChildLoggers(logger, { reqId: "r-2" }, {});
    child.error({ headers: { authorization: "Bearer secret-value" } }, "refused");
    expect(child.level).toBe("info");
    child.level = "error";
    child.info("now below the level");
    child.child({ step: "inner" }).error("inner failure");
    const parsed = lines.map((text) => JSON.parse(text) as Record<string, unknown>);
    expect(parsed).toHaveLength(2);
    expect(parsed[0]).toMatchObject({ reqId: "r-2", headers: { authorization: "[redacted]" } });
    expect(parsed[1]).toMatchObject({ reqId: "r-2", step: "inner", msg: "inner failure" });
    expect(lines.join("")).not.toContain("secret-value");
  });
});
