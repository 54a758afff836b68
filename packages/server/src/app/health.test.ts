import { randomBytes } from "node:crypto";
import net from "node:net";
import type { Health } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePorts, readJson, startHub, type TestHub } from "../test-support/hub-process.js";
import { startMinio, type TestMinio } from "../test-support/minio.js";

const REDIS = "redis://127.0.0.1:6379";

async function health(hub: TestHub, query = "") {
  const response = await hub.request(`/api/health${query}`);
  return { status: response.status, body: await readJson<Health>(response) };
}

describe("the health check of one process on SQLite with objects on local disk", () => {
  let hub: TestHub;
  beforeAll(async () => {
    hub = await startHub();
  });
  afterAll(async () => {
    await hub?.stop();
  });

  it("stays cheap when plain, and with deep=1 names the database and the store it reached", async () => {
    const plain = await health(hub);
    expect(plain.status).toBe(200);
    expect(plain.body.status).toBe("ok");
    expect(plain.body.checks).toBeUndefined();

    const deep = await health(hub, "?deep=1");
    expect(deep.status).toBe(200);
    expect(deep.body.status).toBe("ok");
    expect(deep.body.checks?.database.ok).toBe(true);
    expect(deep.body.checks?.objectStore.ok).toBe(true);
    // No Redis is configured, so none is checked.
    expect(deep.body.checks?.redis).toBeUndefined();
  });

  it("refuses an unknown value of deep by name", async () => {
    const response = await hub.request("/api/health?deep=yes");
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("deep");
  });

  it("is in the OpenAPI document with its 503", async () => {
    const document = await readJson<{
      paths: Record<string, { get?: { parameters?: Array<{ name: string }>; responses?: object } }>;
    }>(await hub.request("/api/openapi.json"));
    const operation = document.paths["/api/health"]?.get;
    expect(operation?.parameters?.map((p) => p.name)).toContain("deep");
    expect(Object.keys(operation?.responses ?? {})).toEqual(expect.arrayContaining(["200", "503"]));
  });
});

describe("the health check of a process on PostgreSQL, Redis and MinIO", () => {
  let hub: TestHub;
  let minio: TestMinio;
  beforeAll(async () => {
    minio = await startMinio();
    hub = await startHub({
      dialect: "postgres",
      env: {
        HUB_REDIS_URL: REDIS,
        HUB_REDIS_PREFIX: `hub-test-${randomBytes(4).toString("hex")}:`,
        ...minio.env(await minio.createBucket()),
      },
    });
  });
  afterAll(async () => {
    await hub?.stop();
    await minio?.stop();
  });

  it("answers 200 naming all three while they answer, and 503 naming the store once it stops", async () => {
    const deep = await health(hub, "?deep=1");
    expect(deep.status).toBe(200);
    expect(deep.body.checks?.database.ok).toBe(true);
    expect(deep.body.checks?.redis?.ok).toBe(true);
    expect(deep.body.checks?.objectStore.ok).toBe(true);
    // A probe every few seconds for days: each check reuses one Redis connection and adds no listener.
    for (let i = 0; i < 15; i++) expect((await health(hub, "?deep=1")).status).toBe(200);
    expect(hub.logs.join("\n")).not.toContain("MaxListenersExceededWarning");

    await minio.stop();
    const started = Date.now();
    const down = await health(hub, "?deep=1");
    expect(Date.now() - started).toBeLessThan(5000);
    expect(down.status).toBe(503);
    expect(down.body.status).toBe("unavailable");
    expect(down.body.checks?.objectStore.ok).toBe(false);
    expect(down.body.checks?.objectStore.error).toBeTruthy();
    expect(down.body.checks?.database.ok).toBe(true);
    expect(down.body.checks?.redis?.ok).toBe(true);
    // The plain check does not reach the store: a load balancer's liveness probe keeps passing.
    expect((await health(hub)).status).toBe(200);
  });
});

describe("the health check of a process whose Redis is unreachable", () => {
  let hub: TestHub;
  beforeAll(async () => {
    const [deadPort] = await freePorts(1);
    hub = await startHub({
      dialect: "postgres",
      env: { HUB_REDIS_URL: `redis://127.0.0.1:${deadPort}`, HUB_REDIS_PREFIX: "hub-test-dead:" },
    });
  });
  afterAll(async () => {
    await hub?.stop();
  });

  it("answers 503 naming Redis, within the timeout, while the database and the store answer", async () => {
    const started = Date.now();
    const deep = await health(hub, "?deep=1");
    expect(Date.now() - started).toBeLessThan(5000);
    expect(deep.status).toBe(503);
    expect(deep.body.checks?.redis?.ok).toBe(false);
    expect(deep.body.checks?.redis?.error).toBeTruthy();
    expect(deep.body.checks?.database.ok).toBe(true);
    expect(deep.body.checks?.objectStore.ok).toBe(true);
  });
});

/** A raw HTTP/1.1 connection to `url`'s port: what it has received so far, and when it closes. */
async function rawConnection(url: string) {
  const socket = net.connect(Number(new URL(url).port), "127.0.0.1");
  await new Promise((resolve) => socket.once("connect", resolve));
  const received = { text: "" };
  socket.on("data", (chunk: Buffer) => (received.text += chunk.toString()));
  const closed = new Promise((resolve) => socket.once("close", resolve));
  return { socket, received, closed };
}

describe("a process draining on SIGTERM", () => {
  it("answers the request in flight, and refuses new connections as a load balancer expects", async () => {
    const hub = await startHub();
    const { socket, received, closed } = await rawConnection(hub.url);
    const body = JSON.stringify({ username: "nobody", password: "wrong-password" });
    socket.write(
      `POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    socket.write(body.slice(0, 10));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const exited = hub.signal("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Draining: the listener is closed, so a new connection is refused (the load balancer tries another
    // process), while the request in flight is still being read.
    await expect(fetch(`${hub.url}/api/health`)).rejects.toThrow();
    socket.write(body.slice(10));
    await closed;
    expect(received.text).toMatch(/^HTTP\/1\.1 401/);
    // It tells the keep-alive client to let go of the connection.
    expect(received.text.toLowerCase()).toContain("connection: close");
    expect(await exited).toBe(0);
    await hub.stop();
  });

  it("tells the Router's keep-alive clients to let go: an answer begun before the drain, and one after", async () => {
    const hub = await startHub();
    const token = await hub.createToken((await hub.createUser("drainer")).handle);
    const { socket, received, closed } = await rawConnection(hub.routerUrl);
    // Two requests on one kept-alive connection: one answered before the drain (keep-alive), then one whose
    // body is still coming when the SIGTERM arrives. A bad billing mode answers 400 once the body is read.
    const body = JSON.stringify({ model: "none", messages: [{ role: "user", content: "hi" }] });
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nX-Service-Inference-Billing: nonsense\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    socket.write(`${head}${body}`);
    while (!received.text.includes("invalid_billing_mode"))
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(received.text.toLowerCase()).toContain("connection: keep-alive");
    received.text = "";
    socket.write(`${head}${body.slice(0, 10)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const exited = hub.signal("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 300));
    socket.write(body.slice(10));
    // The answer says Connection: close and the Router closes the connection, so the process can exit.
    await closed;
    expect(received.text).toMatch(/^HTTP\/1\.1 400/);
    expect(received.text.toLowerCase()).toContain("connection: close");
    expect(await exited).toBe(0);
    await hub.stop();
  });
});
