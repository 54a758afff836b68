import type { CatalogModel } from "@hub/api";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { FakeProvider, writeProvidersFile } from "../../../server/src/test-support/fake-provider.js";
import { startHub, type TestHub } from "../../../server/src/test-support/hub-process.js";
import { runCli, tempHome } from "../test-support/run-cli.js";

/** `hub models`, `hub chat` and `hub env` against a real hub whose Router fronts a fake upstream provider. */
describe("the hub CLI on the Router", () => {
  const provider = new FakeProvider("solo");
  let hub: TestHub;
  let env: Record<string, string>;

  beforeAll(async () => {
    await provider.start();
    const file = writeProvidersFile("cli", [
      {
        slug: "solo",
        baseUrl: provider.url,
        apiKey: "sk-solo-hub-key",
        models: [
          { id: "acme/chat-1", providerModel: "up", task: "chat", pricing: { input: 0.25, output: 1.5 } },
        ],
      },
    ]);
    hub = await startHub({ env: { HUB_PROVIDERS: file } });
    hub.secrets.add("sk-solo-hub-key");
    await hub.createUser("erin");
    const token = await hub.createToken("erin");
    expect((await hub.cli(["credit", "add", "erin", "5"])).code).toBe(0);
    env = { SERVICE_ENDPOINT: hub.url, SERVICE_HOME: tempHome() };
    expect((await runCli(["login", "--token-stdin"], env, `${token}\n`)).code).toBe(0);
  });
  afterEach(() => {
    provider.behavior = { kind: "ok" };
    provider.requests.length = 0;
  });
  afterAll(async () => {
    await hub?.stop();
    await provider.stop();
  });

  it("lists the catalog with prices, as a table and as JSON", async () => {
    const table = await runCli(["models"], env);
    expect(table.code, table.stderr).toBe(0);
    const [header, row] = table.stdout.trim().split("\n");
    expect(header).toMatch(/^MODEL\s+PROVIDER\s+TASK\s+INPUT\/M\s+OUTPUT\/M\s+STATUS\s+SPEED\s+FIRST TOKEN$/);
    expect(row).toMatch(/^acme\/chat-1\s+solo\s+chat\s+\$0\.250\s+\$1\.50\s+live/);
    const json = JSON.parse((await runCli(["models", "--json"], env)).stdout) as CatalogModel[];
    expect(json[0]?.providers[0]).toMatchObject({ provider: "solo", pricing: { input: 0.25, output: 1.5 } });
  });

  it("streams a chat answer to stdout, from the arguments or from stdin", async () => {
    provider.behavior = { kind: "ok", chunks: 4 };
    const answer = await runCli(["chat", "acme/chat-1", "Say", "hi", "--system", "Be brief"], env);
    expect(answer.code, answer.stderr).toBe(0);
    expect(answer.stdout).toBe("t0 t1 t2 t3 \n");
    expect(provider.requests[0]?.body).toMatchObject({
      stream: true,
      messages: [
        { role: "system", content: "Be brief" },
        { role: "user", content: "Say hi" },
      ],
    });
    const piped = await runCli(["chat", "acme/chat-1", "--json"], env, "from stdin\n");
    expect(piped.code, piped.stderr).toBe(0);
    expect(JSON.parse(piped.stdout)).toMatchObject({
      content: "t0 t1 t2 t3 ",
      provider: "solo",
      inference_id: expect.stringMatching(/^inf_/),
    });
    expect(provider.requests[1]?.body.messages).toEqual([{ role: "user", content: "from stdin" }]);
  });

  it("fails with one line naming the Router's code, and the Inference-Id with SERVICE_DEBUG", async () => {
    const missing = await runCli(["chat", "acme/none", "hi"], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toMatch(/^error: .+ \(model_not_found\)$/);
    const debug = await runCli(["chat", "acme/none", "hi"], { ...env, SERVICE_DEBUG: "1" });
    expect(debug.stderr).toMatch(/^inference id: inf_[0-9a-f-]{36}$/m);
    provider.behavior = { kind: "drop-mid-stream", chunks: 2 };
    const broken = await runCli(["chat", "acme/chat-1", "hi"], env);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toBe("t0 t1 ");
    expect(broken.stderr.trim()).toMatch(/^error: .+ \(stream_interrupted\)$/);
  });

  it("shows the addresses the hub publishes", async () => {
    const settings = JSON.parse((await runCli(["env", "--json"], env)).stdout) as {
      hub: { api_url: string; git_url: string; inference_url: string; ssh_url: string };
    };
    expect(settings.hub).toMatchObject({
      api_url: hub.url,
      git_url: hub.gitUrl,
      inference_url: hub.routerUrl,
      ssh_url: hub.sshUrl,
    });
  });
});
