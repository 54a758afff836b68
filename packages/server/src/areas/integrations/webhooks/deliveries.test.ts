import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CreatedWebhook, WebhookDeliveryDetail, WebhookDeliveryList } from "@hub/api";
import { DIALECTS } from "../../../test-support/databases.js";
import { git, withToken } from "../../../test-support/git-client.js";
import { readJson, startHub, type TestHub } from "../../../test-support/hub-process.js";
import { WebhookReceiver } from "../../../test-support/webhook-receiver.js";

const PUSHES = 1000;
const PUSHERS = 8;

describe.each(DIALECTS)("the webhook outbox on %s", (dialect) => {
  let hub: TestHub;
  let work: string;
  let token: string;
  const receiver = new WebhookReceiver();

  async function createRoute(owner: TestHub, watched: string): Promise<CreatedWebhook> {
    const response = await owner.request("/api/me/webhooks", {
      method: "POST",
      token,
      json: { url: receiver.url, watched: [{ type: "model", name: watched }], domains: ["repo.content"] },
    });
    expect(response.status).toBe(201);
    const created = await readJson<CreatedWebhook>(response);
    owner.secrets.add(created.secret);
    receiver.verifyWith(created.secret);
    return created;
  }

  beforeAll(async () => {
    await receiver.start();
    work = mkdtempSync(path.join(os.tmpdir(), "hub-outbox-"));
    hub = await startHub({
      dialect,
      env: {
        HUB_WEBHOOKS_ALLOW_PRIVATE: "1",
        HUB_WEBHOOKS_RETRY_BASE_MS: "1500",
        HUB_WEBHOOKS_RETRY_MAX_MS: "1500",
        HUB_RATE_LIMIT: "1000000",
      },
    });
    await hub.createUser("ann");
    token = await hub.createToken("ann", ["--role", "write"]);
  });
  afterAll(async () => {
    await hub?.stop();
    await receiver.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it(`turns a burst of ${PUSHES} git pushes into ${PUSHES} deliveries, none lost or duplicated`, async () => {
    expect(
      (await hub.request("/api/repos", { method: "POST", token, json: { repo_id: "ann/burst" } })).status,
    ).toBe(201);
    const route = await createRoute(hub, "ann/burst");
    // Some answers fail, so retries (same id) mix into the burst.
    receiver.answerWith(() => (Math.random() < 0.03 ? { status: 503 } : { status: 204 }));
    const remote = withToken(`${hub.gitUrl}/ann/burst.git`, token);
    const pushed = new Set<string>();
    await Promise.all(
      Array.from({ length: PUSHERS }, async (_, pusher) => {
        const clone = path.join(work, `burst-${pusher}`);
        expect((await git(["clone", "-q", remote, clone], work)).code).toBe(0);
        const branch = `b${pusher}`;
        expect((await git(["checkout", "-q", "-b", branch], clone)).code).toBe(0);
        for (let i = 0; i < PUSHES / PUSHERS; i++) {
          writeFileSync(path.join(clone, `${branch}.txt`), `${i}\n`);
          expect(
            (await git(["commit", "-q", "-a", "--allow-empty", "-m", `${branch} ${i}`], clone)).code,
          ).toBe(0);
          const result = await git(["push", "-q", "origin", branch], clone);
          expect(result.code, result.stderr).toBe(0);
          pushed.add(`refs/heads/${branch} ${(await git(["rev-parse", "HEAD"], clone)).stdout.trim()}`);
        }
      }),
    );
    expect(pushed.size).toBe(PUSHES);

    const deadline = Date.now() + 60_000;
    const succeeded = () => receiver.received.filter((d) => d.status >= 200 && d.status < 300);
    while (succeeded().length < PUSHES && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const ok = succeeded();
    expect(ok).toHaveLength(PUSHES);
    expect(new Set(ok.map((d) => d.id)).size).toBe(PUSHES);
    expect(new Set(ok.map((d) => d.payload.id as string)).size).toBe(PUSHES);
    const reported = new Set(
      ok.flatMap((d) =>
        (d.payload.updatedRefs as { ref: string; newSha: string }[]).map((r) => `${r.ref} ${r.newSha}`),
      ),
    );
    expect(reported).toEqual(pushed);
    expect(receiver.received.every((d) => d.verified)).toBe(true);
    // Every failed answer was retried under the same id.
    const failedIds = new Set(receiver.received.filter((d) => d.status === 503).map((d) => d.id));
    for (const id of failedIds) expect(ok.some((d) => d.id === id)).toBe(true);
    expect(
      receiver.received.filter((d) => (d.payload.webhook as { id: string }).id !== route.id),
    ).toHaveLength(0);
  }, 300_000);

  // Last: it stops the suite's hub process (afterAll then removes its storage).
  it("keeps a delivery through a restart in the middle of its retries", async () => {
    receiver.received.length = 0;
    expect(
      (await hub.request("/api/repos", { method: "POST", token, json: { repo_id: "ann/restart" } })).status,
    ).toBe(201);
    const route = await createRoute(hub, "ann/restart");
    receiver.answerWith(() => ({ status: 500 }));
    const commit = await hub.request("/api/models/ann/restart/commit/main", {
      method: "POST",
      token,
      headers: { "content-type": "application/x-ndjson" },
      body: [
        JSON.stringify({ key: "header", value: { summary: "one" } }),
        JSON.stringify({ key: "file", value: { path: "a", content: "YQ==", encoding: "base64" } }),
      ].join("\n"),
    });
    expect(commit.status).toBe(200);
    await receiver.waitFor(1);
    // The first attempt failed; the retry is 1.5 s away. Stop the hub now, then start another process.
    expect(await hub.signal("SIGTERM")).toBe(0);
    receiver.answerWith(() => ({ status: 200 }));
    const second = await startHub({ sharing: hub });
    try {
      await receiver.waitFor(2);
      expect(receiver.received[1]?.id).toBe(receiver.received[0]?.id);
      expect(receiver.received[1]?.body).toBe(receiver.received[0]?.body);
      expect(receiver.received[1]?.verified).toBe(true);
      const list = await readJson<WebhookDeliveryList>(
        await second.request(`/api/me/webhooks/${route.id}/deliveries`, { token }),
      );
      const detail = await readJson<WebhookDeliveryDetail>(
        await second.request(`/api/me/webhooks/${route.id}/deliveries/${list.deliveries[0]?.id}`, { token }),
      );
      expect(detail.status).toBe("delivered");
      expect(detail.receipts.map((r) => r.status_code)).toEqual([500, 200]);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(receiver.received).toHaveLength(2);
    } finally {
      await second.stop();
    }
  });
});

describe.each(DIALECTS)("webhook delivery retention on %s", (dialect) => {
  let hub: TestHub;
  let token: string;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    await receiver.start();
    hub = await startHub({
      dialect,
      env: {
        HUB_WEBHOOKS_ALLOW_PRIVATE: "1",
        HUB_WEBHOOKS_RETENTION_DAYS: "0",
        HUB_WEBHOOKS_RETRY_BASE_MS: "600000",
      },
    });
    await hub.createUser("ann");
    token = await hub.createToken("ann", ["--role", "write"]);
  });
  afterAll(async () => {
    await hub?.stop();
    await receiver.stop();
  });

  it("removes finished deliveries past the retention and keeps pending ones", async () => {
    const routes: CreatedWebhook[] = [];
    for (const description of ["answers", "fails"]) {
      const response = await hub.request("/api/me/webhooks", {
        method: "POST",
        token,
        json: { url: receiver.url, watched: [{ type: "user", name: "ann" }], domains: ["repo"], description },
      });
      expect(response.status).toBe(201);
      const created = await readJson<CreatedWebhook>(response);
      hub.secrets.add(created.secret);
      routes.push(created);
    }
    const [answers, fails] = routes as [CreatedWebhook, CreatedWebhook];
    receiver.answerWith((d) =>
      (d.payload.webhook as { id: string }).id === fails.id ? { status: 500 } : { status: 204 },
    );
    expect(
      (await hub.request("/api/repos", { method: "POST", token, json: { repo_id: "ann/kept" } })).status,
    ).toBe(201);
    await receiver.waitFor(2);
    const list = (owner: TestHub, id: string) =>
      owner
        .request(`/api/me/webhooks/${id}/deliveries`, { token })
        .then((r) => readJson<WebhookDeliveryList>(r))
        .then((body) => body.deliveries);
    for (let i = 0; i < 50 && (await list(hub, answers.id))[0]?.status !== "delivered"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect((await list(hub, answers.id)).map((d) => d.status)).toEqual(["delivered"]);
    expect((await list(hub, fails.id)).map((d) => [d.status, d.attempts])).toEqual([["pending", 1]]);

    // Pruning runs when a worker starts (and every ten minutes): a new process removes the finished one.
    expect(await hub.signal("SIGTERM")).toBe(0);
    const next = await startHub({ sharing: hub });
    try {
      expect(await list(next, answers.id)).toEqual([]);
      const [pending] = await list(next, fails.id);
      expect(pending).toMatchObject({ status: "pending", attempts: 1, last_attempt: { status_code: 500 } });
    } finally {
      await next.stop();
    }
  });
});
