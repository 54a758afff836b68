import type { CatalogModel } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeProvidersFile } from "../test-support/fake-provider.js";
import { readJson } from "../test-support/hub-process.js";
import { startInProcessHub, type InProcessHub } from "../test-support/hub-inprocess.js";

/** The Inference tab and the playground page rendered on the server, from the Router's catalog. */
describe("the inference pages", () => {
  let hub: InProcessHub;
  let cookies: string;
  let token: string;
  const html = { accept: "text/html" };
  const page = (path: string, headers: Record<string, string> = {}) =>
    hub.request(path, { headers: { ...html, ...headers } });
  const text = async (path: string, headers: Record<string, string> = {}) => {
    const response = await page(path, headers);
    const body = await response.text();
    expect(response.status, body.slice(0, 300)).toBe(200);
    return body;
  };

  beforeAll(async () => {
    const providers = writeProvidersFile("web-infer", [
      {
        slug: "alpha",
        baseUrl: "http://127.0.0.1:9/v1",
        apiKey: "sk-alpha-web-infer",
        models: [
          { id: "acme/chat-1", providerModel: "m", task: "chat", pricing: { input: 0.5, output: 1.25 } },
          { id: "acme/embed-1", providerModel: "e", task: "embeddings", pricing: { input: 0.02, output: 0 } },
        ],
      },
      {
        slug: "beta",
        baseUrl: "http://127.0.0.1:9/v1",
        apiKey: "sk-beta-web-infer",
        models: [
          {
            id: "acme/chat-1",
            providerModel: "m",
            task: "chat",
            pricing: { input: 0, output: 0 },
            contextLength: 8192,
          },
        ],
      },
    ]);
    hub = await startInProcessHub({ env: { HUB_PROVIDERS: providers } });
    hub.secrets.add("sk-alpha-web-infer");
    hub.secrets.add("sk-beta-web-infer");
    const { password } = await hub.createUser("acme");
    cookies = await hub.signIn("acme", password);
    token = await hub.createToken("acme");
    for (const name of ["chat-1", "embed-1", "plain"]) {
      const response = await hub.request("/api/repos", {
        method: "POST",
        token,
        json: { repo_id: `acme/${name}`, repo_type: "model" },
      });
      expect(response.status, await response.clone().text()).toBe(201);
    }
    const dataset = await hub.request("/api/repos", {
      method: "POST",
      token,
      json: { repo_id: "acme/chat-1", repo_type: "dataset" },
    });
    expect(dataset.status).toBe(201);
  });
  afterAll(() => hub?.stop());

  it("answers one model of the catalog through the API, and 404 for a model no provider serves", async () => {
    const served = await hub.request("/api/inference/models/acme/chat-1");
    expect(served.status).toBe(200);
    const model = await readJson<CatalogModel>(served);
    expect(model.providers.map((p) => [p.provider, p.status, p.pricing])).toEqual([
      ["alpha", "live", { input: 0.5, output: 1.25 }],
      ["beta", "live", { input: 0, output: 0 }],
    ]);
    const missing = await hub.request("/api/inference/models/acme/plain");
    expect(missing.status).toBe(404);
  });

  it("shows the Inference tab on a model the Router serves, and on nothing else", async () => {
    expect(await text("/acme/chat-1")).toContain('href="/acme/chat-1/inference"');
    expect(await text("/acme/plain")).not.toContain("/inference");
    expect(await text("/datasets/acme/chat-1")).not.toContain("/inference");
    expect((await page("/acme/plain/inference")).status).toBe(404);
    expect((await page("/datasets/acme/chat-1/inference")).status).toBe(404);
    expect((await page("/acme/plain/playground")).status).toBe(404);
  });

  it("lists the providers with prices and live status, and samples that name the Router but no token", async () => {
    const router = `${hub.config.routerPublicUrl}/v1`;
    const viewers: Record<string, string>[] = [{}, { cookie: cookies }];
    for (const headers of viewers) {
      const body = await text("/acme/chat-1/inference", headers);
      expect(body).toMatch(/<th scope="row" class="mono[^"]*">alpha<\/th>/);
      expect(body).toMatch(/<th scope="row" class="mono[^"]*">beta<\/th>/);
      expect(body).toContain("$0.5");
      expect(body).toContain("$1.25");
      expect(body).toContain("free");
      expect(body).toContain("8,192");
      expect(body.match(/>\s*Live\s*</g)?.length).toBe(2);
      expect(body).toContain(`OpenAI(base_url="${router}", api_key=os.environ["HUB_TOKEN"])`);
      expect(body).toContain(`new OpenAI({ baseURL: "${router}", apiKey: process.env.HUB_TOKEN })`);
      expect(body).toContain(`curl ${router}/chat/completions`);
      expect(body).toContain("Authorization: Bearer $HUB_TOKEN");
      expect(body).toContain("client.chat.completions.create(");
      expect(body).toContain('href="/acme/chat-1/playground"');
      expect(body).not.toContain(token);
      expect(body).not.toMatch(/hf_\w{10}|hubsi_/);
    }
  });

  it("writes embedding samples for an embeddings model, which has no playground", async () => {
    const body = await text("/acme/embed-1/inference");
    expect(body).toContain("client.embeddings.create(");
    expect(body).toContain(`curl ${hub.config.routerPublicUrl}/v1/embeddings`);
    expect(body).not.toContain("/playground");
    expect((await page("/acme/embed-1/playground")).status).toBe(404);
  });

  it("lets pages connect to the Router's origin, and to nothing else beyond the hub", async () => {
    const response = await page("/acme/chat-1/inference");
    const policy = response.headers.get("content-security-policy") ?? "";
    const connect = policy.split(";").find((directive) => directive.trim().startsWith("connect-src"));
    expect(connect?.trim()).toBe(`connect-src 'self' ${new URL(hub.config.routerPublicUrl).origin}`);
    expect(policy).toContain("script-src 'self'");
  });

  it("offers the playground to a signed-in person without putting any credential in the page", async () => {
    const anonymous = await text("/acme/chat-1/playground");
    expect(anonymous).toContain('href="/login?next=%2Facme%2Fchat-1%2Fplayground"');
    expect(anonymous).not.toContain('id="playground-message"');

    const signedIn = await text("/acme/chat-1/playground", { cookie: cookies });
    expect(signedIn).toMatch(/<label for="playground-message"[^>]*>Message<\/label>/);
    expect(signedIn).toContain('<option value="beta">beta</option>');
    expect(signedIn).not.toMatch(/hf_\w{10}|hubsi_/);
    // Rendering the page mints nothing: the browser asks for its credential when it sends.
    const data = await hub.request("/acme/chat-1/playground/__data.json", { headers: { cookie: cookies } });
    expect(await data.text()).not.toContain("hubsi_");
  });
});
