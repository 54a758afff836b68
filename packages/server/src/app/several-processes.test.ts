import { createHash, randomBytes } from "node:crypto";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type {
  AccountKey,
  CatalogModelList,
  CreatedToken,
  CreatedWebhook,
  DeviceAuthorizationResponse,
  MfaRecoveryCodes,
  TotpEnrollment,
} from "@hub/api";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { base32Decode, hotp, totpStep } from "../auth/totp.js";
import { FakeProvider, writeProvidersFile } from "../test-support/fake-provider.js";
import { git, sshCommand, withToken } from "../test-support/git-client.js";
import { readJson, startHub, type TestHub } from "../test-support/hub-process.js";
import { storeFor } from "../test-support/minio.js";
import { WebhookReceiver } from "../test-support/webhook-receiver.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const DEVICE_CODE_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code";

/**
 * Two `hubd serve` processes of one deployment: one PostgreSQL, one Redis, one
 * MinIO bucket for LFS objects, one data directory for git. Every step alternates between them, so whatever one process
 * kept to itself would show here: accounts and tokens, repositories, pushes
 * over HTTPS and SSH, LFS and the file API, the Router's cooldowns, affinity
 * and ledger, webhook deliveries, device sign-in and two-factor step replay.
 */
describe("two hub processes sharing PostgreSQL, Redis and a MinIO bucket", () => {
  let one: TestHub;
  let two: TestHub;
  let work: string;
  let ann: string;
  let annPassword: string;
  let objects: Awaited<ReturnType<typeof storeFor>> | undefined;
  const alpha = new FakeProvider("alpha");
  const beta = new FakeProvider("beta");
  const receiver = new WebhookReceiver();
  /** Both processes, one then two. */
  const both = () => [one, two] as const;

  const chat = (hub: TestHub, model: string, headers: Record<string, string> = {}) =>
    fetch(`${hub.routerUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${ann}`, "content-type": "application/json", ...headers },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
    });
  const commit = (hub: TestHub, repo: string, summary: string, line: Record<string, unknown>) =>
    hub.request(`/api/models/${repo}/commit/main`, {
      method: "POST",
      token: ann,
      headers: { "content-type": "application/x-ndjson" },
      body: [JSON.stringify({ key: "header", value: { summary } }), JSON.stringify(line)].join("\n"),
    });
  const textFile = (filePath: string, text: string) => ({
    key: "file",
    value: { path: filePath, content: Buffer.from(text).toString("base64"), encoding: "base64" },
  });

  beforeAll(async () => {
    await Promise.all([alpha.start(), beta.start(), receiver.start()]);
    const providers = writeProvidersFile("several", [
      {
        slug: "alpha",
        baseUrl: alpha.url,
        apiKey: "sk-hub-key-alpha",
        models: [
          { id: "acme/chat-1", providerModel: "m", task: "chat", pricing: { input: 100, output: 100 } },
          { id: "acme/chat-2", providerModel: "m", task: "chat", pricing: { input: 100, output: 100 } },
        ],
      },
      {
        slug: "beta",
        baseUrl: beta.url,
        apiKey: "sk-hub-key-beta",
        models: [
          { id: "acme/chat-1", providerModel: "m", task: "chat", pricing: { input: 200, output: 200 } },
          { id: "acme/chat-2", providerModel: "m", task: "chat", pricing: { input: 200, output: 200 } },
        ],
      },
    ]);
    objects = await storeFor("s3");
    one = await startHub({
      dialect: "postgres",
      env: {
        ...objects.env,
        HUB_REDIS_URL: "redis://127.0.0.1:6379",
        HUB_REDIS_PREFIX: `hub-test-${randomBytes(4).toString("hex")}:`,
        HUB_PROVIDERS: providers,
        HUB_ROUTER_FAILURES_BEFORE_COOLDOWN: "2",
        HUB_ROUTER_COOLDOWN_MS: "60000",
        HUB_WEBHOOKS_ALLOW_PRIVATE: "1",
        HUB_DEVICE_POLL_INTERVAL_SECONDS: "1",
      },
    });
    for (const key of ["sk-hub-key-alpha", "sk-hub-key-beta"]) one.secrets.add(key);
    two = await startHub({ sharing: one });
    work = mkdtempSync(path.join(os.tmpdir(), "hub-several-"));
    annPassword = (await one.createUser("ann")).password;
    ann = await one.createToken("ann", ["--role", "write"]);
    expect((await one.cli(["credit", "add", "ann", "1"])).code).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await two?.stop();
    await one?.stop();
    await Promise.all([alpha.stop(), beta.stop(), receiver.stop()]);
    await objects?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("shares accounts, tokens and repositories", async () => {
    await two.reauthenticate(ann, annPassword);
    const created = await two.request("/api/me/tokens", {
      method: "POST",
      token: ann,
      json: {
        name: "made on two",
        role: "write",
        expires_at: new Date(Date.now() + 86_400_000).toISOString(),
      },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { token } = await readJson<CreatedToken>(created);
    two.secrets.add(token);
    one.secrets.add(token);
    expect(await readJson<{ name: string }>(await one.request("/api/whoami-v2", { token }))).toMatchObject({
      name: "ann",
    });
    expect(
      (await one.request("/api/repos", { method: "POST", token, json: { repo_id: "ann/shared" } })).status,
    ).toBe(201);
    expect((await two.request("/api/models/ann/shared", { token })).status).toBe(200);
  });

  it("takes pushes over HTTPS and SSH and file API commits on either, each delivered to a webhook exactly once", async () => {
    const route = await one.request("/api/me/webhooks", {
      method: "POST",
      token: ann,
      json: {
        url: receiver.url,
        watched: [{ type: "model", name: "ann/shared" }],
        domains: ["repo.content"],
      },
    });
    expect(route.status, await route.clone().text()).toBe(201);
    const { secret } = await readJson<CreatedWebhook>(route);
    for (const hub of both()) hub.secrets.add(secret);
    receiver.verifyWith(secret);

    // HTTPS: clone through one, push through two, and one serves what two took.
    const clone = path.join(work, "shared");
    expect((await git(["clone", "-q", withToken(`${one.gitUrl}/ann/shared`, ann), clone], work)).code).toBe(
      0,
    );
    writeFileSync(path.join(clone, "notes.txt"), "over https");
    await git(["add", "notes.txt"], clone);
    await git(["commit", "-q", "-m", "over https"], clone);
    const https = await git(["push", "-q", withToken(`${two.gitUrl}/ann/shared`, ann), "HEAD:main"], clone);
    expect(https.code, https.stderr).toBe(0);
    expect(await (await one.request("/ann/shared/resolve/main/notes.txt", { token: ann })).text()).toBe(
      "over https",
    );

    // SSH: a key added through two, a push through one's SSH listener, read back through two.
    const keyFile = path.join(work, "ann_key");
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "ann", "-f", keyFile]);
    const added = await two.request("/api/me/keys", {
      method: "POST",
      token: ann,
      json: { key: readFileSync(`${keyFile}.pub`, "utf8") },
    });
    expect(added.status).toBe(201);
    await readJson<AccountKey>(added);
    writeFileSync(path.join(clone, "notes.txt"), "over ssh");
    await git(["commit", "-q", "-a", "-m", "over ssh"], clone);
    const ssh = await git(["push", "-q", `${one.sshUrl}/ann/shared.git`, "HEAD:main"], clone, {
      GIT_SSH_COMMAND: sshCommand(keyFile),
    });
    expect(ssh.code, ssh.stderr).toBe(0);
    expect(await (await two.request("/ann/shared/resolve/main/notes.txt", { token: ann })).text()).toBe(
      "over ssh",
    );

    // The file API, alternating.
    for (let i = 0; i < 6; i++) {
      const hub = both()[i % 2] ?? one;
      expect(
        (await commit(hub, "ann/shared", `commit ${i}`, textFile(`api/${i}.txt`, String(i)))).status,
      ).toBe(200);
    }

    // Eight pushes and commits, both processes' delivery workers polling one outbox: eight deliveries, once each.
    await receiver.waitFor(8);
    await sleep(2_000);
    expect(receiver.received).toHaveLength(8);
    expect(new Set(receiver.received.map((d) => d.id)).size).toBe(8);
    expect(receiver.received.every((d) => d.verified)).toBe(true);
  });

  it("stores LFS objects through one and serves them through the other", async () => {
    const content = randomBytes(64 * 1024);
    const oid = createHash("sha256").update(content).digest("hex");
    const batch = (hub: TestHub, operation: "upload" | "download") =>
      fetch(`${hub.gitUrl}/ann/shared.git/info/lfs/objects/batch`, {
        method: "POST",
        headers: { "content-type": "application/vnd.git-lfs+json", authorization: `Bearer ${ann}` },
        body: JSON.stringify({ operation, objects: [{ oid, size: content.length }] }),
      });
    type Batch = {
      objects: Array<{ actions?: Record<string, { href: string; header?: Record<string, string> }> }>;
    };
    const upload = (await readJson<Batch>(await batch(one, "upload"))).objects[0]?.actions?.upload;
    expect(upload).toBeDefined();
    const put = await fetch(upload?.href ?? "", { method: "PUT", headers: upload?.header, body: content });
    expect(put.status).toBe(200);
    const download = (await readJson<Batch>(await batch(two, "download"))).objects[0]?.actions?.download;
    expect(download).toBeDefined();
    const fetched = await fetch(download?.href ?? "", { headers: download?.header });
    expect(Buffer.from(await fetched.arrayBuffer()).equals(content)).toBe(true);

    const lfsFile = {
      key: "lfsFile",
      value: { path: "model.safetensors", algo: "sha256", oid, size: content.length },
    };
    expect((await commit(two, "ann/shared", "weights", lfsFile)).status).toBe(200);
    // resolve redirects to a URL of the store, presigned by the process that checked access.
    const resolved = await one.request("/ann/shared/resolve/main/model.safetensors", {
      token: ann,
      redirect: "manual",
    });
    expect(resolved.status).toBe(302);
    const stored = await fetch(resolved.headers.get("location") ?? "");
    expect(Buffer.from(await stored.arrayBuffer()).equals(content)).toBe(true);
  });

  it("counts one download per caller per window, whichever process serves each fetch", async () => {
    for (const hub of [one, two, one, two]) {
      const fetched = await hub.request("/ann/shared/resolve/main/model.safetensors", {
        token: ann,
        method: "HEAD",
        redirect: "manual",
      });
      expect(fetched.status).toBeLessThan(400);
    }
    // Each process writes its counts a second after it counted them.
    await sleep(1_500);
    const info = await readJson<{ downloads: number }>(
      await two.request("/api/models/ann/shared?expand[]=downloads", { token: ann }),
    );
    expect(info.downloads).toBe(1);
  });

  it("keeps a conversation on its provider whichever process each turn reaches", async () => {
    const session = { "x-service-session-id": `conversation-${randomBytes(4).toString("hex")}` };
    // acme/chat-2:cheapest tries alpha first; alpha fails once, so beta starts the conversation (through one).
    alpha.behavior = { kind: "status", status: 503 };
    const first = await chat(one, "acme/chat-2:cheapest", session);
    expect(first.status).toBe(200);
    expect(first.headers.get("x-service-provider")).toBe("beta");
    // Alpha answers again (a success ends its failure run on both), and would win every new conversation...
    alpha.behavior = { kind: "ok" };
    expect((await chat(two, "acme/chat-2:alpha")).headers.get("x-service-provider")).toBe("alpha");
    expect(
      (await chat(two, "acme/chat-2:cheapest", { "x-service-session-id": "another" })).headers.get(
        "x-service-provider",
      ),
    ).toBe("alpha");
    // ...but the conversation stays on beta, on the process that never saw it start too.
    for (const hub of [two, one, two]) {
      const turn = await chat(hub, "acme/chat-2:cheapest", session);
      expect(turn.status).toBe(200);
      expect(turn.headers.get("x-service-provider")).toBe("beta");
      expect(turn.headers.get("x-service-route")).toMatch(/affinity=beta/);
    }
  });

  it("cools a provider down on both when failures seen through each reach the threshold", async () => {
    // acme/chat-1:cheapest tries alpha first; alpha fails, the Router fails over to beta.
    alpha.behavior = { kind: "status", status: 503 };
    for (const hub of both()) {
      const response = await chat(hub, "acme/chat-1:cheapest");
      expect(response.status).toBe(200);
      expect(response.headers.get("x-service-provider")).toBe("beta");
    }
    // One failure through each process: two in a row, so alpha cools down on both.
    const asked = alpha.requests.length;
    for (const hub of both()) {
      const response = await chat(hub, "acme/chat-1:cheapest");
      expect(response.status).toBe(200);
      expect(response.headers.get("x-service-provider")).toBe("beta");
      expect(response.headers.get("x-service-route")).toMatch(/attempt=1/);
    }
    expect(alpha.requests.length).toBe(asked);
    for (const hub of both()) {
      const listed = await readJson<CatalogModelList>(
        await hub.request("/api/inference/models", { token: ann }),
      );
      const providers = listed.data.find((m) => m.id === "acme/chat-1")?.providers ?? [];
      expect(providers.find((p) => p.provider === "alpha")?.status).toBe("cooling_down");
      expect(providers.find((p) => p.provider === "beta")?.status).toBe("live");
    }
    alpha.behavior = { kind: "ok" };
  });

  it("writes each routed request to the ledger once and charges it once", async () => {
    // Both processes flush their ledger batches within 50 ms of a response.
    await sleep(500);
    const client = new pg.Client({ connectionString: one.database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number; distinct_ids: number; cost: string }>(
        "SELECT count(*)::int AS n, count(DISTINCT inference_id)::int AS distinct_ids, coalesce(sum(cost_nanousd), 0)::text AS cost FROM inference_usage",
      );
      const { rows: owners } = await client.query<{ spent: string; balance: string }>(
        "SELECT period_spend_nanousd::text AS spent, balance_nanousd::text AS balance FROM inference_owners",
      );
      // Six chats of the affinity test, four of the cooldown test.
      expect(rows[0]?.n).toBe(10);
      expect(rows[0]?.distinct_ids).toBe(10);
      expect(Number(rows[0]?.cost)).toBeGreaterThan(0);
      expect(owners).toHaveLength(1);
      expect(owners[0]?.spent).toBe(rows[0]?.cost);
    } finally {
      await client.end();
    }
  });

  it("approves a device sign-in started on one through the other, and polls it on the first", async () => {
    const form = (hub: TestHub, pathname: string, fields: Record<string, string>, cookie?: string) =>
      hub.request(pathname, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...(cookie ? { cookie } : {}) },
        body: new URLSearchParams(fields),
        redirect: "manual",
      });
    const issued = await readJson<DeviceAuthorizationResponse>(
      await form(one, "/oauth/device/code", { client_id: "hub-cli" }),
    );
    for (const hub of both()) hub.secrets.add(issued.device_code);
    const poll = () =>
      form(one, "/oauth/token", {
        grant_type: DEVICE_CODE_GRANT_TYPE,
        device_code: issued.device_code,
        client_id: "hub-cli",
      });
    const pending = await poll();
    expect(pending.status).toBe(400);
    expect(await pending.json()).toMatchObject({ error: "authorization_pending" });

    const cookie = await two.signIn("ann", annPassword);
    const page = await two.request(`/device?user_code=${encodeURIComponent(issued.user_code)}`, {
      headers: { cookie },
    });
    expect(page.status).toBe(200);
    const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? "";
    expect(csrf).not.toBe("");
    const approved = await form(
      two,
      "/device",
      { csrf, user_code: issued.user_code, decision: "approve" },
      cookie,
    );
    expect(approved.status, await approved.clone().text()).toBe(200);

    await sleep(1_100);
    const granted = await poll();
    expect(granted.status).toBe(200);
    const { access_token: token } = (await granted.json()) as { access_token: string };
    for (const hub of both()) hub.secrets.add(token);
    expect((await two.request("/api/whoami-v2", { token })).status).toBe(200);
  });

  it("refuses a two-factor code on one process once the other has accepted it", async () => {
    await one.reauthenticate(ann, annPassword);
    const started = await one.request("/api/me/mfa/totp", { method: "POST", token: ann });
    expect(started.status).toBe(200);
    const { secret } = await readJson<TotpEnrollment>(started);
    for (const hub of both()) hub.secrets.add(secret);
    // Away from a step's end, so the step the codes are computed for is the one both processes see.
    const left = 30 - ((Date.now() / 1000) % 30);
    if (left < 6) await sleep(left * 1000 + 200);
    const now = totpStep(Date.now());
    const code = (step: number) => hotp(base32Decode(secret), step);
    const confirmed = await two.request("/api/me/mfa/totp/confirm", {
      method: "POST",
      token: ann,
      json: { otp: code(now - 1) },
    });
    expect(confirmed.status).toBe(200);
    for (const recovery of (await readJson<MfaRecoveryCodes>(confirmed)).recoveryCodes)
      for (const hub of both()) hub.secrets.add(recovery);

    const login = (hub: TestHub, otp: string) =>
      hub.request("/api/auth/login", {
        method: "POST",
        json: { username: "ann", password: annPassword, otp },
      });
    const accepted = await login(one, code(now));
    expect(accepted.status).toBe(200);
    const replayed = await login(two, code(now));
    expect(replayed.status).toBe(401);
    expect(await replayed.json()).toMatchObject({ code: "otp_already_used" });
  });
});
