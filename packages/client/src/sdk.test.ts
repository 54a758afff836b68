import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { Agent, fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeProvider, writeProvidersFile } from "../../server/src/test-support/fake-provider.js";
import { startHub, type TestHub } from "../../server/src/test-support/hub-process.js";
import {
  AuthenticationError,
  ConflictError,
  ConnectionError,
  HubError,
  NotFoundError,
  PaymentRequiredError,
  chatCompletion,
  chatCompletionStream,
  collectFiles,
  createRepo,
  downloadFiles,
  listModels,
  repoInfo,
  uploadFiles,
  whoami,
  type Connection,
} from "./index.js";

/** The SDK against a real hub and Router, with a fake upstream provider behind the Router. */
describe("the SDK", () => {
  const provider = new FakeProvider("solo");
  let hub: TestHub;
  let token: string;
  const seen: Array<{ url: string; authorized: boolean; signal: AbortSignal | null | undefined }> = [];
  const agent = new Agent();
  /** An injected fetch (undici's, on a connection pool the test closes) that records what the SDK sends. */
  const recordingFetch = ((input: string, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    seen.push({ url: String(input), authorized: headers.has("authorization"), signal: init?.signal });
    return undiciFetch(input, { ...(init as object), dispatcher: agent });
  }) as unknown as typeof fetch;
  // The Router's address comes from the hub's discovery document.
  const connection = (overrides: Partial<Connection> = {}): Connection => ({
    endpoint: hub.url,
    token,
    fetch: recordingFetch,
    ...overrides,
  });

  beforeAll(async () => {
    await provider.start();
    const file = writeProvidersFile("client", [
      {
        slug: "solo",
        baseUrl: provider.url,
        apiKey: "sk-solo-hub-key",
        models: [
          { id: "acme/chat-1", providerModel: "up-chat", task: "chat", pricing: { input: 1, output: 2 } },
        ],
      },
    ]);
    hub = await startHub({ env: { HUB_PROVIDERS: file } });
    hub.secrets.add("sk-solo-hub-key");
    await hub.createUser("carol");
    token = await hub.createToken("carol");
    expect((await hub.cli(["credit", "add", "carol", "5"])).code).toBe(0);
  });
  afterAll(async () => {
    // Close this process's keep-alive connections, so the hub's shutdown does not wait on them.
    await agent.destroy();
    await provider.stop();
    await hub?.stop();
  });

  it("uses the injected fetch and sends the token only to the hub's own addresses", async () => {
    seen.length = 0;
    expect((await whoami({ connection: connection() })).name).toBe("carol");
    expect(seen.map((s) => new URL(s.url).pathname)).toEqual([
      "/.well-known/hub-configuration",
      "/api/whoami",
    ]);
    expect(seen.find((s) => s.url.endsWith("/hub-configuration"))?.authorized).toBe(false);
    expect(seen.find((s) => s.url.endsWith("/api/whoami"))?.authorized).toBe(true);
  });

  it("throws one error class per status, carrying the hub's code, message and request id", async () => {
    const missing = await repoInfo({ connection: connection(), repo: { name: "carol/none" } }).catch(
      (e: unknown) => e,
    );
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toBeInstanceOf(HubError);
    expect(missing).toMatchObject({
      status: 404,
      code: "repo_not_found",
      requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });

    const bad = await whoami({ connection: connection({ token: "hf_not-a-token" }) }).catch(
      (e: unknown) => e,
    );
    expect(bad).toBeInstanceOf(AuthenticationError);
    expect((bad as HubError).code).toMatch(/^[a-z_]+$/);

    await createRepo({ connection: connection(), repo: { name: "carol/twice" } });
    const twice = await createRepo({ connection: connection(), repo: { name: "carol/twice" } }).catch(
      (e: unknown) => e,
    );
    expect(twice).toBeInstanceOf(ConflictError);
    expect((twice as HubError).code).toBe("repo_exists");

    const down = await whoami({ connection: { endpoint: "http://127.0.0.1:9", token } }).catch(
      (e: unknown) => e,
    );
    expect(down).toBeInstanceOf(ConnectionError);
    expect((down as HubError).message).toMatch(/^Could not reach the hub at http:\/\/127\.0\.0\.1:9/);
  });

  it("lists the Router catalog with prices", async () => {
    const models = await listModels({ connection: connection() });
    expect(models).toEqual([
      expect.objectContaining({
        id: "acme/chat-1",
        providers: [
          expect.objectContaining({ provider: "solo", task: "chat", pricing: { input: 1, output: 2 } }),
        ],
      }),
    ]);
  });

  it("chats through the Router, and Router errors carry the Inference-Id", async () => {
    const answer = await chatCompletion({
      connection: connection(),
      body: { model: "acme/chat-1", messages: [{ role: "user", content: "hi" }] },
    });
    expect(answer.choices[0]?.message.content).toBeTruthy();
    expect(answer.inferenceId).toMatch(/^inf_/);

    const unknown = await chatCompletion({
      connection: connection(),
      body: { model: "acme/nope", messages: [{ role: "user", content: "hi" }] },
    }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(NotFoundError);
    expect(unknown).toMatchObject({
      code: "model_not_found",
      inferenceId: expect.stringMatching(/^inf_[0-9a-f-]{36}$/),
    });

    await hub.createUser("dave");
    const daveToken = await hub.createToken("dave");
    const refused = await chatCompletion({
      connection: connection({ token: daveToken }),
      body: { model: "acme/chat-1", messages: [{ role: "user", content: "hi" }] },
    }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PaymentRequiredError);
    expect((refused as HubError).inferenceId).toMatch(/^inf_/);
  });

  it("uploads and downloads through the injected fetch, checking the content", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "hub-sdk-"));
    const weights = randomBytes(3 * 1024 * 1024);
    writeFileSync(path.join(dir, "model.bin"), weights);
    writeFileSync(path.join(dir, "notes.txt"), "hello\n");
    const repo = { name: "carol/sdk-files" };
    await createRepo({ connection: connection(), repo });
    seen.length = 0;
    const uploaded = await uploadFiles({
      connection: connection(),
      repo,
      files: await collectFiles(dir),
      message: "Through the SDK",
    });
    expect(uploaded).toMatchObject({ lfsUploaded: ["model.bin"], regular: ["notes.txt"] });
    expect(seen.some((s) => new URL(s.url).pathname.startsWith("/lfs/objects/") && !s.authorized)).toBe(true);

    const cacheDir = path.join(dir, "cache");
    const downloaded = await downloadFiles({ connection: connection(), repo, cacheDir });
    expect(downloaded.files.map((f) => f.path).sort()).toEqual([".gitattributes", "model.bin", "notes.txt"]);
    expect(readFileSync(path.join(downloaded.root, "model.bin")).equals(weights)).toBe(true);
    expect(seen.filter((s) => s.url.includes("/resolve/"))).toHaveLength(3);
  });

  it("streams chat chunks, and stopping early cancels the request", async () => {
    provider.behavior = { kind: "ok", chunks: 5 };
    const whole = await chatCompletionStream({
      connection: connection(),
      body: { model: "acme/chat-1", messages: [{ role: "user", content: "hi" }] },
    });
    expect(whole.inferenceId).toMatch(/^inf_/);
    expect(whole.provider).toBe("solo");
    let text = "";
    for await (const chunk of whole) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("t0 t1 t2 t3 t4 ");

    provider.behavior = { kind: "ok", chunks: 200, chunkDelayMs: 50 };
    seen.length = 0;
    const started = Date.now();
    const stream = await chatCompletionStream({
      connection: connection(),
      body: { model: "acme/chat-1", messages: [{ role: "user", content: "hi" }] },
    });
    for await (const chunk of stream) {
      expect(chunk.choices[0]?.delta.content).toBe("t0 ");
      break;
    }
    expect(Date.now() - started).toBeLessThan(5000);
    const request = seen.find((s) => s.url.endsWith("/v1/chat/completions"));
    expect(request?.signal?.aborted).toBe(true);
    // The Router saw the client go (499, nginx's convention) and stopped the provider's stream.
    // Read from the hub's usage ledger: the row of this inference id.
    const ledger = new Database(path.join(hub.dataDir, "hub.db"), { readonly: true });
    const status = () =>
      (
        ledger
          .prepare("select status from inference_usage where inference_id = ?")
          .get(stream.inferenceId) as { status: number } | undefined
      )?.status;
    for (let i = 0; i < 50 && status() === undefined; i++) await new Promise((r) => setTimeout(r, 100));
    expect(status()).toBe(499);
    ledger.close();
    provider.behavior = { kind: "ok" };
  });
});
