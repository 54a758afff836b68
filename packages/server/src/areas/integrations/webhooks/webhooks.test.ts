import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { lookup } from "node:dns/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type {
  CreatedWebhook,
  Webhook,
  WebhookDeliveryDetail,
  WebhookDeliveryList,
  WebhookList,
} from "@hub/api";
import { DIALECTS } from "../../../test-support/databases.js";
import { git, withToken } from "../../../test-support/git-client.js";
import { startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";
import { readJson, startHub, type TestHub } from "../../../test-support/hub-process.js";
import { WebhookReceiver } from "../../../test-support/webhook-receiver.js";
import { isNonPublicAddress } from "./target-guard.js";

const ndjson = (...lines: unknown[]) => lines.map((line) => JSON.stringify(line)).join("\n");
const fileLine = (filePath: string, text: string) => ({
  key: "file",
  value: { path: filePath, content: Buffer.from(text).toString("base64"), encoding: "base64" },
});

/** Polls until the check passes or the time is up; the last failure is rethrown. */
async function eventually<T>(check: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

const RETRYING_ENV = {
  HUB_WEBHOOKS_ALLOW_PRIVATE: "1",
  HUB_WEBHOOKS_RETRY_BASE_MS: "150",
  HUB_WEBHOOKS_RETRY_MAX_MS: "600",
  HUB_WEBHOOKS_MAX_ATTEMPTS: "4",
  HUB_WEBHOOKS_TIMEOUT_MS: "800",
  HUB_WEBHOOKS_DISABLE_AFTER_FAILURES: "3",
  HUB_WEBHOOKS_DISABLE_AFTER_SECONDS: "0",
  HUB_RATE_LIMIT: "1000000",
};

describe.each(DIALECTS)("webhooks on %s", (dialect) => {
  let hub: TestHub;
  let work: string;
  const receiver = new WebhookReceiver();
  const tokens: Record<string, string> = {};
  const secrets: string[] = [];

  async function createRoute(
    body: Record<string, unknown>,
    token = tokens.ann ?? "",
    owner = "/api/me",
  ): Promise<CreatedWebhook> {
    const response = await hub.request(`${owner}/webhooks`, {
      method: "POST",
      token,
      json: { url: receiver.url, domains: ["repo"], ...body },
    });
    expect(response.status, await response.clone().text()).toBe(201);
    const created = await readJson<CreatedWebhook>(response);
    hub.secrets.add(created.secret);
    secrets.push(created.secret);
    receiver.verifyWith(...secrets);
    return created;
  }

  const deleteRoute = async (id: string, token = tokens.ann ?? "", owner = "/api/me") =>
    expect((await hub.request(`${owner}/webhooks/${id}`, { method: "DELETE", token })).status).toBe(204);

  const createRepo = async (repoId: string, token = tokens.ann ?? "", isPrivate = false) =>
    expect(
      (
        await hub.request("/api/repos", {
          method: "POST",
          token,
          json: { repo_id: repoId, private: isPrivate },
        })
      ).status,
    ).toBe(201);

  const commitFile = async (repoId: string, filePath: string, text: string, token = tokens.ann ?? "") => {
    const response = await hub.request(`/api/models/${repoId}/commit/main`, {
      method: "POST",
      token,
      headers: { "content-type": "application/x-ndjson" },
      body: ndjson({ key: "header", value: { summary: `write ${filePath}` } }, fileLine(filePath, text)),
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { commitOid: string }).commitOid;
  };

  const deliveriesOf = async (id: string, token = tokens.ann ?? "", owner = "/api/me") => {
    const response = await hub.request(`${owner}/webhooks/${id}/deliveries`, { token });
    expect(response.status).toBe(200);
    return (await readJson<WebhookDeliveryList>(response)).deliveries;
  };

  const received = (routeId: string) =>
    receiver.received.filter((d) => (d.payload.webhook as { id: string }).id === routeId);

  beforeAll(async () => {
    await receiver.start();
    work = mkdtempSync(path.join(os.tmpdir(), "hub-webhooks-"));
    hub = await startHub({ dialect, env: RETRYING_ENV });
    for (const name of ["ann", "bob", "carl"]) {
      await hub.createUser(name);
      tokens[name] = await hub.createToken(name, ["--role", "write"]);
    }
    tokens.annRead = await hub.createToken("ann", ["--role", "read"]);
    tokens.annHooks = await hub.createToken("ann", ["--scopes", "webhooks:manage"]);
    tokens.annRepoOnly = await hub.createToken("ann", ["--scopes", "repo:read,repo:write"]);
    expect((await hub.cli(["org", "create", "acme", "--owner", "ann"])).code).toBe(0);
    expect((await hub.cli(["org", "add-member", "acme", "bob", "--role", "read"])).code).toBe(0);
  });
  afterEach(() => receiver.answerWith(() => ({ status: 204 })));
  afterAll(async () => {
    await hub?.stop();
    await receiver.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it("shows the signing secret once: in the create response, never in lists or reads", async () => {
    const created = await createRoute({ watched: [{ type: "user", name: "ann" }], description: "ci" });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created).toMatchObject({
      url: receiver.url,
      watched: [{ type: "user", name: "ann" }],
      domains: ["repo"],
      description: "ci",
      disabled: false,
      disabled_reason: null,
    });
    const list = await readJson<WebhookList>(await hub.request("/api/me/webhooks", { token: tokens.ann }));
    const listed = list.webhooks.find((w) => w.id === created.id);
    expect(listed).toBeDefined();
    const one = await (await hub.request(`/api/me/webhooks/${created.id}`, { token: tokens.ann })).text();
    for (const text of [JSON.stringify(list), one]) {
      expect(text).not.toContain(created.secret);
      expect(text).not.toContain("secret");
    }
    const rotated = await hub.request(`/api/me/webhooks/${created.id}/secret`, {
      method: "POST",
      token: tokens.ann,
    });
    expect(rotated.status).toBe(200);
    const { secret } = (await rotated.json()) as { secret: string };
    hub.secrets.add(secret);
    expect(secret).not.toBe(created.secret);
    await deleteRoute(created.id);
    expect((await hub.request(`/api/me/webhooks/${created.id}`, { token: tokens.ann })).status).toBe(404);
  });

  it("refuses bad routes with a 400 that names the problem", async () => {
    const valid = { url: receiver.url, watched: [{ type: "user", name: "ann" }], domains: ["repo"] };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ url: "ftp://example.com/x" }, "invalid_webhook_url"],
      [{ url: "not a url" }, "invalid_webhook_url"],
      [{ url: "https://user:pw@example.com/x" }, "invalid_webhook_url"],
      [{ url: "https://example.com/" + "x".repeat(2100) }, ""],
      [{ watched: [] }, ""],
      [{ watched: [{ type: "user", name: "nobody-here" }] }, "invalid_watched"],
      [{ watched: [{ type: "user", name: "acme" }] }, "invalid_watched"],
      [{ watched: [{ type: "org", name: "ann" }] }, "invalid_watched"],
      [{ watched: [{ type: "model", name: "ann" }] }, "invalid_watched"],
      [{ watched: [{ type: "model", name: "ann/missing" }] }, "invalid_watched"],
      [{ watched: [{ type: "planet", name: "ann" }] }, ""],
      [{ domains: [] }, ""],
      [{ domains: ["repo", "repo"] }, ""],
      [{ domains: ["discussion.review"] }, ""],
      [{ description: "d".repeat(501) }, ""],
    ];
    for (const [change, code] of cases) {
      const response = await hub.request("/api/me/webhooks", {
        method: "POST",
        token: tokens.ann,
        json: { ...valid, ...change },
      });
      expect(response.status, JSON.stringify(change)).toBe(400);
      const body = (await response.json()) as { error: string; code?: string };
      if (code) expect(JSON.stringify(body), JSON.stringify(change)).toContain(code);
    }
    // The body is open (the spec's (F)): a field it does not know is accepted and ignored, never stored.
    const open = await hub.request("/api/me/webhooks", {
      method: "POST",
      token: tokens.ann,
      json: { ...valid, secret: "mine", color: "blue" },
    });
    expect(open.status).toBe(201);
    const openRoute = await readJson<CreatedWebhook>(open);
    hub.secrets.add(openRoute.secret);
    expect(openRoute.secret).not.toBe("mine");
    expect(openRoute).not.toHaveProperty("color");
    await deleteRoute(openRoute.id);
    // A private repository the caller cannot read is not something to watch.
    await createRepo("bob/secret-plans", tokens.bob, true);
    const hidden = await hub.request("/api/me/webhooks", {
      method: "POST",
      token: tokens.ann,
      json: { ...valid, watched: [{ type: "model", name: "bob/secret-plans" }] },
    });
    expect(hidden.status).toBe(400);
    const created = await createRoute({ watched: [{ type: "user", name: "ann" }] });
    for (const body of [{}, { url: "gopher://x" }, { disabled: true }]) {
      const response = await hub.request(`/api/me/webhooks/${created.id}`, {
        method: "PATCH",
        token: tokens.ann,
        json: body,
      });
      expect(response.status, JSON.stringify(body)).toBe(400);
    }
    await deleteRoute(created.id);
  });

  it("enforces webhooks:manage: 401 anonymous, 403 for tokens without it, org routes for admins only", async () => {
    expect((await hub.request("/api/me/webhooks")).status).toBe(401);
    for (const token of [tokens.annRead, tokens.annRepoOnly]) {
      const list = await hub.request("/api/me/webhooks", { token });
      expect(list.status).toBe(403);
      expect(((await list.json()) as { code: string }).code).toBe("insufficient_scope");
      const create = await hub.request("/api/me/webhooks", {
        method: "POST",
        token,
        json: { url: receiver.url, watched: [{ type: "user", name: "ann" }], domains: ["repo"] },
      });
      expect(create.status).toBe(403);
    }
    expect((await hub.request("/api/me/webhooks", { token: tokens.annHooks })).status).toBe(200);
    const own = await createRoute({ watched: [{ type: "user", name: "ann" }] }, tokens.annHooks);
    // Another account neither sees nor touches it.
    expect((await hub.request(`/api/me/webhooks/${own.id}`, { token: tokens.bob })).status).toBe(404);
    expect(
      (await hub.request(`/api/me/webhooks/${own.id}`, { method: "DELETE", token: tokens.bob })).status,
    ).toBe(404);
    await deleteRoute(own.id, tokens.annHooks);

    expect((await hub.request("/api/organizations/acme/webhooks", { token: tokens.bob })).status).toBe(403);
    expect((await hub.request("/api/organizations/acme/webhooks", { token: tokens.carl })).status).toBe(403);
    const orgRoute = await createRoute(
      { watched: [{ type: "org", name: "acme" }] },
      tokens.ann,
      "/api/organizations/acme",
    );
    const list = await readJson<WebhookList>(
      await hub.request("/api/organizations/acme/webhooks", { token: tokens.annHooks }),
    );
    expect(list.webhooks.map((w) => w.id)).toEqual([orgRoute.id]);
    // An organization's route is not one of the admin's own.
    expect((await hub.request(`/api/me/webhooks/${orgRoute.id}`, { token: tokens.ann })).status).toBe(404);
    await deleteRoute(orgRoute.id, tokens.ann, "/api/organizations/acme");

    const openapi = (await (await hub.request("/api/openapi.json")).json()) as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    expect(openapi.paths["/api/me/webhooks"]?.get?.operationId).toBe("account_webhooks_list");
    expect(openapi.paths["/api/me/webhooks"]?.post?.operationId).toBe("account_webhooks_create");
    expect(openapi.paths["/api/organizations/{handle}/webhooks"]?.post?.operationId).toBe(
      "organization_webhooks_create",
    );
  });

  it("signs and delivers every repository event: create, commit, git push, settings, move, delete", async () => {
    const route = await createRoute({ watched: [{ type: "user", name: "ann" }] });
    const before = receiver.received.length;
    await createRepo("ann/events");
    const commit = await commitFile("ann/events", "README.md", "hello");

    const clone = path.join(work, "events");
    const remote = withToken(`${hub.gitUrl}/ann/events.git`, tokens.ann ?? "");
    expect((await git(["clone", "-q", remote, clone], work)).code).toBe(0);
    writeFileSync(path.join(clone, "README.md"), "hello again");
    writeFileSync(path.join(clone, "new.txt"), "new");
    expect((await git(["add", "-A"], clone)).code).toBe(0);
    expect((await git(["commit", "-q", "-m", "edit"], clone)).code).toBe(0);
    const pushed = (await git(["rev-parse", "HEAD"], clone)).stdout.trim();
    const push = await git(["push", "-q", "origin", "main", "main:refs/heads/side"], clone);
    expect(push.code, push.stderr).toBe(0);

    expect(
      (
        await hub.request("/api/models/ann/events/settings", {
          method: "PUT",
          token: tokens.ann,
          json: { private: true },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await hub.request("/api/repos/move", {
          method: "POST",
          token: tokens.ann,
          json: { fromRepo: "ann/events", toRepo: "ann/renamed" },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await hub.request("/api/repos/delete", {
          method: "DELETE",
          token: tokens.ann,
          json: { name: "renamed" },
        })
      ).status,
    ).toBe(204);

    await receiver.waitFor(before + 6);
    const events = received(route.id);
    expect(events.map((e) => e.payload.event)).toEqual([
      { action: "create", scope: "repo" },
      { action: "update", scope: "repo.content" },
      { action: "update", scope: "repo.content" },
      { action: "update", scope: "repo.config" },
      { action: "move", scope: "repo" },
      { action: "delete", scope: "repo" },
    ]);
    for (const event of events) {
      expect(event.verified).toBe(true);
      expect(event.headers["content-type"]).toBe("application/json");
      expect(Math.abs(event.timestamp - Date.now() / 1000)).toBeLessThan(60);
      expect(event.id).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(event.payload).toMatchObject({ webhook: { id: route.id, version: 1 }, actor: { name: "ann" } });
    }
    expect(new Set(events.map((e) => e.id)).size).toBe(6);
    const [created, committed, gitPush, config, moved, deleted] = events.map((e) => e.payload);
    expect(created?.repo).toMatchObject({
      type: "model",
      name: "ann/events",
      private: false,
      owner: { type: "user", name: "ann" },
      url: { web: `${hub.url}/ann/events`, api: `${hub.url}/api/models/ann/events` },
    });
    expect(committed?.updatedRefs).toEqual([
      {
        ref: "refs/heads/main",
        oldSha: expect.stringMatching(/^[0-9a-f]{40}$/),
        newSha: commit,
        changes: {
          added: 1,
          modified: 0,
          removed: 0,
          paths: [{ path: "README.md", change: "added" }],
          truncated: false,
        },
      },
    ]);
    const refs = gitPush?.updatedRefs as Array<{
      ref: string;
      oldSha: string;
      newSha: string;
      changes: unknown;
    }>;
    expect(refs.map((r) => r.ref).sort()).toEqual(["refs/heads/main", "refs/heads/side"]);
    const main = refs.find((r) => r.ref === "refs/heads/main");
    expect(main).toMatchObject({
      oldSha: commit,
      newSha: pushed,
      changes: {
        added: 1,
        modified: 1,
        removed: 0,
        paths: [
          { path: "README.md", change: "modified" },
          { path: "new.txt", change: "added" },
        ],
      },
    });
    expect(refs.find((r) => r.ref === "refs/heads/side")).toMatchObject({
      oldSha: "0".repeat(40),
      newSha: pushed,
      changes: null,
    });
    expect(config?.updatedConfig).toEqual({ private: true });
    expect(config?.repo).toMatchObject({ private: true });
    expect(moved?.repo).toMatchObject({ name: "ann/renamed" });
    expect(moved?.movedFrom).toMatchObject({ name: "ann/events" });
    expect(deleted?.repo).toMatchObject({ name: "ann/renamed" });

    // The receipts record each delivery with its answer.
    const deliveries = await eventually(async () => {
      const list = await deliveriesOf(route.id);
      expect(list.filter((d) => d.status === "delivered")).toHaveLength(6);
      return list;
    });
    expect(deliveries[0]?.event).toEqual({ action: "delete", scope: "repo" });
    expect(deliveries[0]?.last_attempt).toMatchObject({
      outcome: "success",
      status_code: 204,
      redelivery: false,
    });
    await deleteRoute(route.id);
  });

  it("sends a route only the scopes it subscribed to and the repositories it watches", async () => {
    await createRepo("ann/watched");
    await createRepo("ann/other");
    const contentOnly = await createRoute({
      watched: [{ type: "user", name: "ann" }],
      domains: ["repo.content"],
    });
    const oneRepo = await createRoute({
      watched: [{ type: "model", name: "ann/watched" }],
      domains: ["repo"],
    });
    const before = receiver.received.length;
    await commitFile("ann/watched", "a.txt", "a");
    await commitFile("ann/other", "b.txt", "b");
    expect(
      (
        await hub.request("/api/models/ann/watched/settings", {
          method: "PUT",
          token: tokens.ann,
          json: { denyForcePush: true },
        })
      ).status,
    ).toBe(200);
    await receiver.waitFor(before + 4);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(
      received(contentOnly.id)
        .map((e) => (e.payload.repo as { name: string }).name)
        .sort(),
    ).toEqual(["ann/other", "ann/watched"]);
    expect(received(oneRepo.id).map((e) => e.payload.event)).toEqual([
      { action: "update", scope: "repo.content" },
      { action: "update", scope: "repo.config" },
    ]);
    expect(received(oneRepo.id)[1]?.payload.updatedConfig).toEqual({ denyForcePush: true });
    // A watched repository shows its new name after a rename.
    await hub.request("/api/repos/move", {
      method: "POST",
      token: tokens.ann,
      json: { fromRepo: "ann/watched", toRepo: "ann/watched-2" },
    });
    const shown = await readJson<Webhook>(
      await hub.request(`/api/me/webhooks/${oneRepo.id}`, { token: tokens.ann }),
    );
    expect(shown.watched).toEqual([{ type: "model", name: "ann/watched-2" }]);
    await deleteRoute(contentOnly.id);
    await deleteRoute(oneRepo.id);
  });

  it("tells a route only about repositories its owner may read", async () => {
    const member = await createRoute({ watched: [{ type: "org", name: "acme" }] }, tokens.bob);
    const outsider = await createRoute({ watched: [{ type: "org", name: "acme" }] }, tokens.carl);
    const before = receiver.received.length;
    await createRepo("acme/internal", tokens.ann, true);
    await createRepo("acme/open", tokens.ann, false);
    await receiver.waitFor(before + 3);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(
      received(member.id)
        .map((e) => (e.payload.repo as { name: string }).name)
        .sort(),
    ).toEqual(["acme/internal", "acme/open"]);
    expect(received(outsider.id).map((e) => (e.payload.repo as { name: string }).name)).toEqual([
      "acme/open",
    ]);
    await deleteRoute(member.id, tokens.bob);
    await deleteRoute(outsider.id, tokens.carl);
  });

  it("retries failed deliveries with the same id, keeps receipts, and redelivers on request", async () => {
    await createRepo("ann/retry");
    const route = await createRoute({ watched: [{ type: "model", name: "ann/retry" }] });
    let calls = 0;
    receiver.answerWith((delivery) => {
      if ((delivery.payload.webhook as { id: string }).id !== route.id) return { status: 204 };
      calls += 1;
      return calls <= 2
        ? { status: 500, body: `boom ${calls} ${"x".repeat(3000)}` }
        : { status: 200, body: "ok" };
    });
    await commitFile("ann/retry", "r.txt", "r");
    const detail = await eventually(async () => {
      const [delivery] = await deliveriesOf(route.id);
      expect(delivery?.status).toBe("delivered");
      const response = await hub.request(`/api/me/webhooks/${route.id}/deliveries/${delivery?.id}`, {
        token: tokens.ann,
      });
      return readJson<WebhookDeliveryDetail>(response);
    });
    const attempts = received(route.id);
    expect(attempts).toHaveLength(3);
    expect(new Set(attempts.map((a) => a.id))).toEqual(new Set([detail.id]));
    expect(new Set(attempts.map((a) => a.body)).size).toBe(1);
    expect(attempts.every((a) => a.verified)).toBe(true);
    expect(detail.attempts).toBe(3);
    expect(detail.receipts.map((r) => [r.outcome, r.status_code])).toEqual([
      ["http_error", 500],
      ["http_error", 500],
      ["success", 200],
    ]);
    expect(detail.receipts[0]?.response_excerpt).toMatch(/^boom 1 x+$/);
    expect(detail.receipts[0]?.response_excerpt?.length).toBe(1024);
    expect(detail.receipts[2]?.response_excerpt).toBe("ok");
    expect(detail.payload).toEqual(JSON.parse(attempts[0]?.body ?? "{}"));
    // Backoff: the second retry waited at least the base delay after the first.
    const times = detail.receipts.map((r) => Date.parse(r.attempted_at));
    expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(100);

    const redeliver = await hub.request(`/api/me/webhooks/${route.id}/deliveries/${detail.id}/redeliver`, {
      method: "POST",
      token: tokens.ann,
    });
    expect(redeliver.status).toBe(202);
    await receiver.waitFor(receiver.received.length + 1);
    const again = received(route.id).at(-1);
    expect(again?.id).toBe(detail.id);
    expect(again?.body).toBe(attempts[0]?.body);
    expect(again?.verified).toBe(true);
    const after = await eventually(async () => {
      const response = await hub.request(`/api/me/webhooks/${route.id}/deliveries/${detail.id}`, {
        token: tokens.ann,
      });
      const body = await readJson<WebhookDeliveryDetail>(response);
      expect(body.receipts).toHaveLength(4);
      return body;
    });
    expect(after.receipts[3]).toMatchObject({ outcome: "success", redelivery: true });
    expect(
      (
        await hub.request(`/api/me/webhooks/${route.id}/deliveries/msg_nope/redeliver`, {
          method: "POST",
          token: tokens.ann,
        })
      ).status,
    ).toBe(404);
    await deleteRoute(route.id);
  });

  it("records a timeout, gives up after the last attempt, and switches off a route that keeps failing", async () => {
    await createRepo("ann/flaky");
    const route = await createRoute({ watched: [{ type: "model", name: "ann/flaky" }] });
    receiver.answerWith((delivery) =>
      (delivery.payload.webhook as { id: string }).id === route.id ? "hang" : { status: 204 },
    );
    await commitFile("ann/flaky", "f.txt", "1");
    const disabled = await eventually(async () => {
      const shown = await readJson<Webhook>(
        await hub.request(`/api/me/webhooks/${route.id}`, { token: tokens.ann }),
      );
      expect(shown.disabled).toBe(true);
      return shown;
    }, 20_000);
    expect(disabled.disabled_reason).toMatch(/3 failed attempts in a row/);
    expect(disabled.disabled_reason).toMatch(/No answer within 800 ms/);
    const [delivery] = await deliveriesOf(route.id);
    expect(delivery).toMatchObject({
      status: "pending",
      attempts: 3,
      last_attempt: { outcome: "timeout", status_code: null },
    });

    // Switched off: new events are not recorded, and redelivery asks to enable first.
    await commitFile("ann/flaky", "f.txt", "2");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await deliveriesOf(route.id)).toHaveLength(1);
    const refused = await hub.request(`/api/me/webhooks/${route.id}/deliveries/${delivery?.id}/redeliver`, {
      method: "POST",
      token: tokens.ann,
    });
    expect(refused.status).toBe(409);

    // Enabled again with a failing receiver: the pending delivery resumes and runs out of attempts.
    receiver.answerWith((d) =>
      (d.payload.webhook as { id: string }).id === route.id ? { status: 503 } : { status: 204 },
    );
    const enabled = await hub.request(`/api/me/webhooks/${route.id}/enable`, {
      method: "POST",
      token: tokens.ann,
    });
    expect(await readJson<Webhook>(enabled)).toMatchObject({
      disabled: false,
      disabled_reason: null,
      consecutive_failures: 0,
    });
    const failed = await eventually(async () => {
      const [only] = await deliveriesOf(route.id);
      expect(only?.status).toBe("failed");
      return only;
    });
    expect(failed).toMatchObject({
      attempts: 4,
      next_attempt_at: null,
      last_attempt: { outcome: "http_error", status_code: 503 },
    });
    await deleteRoute(route.id);
  });
});

describe("webhook targets outside the public internet", () => {
  let hub: InProcessHub;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    await receiver.start();
    hub = await startInProcessHub({
      env: { HUB_WEBHOOKS_RETRY_BASE_MS: "100", HUB_WEBHOOKS_MAX_ATTEMPTS: "1" },
    });
    await hub.createUser("ann");
  });
  afterAll(async () => {
    await hub?.stop();
    await receiver.stop();
  });

  it("classifies addresses", () => {
    for (const address of [
      "127.0.0.1",
      "10.1.2.3",
      "172.20.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "fe80::1",
      "fd00::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "64:ff9b::a00:1",
      "2002:7f00:1::1",
      "2001:0:4136:e378:8000:63bf:3fff:fdd2",
      "224.0.0.1",
    ]) {
      expect(isNonPublicAddress(address), address).toBe(true);
    }
    for (const address of ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"]) {
      expect(isNonPublicAddress(address), address).toBe(false);
    }
  });

  it("refuses private targets when saved, and names that resolve to them when delivering", async () => {
    const token = await hub.createToken("ann", ["--role", "write"]);
    for (const url of [
      receiver.url,
      "http://[::1]:9/x",
      "http://localhost:9/x",
      "http://169.254.169.254/latest",
    ]) {
      const response = await hub.request("/api/me/webhooks", {
        method: "POST",
        token,
        json: { url, watched: [{ type: "user", name: "ann" }], domains: ["repo"] },
      });
      expect(response.status, url).toBe(400);
      expect(((await response.json()) as { error: string }).error).toContain("HUB_WEBHOOKS_ALLOW_PRIVATE");
    }
    // This machine's own name resolves to a loopback address: it passes the form check, not delivery.
    const own = os.hostname();
    expect(isNonPublicAddress((await lookup(own)).address)).toBe(true);
    const port = new URL(receiver.url).port;
    const response = await hub.request("/api/me/webhooks", {
      method: "POST",
      token,
      json: {
        url: `http://${own}:${port}/hooks`,
        watched: [{ type: "user", name: "ann" }],
        domains: ["repo"],
      },
    });
    expect(response.status).toBe(201);
    const created = await readJson<CreatedWebhook>(response);
    hub.secrets.add(created.secret);
    expect(
      (await hub.request("/api/repos", { method: "POST", token, json: { repo_id: "ann/x" } })).status,
    ).toBe(201);
    const delivery = await eventually(async () => {
      const list = await readJson<WebhookDeliveryList>(
        await hub.request(`/api/me/webhooks/${created.id}/deliveries`, { token }),
      );
      expect(list.deliveries[0]?.status).toBe("failed");
      return list.deliveries[0];
    });
    expect(delivery?.last_attempt?.outcome).toBe("refused");
    expect(delivery?.last_attempt?.error).toContain("not a public address");
    expect(receiver.received).toHaveLength(0);
  });
});
