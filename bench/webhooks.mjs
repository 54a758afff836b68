// Webhook delivery through a real hub (event → outbox row → worker → signed POST) against the floor: the same
// signed POST sent directly from this process to the same receiver, in one run.
import { execFileSync } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { Agent, fetch, request } from "undici";
import { hubd, isMain, percentile, printTable, startServer, wholeNumber } from "./lib.mjs";

/** A loopback receiver that notes when each delivery arrived, by the ref it reports. */
async function startReceiver() {
  const arrivals = new Map();
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const at = performance.now();
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const ref = body.updatedRefs?.[0]?.ref ?? body.ref;
      if (ref && !arrivals.has(ref)) arrivals.set(ref, at);
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/hooks`, arrivals, close: () => server.close() };
}

async function waitFor(check, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("deliveries did not all arrive in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Runs `count` jobs, `concurrency` at a time. */
async function pool(count, concurrency, job) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await job(next++);
    }),
  );
}

export async function benchWebhooks({ sequential = 200, burst = 1000, concurrency = 16 } = {}) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "hub-bench-webhooks-"));
  const env = {
    PATH: process.env.PATH,
    HUB_DATA_DIR: dataDir,
    HUB_PORT: "0",
    HUB_RATE_LIMIT: "1000000000",
    HUB_WEBHOOKS_ALLOW_PRIVATE: "1",
    ...(process.env.HUB_DATABASE_URL ? { HUB_DATABASE_URL: process.env.HUB_DATABASE_URL } : {}),
  };
  execFileSync(
    process.execPath,
    [hubd, "user", "create", "bench", "--email", "b@example.com", "--password-stdin"],
    {
      env,
      input: "bench-password\n",
    },
  );
  const token = execFileSync(
    process.execPath,
    [hubd, "token", "create", "bench", "--name", "b", "--role", "write"],
    {
      env,
    },
  )
    .toString()
    .trim()
    .split("\n")
    .pop();
  const receiver = await startReceiver();
  const hub = await startServer(hubd, ["serve", "--only", "hub"], env, { surfaces: ["hub"] });
  const api = (pathname, init = {}) =>
    fetch(`${hub.urls.hub}${pathname}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...init.headers },
    });
  try {
    await api("/api/repos", { method: "POST", body: JSON.stringify({ repo_id: "bench/hooks" }) });
    const route = await (
      await api("/api/me/webhooks", {
        method: "POST",
        body: JSON.stringify({
          url: receiver.url,
          watched: [{ type: "model", name: "bench/hooks" }],
          domains: ["repo.content"],
        }),
      })
    ).json();
    const branch = async (name) => {
      const response = await api(`/api/models/bench/hooks/branch/${name}`, { method: "POST", body: "{}" });
      if (response.status !== 200)
        throw new Error(`branch ${name}: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
      return performance.now();
    };

    // Latency: one operation at a time; how long after the operation answered its delivery arrived.
    const delays = [];
    for (let i = 0; i < sequential; i++) {
      const ref = `refs/heads/seq-${i}`;
      const answered = await branch(`seq-${i}`);
      await waitFor(() => receiver.arrivals.has(ref), 10_000);
      delays.push(receiver.arrivals.get(ref) - answered);
    }

    // The floor: the same kind of signed POST, sent directly from here.
    const agent = new Agent({ keepAliveTimeout: 4000 });
    const key = Buffer.from(route.secret.slice("whsec_".length), "base64");
    const direct = async (ref) => {
      const body = JSON.stringify({ ref, webhook: { id: route.id } });
      const id = `msg_${ref}`;
      const timestamp = Math.floor(Date.now() / 1000);
      const signature = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64");
      const started = performance.now();
      const response = await request(receiver.url, {
        method: "POST",
        dispatcher: agent,
        headers: {
          "content-type": "application/json",
          "webhook-id": id,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": `v1,${signature}`,
        },
        body,
      });
      await response.body.dump();
      return performance.now() - started;
    };
    const directTimes = [];
    for (let i = 0; i < sequential; i++) directTimes.push(await direct(`direct-${i}`));

    // Throughput: a burst of operations from `concurrency` clients; deliveries per second until the last arrived.
    const burstStart = performance.now();
    await pool(burst, concurrency, (i) => branch(`burst-${i}`));
    const lastAnswered = performance.now();
    await waitFor(
      () => [...Array(burst).keys()].every((i) => receiver.arrivals.has(`refs/heads/burst-${i}`)),
      120_000,
    );
    const lastArrival = Math.max(
      ...[...Array(burst).keys()].map((i) => receiver.arrivals.get(`refs/heads/burst-${i}`)),
    );
    const hubRate = burst / ((lastArrival - burstStart) / 1000);
    const operationRate = burst / ((lastAnswered - burstStart) / 1000);
    const directStart = performance.now();
    await pool(burst, concurrency, (i) => direct(`direct-burst-${i}`));
    const directRate = burst / ((performance.now() - directStart) / 1000);
    await agent.close();

    delays.sort((a, b) => a - b);
    directTimes.sort((a, b) => a - b);
    printTable(
      `Webhook delivery, ${sequential} events one at a time, then ${burst} from ${concurrency} clients`,
      ["path", "p50 ms", "p99 ms", "per second in the burst"],
      [
        [
          "hub: operation answered → delivery arrived",
          percentile(delays, 0.5).toFixed(2),
          percentile(delays, 0.99).toFixed(2),
          `${hubRate.toFixed(0)} (operations answered: ${operationRate.toFixed(0)}/s)`,
        ],
        [
          "direct signed POST from the client",
          percentile(directTimes, 0.5).toFixed(2),
          percentile(directTimes, 0.99).toFixed(2),
          directRate.toFixed(0),
        ],
      ],
    );
    console.log(
      `delivery delay p50: ${(percentile(delays, 0.5) / percentile(directTimes, 0.5)).toFixed(1)}x a direct POST; ` +
        `burst deliveries kept ${((hubRate / operationRate) * 100).toFixed(0)}% of the operation rate, ` +
        `the last ${(lastArrival - lastAnswered).toFixed(0)} ms after the last operation answered`,
    );
  } finally {
    await hub.stop();
    receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  await benchWebhooks({
    sequential: wholeNumber("sequential", process.env.BENCH_SEQUENTIAL ?? "200"),
    burst: wholeNumber("burst", process.env.BENCH_BURST ?? "1000"),
  });
}
