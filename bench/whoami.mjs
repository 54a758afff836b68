// GET /api/whoami with a valid token through a real hub, against a bare Fastify handler, in one run. For
// context it also loads the bare handler with Fastify's own request logging: the hub records every request,
// and what that costs any Fastify app shows how much of the gap to the bare handler is the log alone.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { benchToken, hubd, load, printComparison, startServer } from "./lib.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));

export async function benchWhoami({ duration = 10, connections = 16 } = {}) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "hub-bench-"));
  const env = {
    PATH: process.env.PATH,
    HUB_DATA_DIR: dataDir,
    HUB_PORT: "0",
    HUB_RATE_LIMIT: "1000000000",
    ...(process.env.HUB_DATABASE_URL ? { HUB_DATABASE_URL: process.env.HUB_DATABASE_URL } : {}),
  };
  const token = await benchToken(env, "read");

  const hub = await startServer(hubd, ["serve", "--only", "hub"], {
    ...env,
    HUB_LOG_LEVEL: process.env.HUB_LOG_LEVEL ?? "info",
  });
  const bare = await startServer(path.join(here, "bare-server.mjs"), [], { PATH: process.env.PATH });
  const logging = await startServer(path.join(here, "bare-server.mjs"), ["--log"], {
    PATH: process.env.PATH,
  });
  try {
    const bareResult = await load(bare.url, { duration, connections });
    const loggingResult = await load(logging.url, { duration, connections });
    const hubResult = await load(`${hub.url}/api/whoami`, {
      headers: { authorization: `Bearer ${token}` },
      duration,
      connections,
    });
    const ratio = hubResult.rps / bareResult.rps;
    printComparison(
      `GET /api/whoami (token, ${env.HUB_DATABASE_URL ? "PostgreSQL" : "SQLite"}) vs a bare Fastify handler, ${connections} connections, ${duration}s`,
      [
        ["bare Fastify handler", bareResult],
        ["the same with Fastify's request logging", loggingResult],
        ["hub /api/whoami", hubResult],
      ],
      ratio,
      ">= 0.50 of the bare handler's throughput",
    );
    console.log(
      `for context: the logging bare handler is ${(loggingResult.rps / bareResult.rps).toFixed(2)}x the bare one; the hub is ${(hubResult.rps / loggingResult.rps).toFixed(2)}x the logging one`,
    );
    console.log(
      `hub p99 ${hubResult.p99.toFixed(2)} ms at ${connections} connections (target < 2 ms): ${hubResult.p99 < 2 ? "met" : "MISSED"}`,
    );
    return { ratio, hub: hubResult, bare: bareResult, logging: loggingResult };
  } finally {
    await hub.stop();
    await bare.stop();
    await logging.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchWhoami();
