import type {
  ApiError,
  McpPaperSearchResult,
  McpRepoCard,
  McpRepoFiles,
  McpRepoSearchResult,
  McpRouterModels,
} from "@hub/api";
import { uploadFiles } from "@huggingface/hub";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeProvidersFile } from "../../../test-support/fake-provider.js";
import { readJson, startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";
import { startHub, type TestHub } from "../../../test-support/hub-process.js";
import { commitFiles } from "../../../test-support/web.js";

const CARD = [
  "---",
  "license: mit",
  "pipeline_tag: text-classification",
  "library_name: transformers",
  "tags:",
  "  - text-classification",
  "  - arxiv:2106.09685",
  "---",
  "# Public BERT",
  "",
  "A small model for classifying sentences. " + "It is described at length. ".repeat(20),
].join("\n");
const WEIGHTS = Buffer.alloc(4096, 7);
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
};
const MCP_ACCEPT = "application/json, text/event-stream";

interface ToolAnswer {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
}

/** An MCP client of the SDK on a hub: over `fetch` (a real socket) or the in-process hub's `fetch`. */
async function connect(
  url: string,
  fetchOf: ((input: string | URL, init?: RequestInit) => Promise<Response>) | undefined,
  token?: string,
): Promise<Client> {
  const client = new Client({ name: "hub-mcp-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    ...(fetchOf ? { fetch: fetchOf } : {}),
    ...(token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}),
  });
  await client.connect(transport);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
  return (await client.callTool({ name, arguments: args })) as ToolAnswer;
}

const textOf = (answer: ToolAnswer) => answer.content.map((part) => part.text ?? "").join("\n");

/** The structured content of a successful call, typed as its tool's output schema says. */
function ok<T>(answer: ToolAnswer): T {
  expect(answer.isError, textOf(answer)).toBeFalsy();
  return answer.structuredContent as T;
}

/** The text of a call refused as a tool error. */
function refused(answer: ToolAnswer): string {
  expect(answer.isError, JSON.stringify(answer)).toBe(true);
  expect(answer.structuredContent).toBeUndefined();
  return textOf(answer);
}

describe("the MCP server", () => {
  let hub: InProcessHub;
  const tokens = { alice: "", bob: "" };
  const passwords = { alice: "", bob: "" };
  const clients: Client[] = [];
  const hubFetch = (input: string | URL, init?: RequestInit) => hub.fetch(input, init);
  const mcp = async (token?: string) => {
    const client = await connect(hub.url, hubFetch, token);
    clients.push(client);
    return client;
  };
  const api = (pathname: string, init: RequestInit & { token?: string; json?: unknown } = {}) =>
    hub.request(pathname, init);
  const created = async (response: Response) => {
    expect(response.status, await response.clone().text()).toBeLessThan(300);
  };
  const createRepo = (token: string, repo_id: string, repo_type = "model", isPrivate = false) =>
    api("/api/repos", { method: "POST", token, json: { repo_id, repo_type, private: isPrivate } }).then(
      created,
    );
  const settings = (repo: string, json: unknown) =>
    api(`/api/models/${repo}/settings`, { method: "PUT", token: tokens.alice, json }).then(created);

  beforeAll(async () => {
    const providers = writeProvidersFile("mcp", [
      {
        slug: "alpha",
        baseUrl: "http://127.0.0.1:9/v1",
        apiKey: "sk-alpha-mcp",
        models: [
          { id: "acme/chat-1", providerModel: "m", task: "chat", pricing: { input: 0.5, output: 1.25 } },
          { id: "acme/embed-1", providerModel: "e", task: "embeddings", pricing: { input: 0.02, output: 0 } },
        ],
      },
    ]);
    hub = await startInProcessHub({
      env: { HUB_PROVIDERS: providers, HUB_ROUTER_PUBLIC_URL: "https://router.example.com" },
    });
    hub.secrets.add("sk-alpha-mcp");
    for (const handle of ["alice", "bob"] as const) {
      passwords[handle] = (await hub.createUser(handle)).password;
      tokens[handle] = await hub.createToken(handle, ["--role", "write"]);
    }
    await createRepo(tokens.alice, "alice/public-bert");
    await uploadFiles({
      repo: { type: "model", name: "alice/public-bert" },
      accessToken: tokens.alice,
      hubUrl: hub.url,
      fetch: (input: string | URL | Request, init?: RequestInit) =>
        hub.fetch(input instanceof Request ? input.url : input, init),
      files: [
        { path: "README.md", content: new Blob([CARD]) },
        { path: "config.json", content: new Blob(['{"hidden_size": 8}']) },
        { path: "onnx/model.onnx", content: new Blob(["onnx"]) },
        { path: "model.bin", content: new Blob([WEIGHTS]) },
      ],
    });
    await createRepo(tokens.alice, "alice/secret-bert", "model", true);
    await commitFiles(hub, tokens.alice, "alice/secret-bert", { "README.md": "# Secret BERT\n" });
    for (const [name, gate] of [
      ["manual-bert", "manual"],
      ["auto-bert", "auto"],
    ] as const) {
      await createRepo(tokens.alice, `alice/${name}`);
      await commitFiles(hub, tokens.alice, `alice/${name}`, {
        "README.md": `# Gated ${gate}\n`,
        "w.txt": "w",
      });
      await settings(`alice/${name}`, { gated: gate });
    }
    await createRepo(tokens.alice, "alice/bare-bert");
    await commitFiles(hub, tokens.alice, "alice/bare-bert", { "notes.txt": "no card here\n" });
    await createRepo(tokens.alice, "alice/broken-bert");
    await commitFiles(hub, tokens.alice, "alice/broken-bert", {
      "README.md": "---\nlicense: [mit\n---\n# Broken header\n",
    });
    await createRepo(tokens.bob, "bob/bert-tiny");
    await createRepo(tokens.alice, "alice/squad-mini", "dataset");
    await api("/api/repos/create", {
      method: "POST",
      token: tokens.alice,
      json: { name: "chat-demo", type: "space", sdk: "gradio" },
    }).then(created);
    await api("/api/me/paper-submissions", {
      method: "POST",
      token: tokens.alice,
      json: {
        arxivId: "2106.09685",
        title: "LoRA: Low-Rank Adaptation of Large Language Models",
        authors: ["Edward J. Hu", "Yelong Shen"],
        summary: "We propose Low-Rank Adaptation, or LoRA, which freezes the pre-trained model weights.",
        publishedAt: "2021-06-17",
      },
    }).then(created);
  });

  afterAll(async () => {
    for (const client of clients) await client.close();
    await hub?.stop();
  });

  it("is named in the discovery document and lists its read-only tools with JSON schemas", async () => {
    const discovery = await readJson<{ mcp_url: string }>(await api("/.well-known/hub-configuration"));
    expect(discovery.mcp_url).toBe(`${hub.url}/mcp`);
    const client = await mcp();
    expect(client.getServerVersion()).toMatchObject({ name: "hub", version: expect.any(String) });
    expect(client.getInstructions()).toMatch(/acts as the caller/);
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: false });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      "search_models",
      "search_datasets",
      "search_spaces",
      "search_papers",
      "read_repo_card",
      "list_repo_files",
      "list_router_models",
    ]);
    for (const tool of tools) {
      expect(tool.description?.length, tool.name).toBeGreaterThan(60);
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema?.type).toBe("object");
      expect(tool.annotations?.readOnlyHint).toBe(true);
    }
    const search = tools.find((tool) => tool.name === "search_models");
    expect(search?.inputSchema.properties?.limit).toMatchObject({ minimum: 1, maximum: 100 });
    expect(search?.inputSchema).toMatchObject({ additionalProperties: false });
    const card = tools.find((tool) => tool.name === "read_repo_card");
    expect(card?.inputSchema.required).toEqual(["repo_id"]);
  });

  it("searches models as the caller: a private one only with a token that may see it", async () => {
    const ids = async (client: Client, args: Record<string, unknown> = {}) =>
      ok<McpRepoSearchResult>(await call(client, "search_models", args)).repositories.map((r) => r.id);
    const anonymous = await mcp();
    expect(await ids(anonymous, { query: "bert", sort: "id", direction: "asc" })).toEqual([
      "alice/auto-bert",
      "alice/bare-bert",
      "alice/broken-bert",
      "alice/manual-bert",
      "alice/public-bert",
      "bob/bert-tiny",
    ]);
    const alice = await mcp(tokens.alice);
    expect(await ids(alice, { query: "secret" })).toEqual(["alice/secret-bert"]);
    expect(await ids(await mcp(tokens.bob), { query: "secret" })).toEqual([]);
    expect(await ids(anonymous, { query: "secret" })).toEqual([]);
    expect(await ids(anonymous, { author: "bob" })).toEqual(["bob/bert-tiny"]);

    const answer = await call(alice, "search_models", {
      query: "bert",
      sort: "id",
      direction: "desc",
      limit: 2,
    });
    const page = ok<McpRepoSearchResult>(answer);
    expect(page.repositories.map((r) => r.id)).toEqual(["bob/bert-tiny", "alice/secret-bert"]);
    expect(page.next_offset).toBe(2);
    expect(page.repositories[1]).toMatchObject({
      author: "alice",
      private: true,
      gated: false,
      url: `${hub.url}/alice/secret-bert`,
    });
    expect(textOf(answer)).toContain(`- alice/secret-bert [private], updated `);
    expect(textOf(answer)).toContain("More with offset 2.");
    const next = ok<McpRepoSearchResult>(
      await call(alice, "search_models", {
        query: "bert",
        sort: "id",
        direction: "desc",
        limit: 2,
        offset: 2,
      }),
    );
    expect(next.repositories.map((r) => r.id)).toEqual(["alice/public-bert", "alice/manual-bert"]);
    // Tags (the card's, and what its front matter and files say) narrow a search; each hit carries its own.
    const tagged = await call(anonymous, "search_models", {
      filter: ["text-classification", "license:mit", "transformers"],
    });
    expect(ok<McpRepoSearchResult>(tagged).repositories).toMatchObject([
      {
        id: "alice/public-bert",
        pipeline_tag: "text-classification",
        library_name: "transformers",
        likes: 0,
        tags: expect.arrayContaining(["text-classification", "license:mit", "arxiv:2106.09685"]),
      },
    ]);
    expect(textOf(tagged)).toContain("- alice/public-bert [text-classification, transformers], updated ");
    for (const sort of ["likes", "downloads", "trending", "num_parameters", "mainSize"]) {
      expect((await call(anonymous, "search_models", { sort, limit: 1 })).isError, sort).toBeFalsy();
    }
    const none = ok<McpRepoSearchResult>(await call(anonymous, "search_models", { filter: ["license:gpl"] }));
    expect(none.repositories).toEqual([]);
    // A search over the cards' words finds a repository whose name does not hold them.
    const byCard = ok<McpRepoSearchResult>(await call(anonymous, "search_models", { query: "classifying" }));
    expect(byCard.repositories.map((r) => r.id)).toEqual(["alice/public-bert"]);
    const gated = ok<McpRepoSearchResult>(await call(anonymous, "search_models", { query: "manual" }));
    expect(gated.repositories[0]?.gated).toBe("manual");
  });

  it("searches datasets and spaces, each of its own kind", async () => {
    const client = await mcp();
    const datasets = ok<McpRepoSearchResult>(await call(client, "search_datasets", { author: "alice" }));
    expect(datasets).toMatchObject({ type: "dataset", next_offset: null });
    expect(datasets.repositories.map((r) => [r.id, r.url])).toEqual([
      ["alice/squad-mini", `${hub.url}/datasets/alice/squad-mini`],
    ]);
    const spaces = await call(client, "search_spaces", { query: "chat" });
    expect(ok<McpRepoSearchResult>(spaces).repositories).toMatchObject([
      { id: "alice/chat-demo", sdk: "gradio", url: `${hub.url}/spaces/alice/chat-demo` },
    ]);
    expect(textOf(spaces)).toMatch(/^1 space:\n- alice\/chat-demo \[sdk gradio\]/);
    expect(textOf(await call(client, "search_spaces", { query: "nothing-like-this" }))).toBe(
      "No spaces match.",
    );
  });

  it("searches papers by title, author or arXiv id", async () => {
    const client = await mcp();
    for (const query of ["low-rank", "Yelong", "2106.09685"]) {
      const answer = await call(client, "search_papers", { query });
      expect(ok<McpPaperSearchResult>(answer).papers, query).toEqual([
        {
          id: "2106.09685",
          title: "LoRA: Low-Rank Adaptation of Large Language Models",
          authors: ["Edward J. Hu", "Yelong Shen"],
          summary: "We propose Low-Rank Adaptation, or LoRA, which freezes the pre-trained model weights.",
          publishedAt: "2021-06-17T00:00:00.000Z",
          url: "https://arxiv.org/abs/2106.09685",
        },
      ]);
      expect(textOf(answer)).toContain('- 2106.09685 "LoRA: Low-Rank Adaptation of Large Language Models"');
    }
    expect(ok<McpPaperSearchResult>(await call(client, "search_papers", { query: "zebra" })).papers).toEqual(
      [],
    );
  });

  it("reads a card with its metadata, and cuts it at max_chars", async () => {
    const client = await mcp();
    const answer = await call(client, "read_repo_card", { repo_id: "alice/public-bert" });
    const card = ok<McpRepoCard>(answer);
    expect(card).toMatchObject({
      id: "alice/public-bert",
      type: "model",
      url: `${hub.url}/alice/public-bert`,
      commit: expect.stringMatching(/^[0-9a-f]{40}$/),
      metadata: {
        license: "mit",
        pipeline_tag: "text-classification",
        library_name: "transformers",
        tags: ["text-classification", "arxiv:2106.09685"],
      },
      metadata_problems: [],
      text: CARD,
      truncated: false,
    });
    expect(textOf(answer)).toContain("# Public BERT");
    const cut = ok<McpRepoCard>(
      await call(client, "read_repo_card", { repo_id: "alice/public-bert", max_chars: 100 }),
    );
    expect(cut.text).toBe(CARD.slice(0, 100));
    expect(cut.truncated).toBe(true);
    expect(cut.metadata).toEqual(card.metadata);
    const broken = ok<McpRepoCard>(await call(client, "read_repo_card", { repo_id: "alice/broken-bert" }));
    expect(broken.metadata).toBeNull();
    expect(broken.metadata_problems).toEqual([expect.stringMatching(/^The YAML front matter is invalid/)]);
    expect(refused(await call(client, "read_repo_card", { repo_id: "alice/bare-bert" }))).toMatch(
      /alice\/bare-bert has no README\.md \(its card\) on main; list its files with list_repo_files/,
    );
  });

  it("shows a private repository's card and files to its owner only", async () => {
    const args = { repo_id: "alice/secret-bert" };
    const anonymous = await mcp();
    expect(refused(await call(anonymous, "read_repo_card", args))).toMatch(/Sign in/);
    expect(refused(await call(anonymous, "list_repo_files", args))).toMatch(/Sign in/);
    const bob = await mcp(tokens.bob);
    expect(refused(await call(bob, "read_repo_card", args))).toMatch(
      /Repository alice\/secret-bert was not found, or you may not see it/,
    );
    // A repository that does not exist answers the same, so existence never leaks.
    expect(refused(await call(bob, "read_repo_card", { repo_id: "alice/no-such-bert" }))).toMatch(
      /Repository alice\/no-such-bert was not found, or you may not see it/,
    );
    const alice = await mcp(tokens.alice);
    expect(ok<McpRepoCard>(await call(alice, "read_repo_card", args)).text).toBe("# Secret BERT\n");
    expect(ok<McpRepoFiles>(await call(alice, "list_repo_files", args)).files.map((f) => f.path)).toContain(
      "README.md",
    );
  });

  it("keeps a gated repository's card behind its gate, as its files are, but lists the files", async () => {
    const anonymous = await mcp();
    const bob = await mcp(tokens.bob);
    const manual = { repo_id: "alice/manual-bert" };
    expect(refused(await call(anonymous, "read_repo_card", manual))).toMatch(
      /alice\/manual-bert is a gated repository: sign in/,
    );
    expect(refused(await call(bob, "read_repo_card", manual))).toMatch(
      /alice\/manual-bert is a gated repository: ask for access/,
    );
    expect(ok<McpRepoCard>(await call(await mcp(tokens.alice), "read_repo_card", manual)).text).toBe(
      "# Gated manual\n",
    );
    // Listing files is reading the repository, which the gate does not guard (as GET …/tree answers).
    expect(ok<McpRepoFiles>(await call(bob, "list_repo_files", manual)).files.map((f) => f.path)).toEqual([
      ".gitattributes",
      "README.md",
      "w.txt",
    ]);
    // Once bob's request is accepted (at once, in auto mode), the card is his to read.
    const auto = { repo_id: "alice/auto-bert" };
    expect(refused(await call(bob, "read_repo_card", auto))).toMatch(/gated repository/);
    await api("/api/models/alice/auto-bert/ask-access", { method: "POST", token: tokens.bob, json: {} }).then(
      created,
    );
    expect(ok<McpRepoCard>(await call(bob, "read_repo_card", auto)).text).toBe("# Gated auto\n");
  });

  it("lists a repository's files with their sizes and LFS, under a folder, up to a limit", async () => {
    const client = await mcp();
    const answer = await call(client, "list_repo_files", { repo_id: "alice/public-bert" });
    const listing = ok<McpRepoFiles>(answer);
    expect(listing).toMatchObject({
      id: "alice/public-bert",
      type: "model",
      commit: expect.stringMatching(/^[0-9a-f]{40}$/),
      total: 5,
      truncated: false,
    });
    expect(listing.files).toEqual([
      { path: ".gitattributes", size: expect.any(Number), lfs: false },
      { path: "README.md", size: Buffer.byteLength(CARD), lfs: false },
      { path: "config.json", size: 18, lfs: false },
      { path: "model.bin", size: WEIGHTS.length, lfs: true },
      { path: "onnx/model.onnx", size: 4, lfs: true },
    ]);
    expect(textOf(answer)).toContain("- model.bin (4.1 kB, LFS)");
    const onnx = ok<McpRepoFiles>(
      await call(client, "list_repo_files", { repo_id: "alice/public-bert", path: "onnx/" }),
    );
    expect(onnx.files.map((f) => f.path)).toEqual(["onnx/model.onnx"]);
    const first = ok<McpRepoFiles>(
      await call(client, "list_repo_files", { repo_id: "alice/public-bert", limit: 2 }),
    );
    expect(first).toMatchObject({ total: 5, truncated: true });
    expect(first.files).toHaveLength(2);
    expect(
      refused(await call(client, "list_repo_files", { repo_id: "alice/public-bert", revision: "nope" })),
    ).toMatch(/Revision nope was not found in alice\/public-bert/);
    const dataset = ok<McpRepoFiles>(
      await call(client, "list_repo_files", { repo_id: "alice/squad-mini", repo_type: "dataset" }),
    );
    expect(dataset.files.map((f) => f.path)).toEqual([".gitattributes"]);
  });

  it("lists the models the Router serves, by text and task", async () => {
    const client = await mcp();
    const answer = await call(client, "list_router_models");
    const served = ok<McpRouterModels>(answer);
    expect(served.inference_url).toBe("https://router.example.com");
    expect(served.models.map((m) => m.id)).toEqual(["acme/chat-1", "acme/embed-1"]);
    expect(served.models[0]?.providers).toMatchObject([
      { provider: "alpha", task: "chat", status: "live", pricing: { input: 0.5, output: 1.25 } },
    ]);
    expect(textOf(answer)).toContain("served at https://router.example.com/v1");
    expect(textOf(answer)).toContain("- acme/chat-1: chat via alpha ($0.5/M input, $1.25/M output, live)");
    const embeddings = ok<McpRouterModels>(await call(client, "list_router_models", { task: "embeddings" }));
    expect(embeddings.models.map((m) => m.id)).toEqual(["acme/embed-1"]);
    const named = ok<McpRouterModels>(await call(client, "list_router_models", { query: "CHAT" }));
    expect(named.models.map((m) => m.id)).toEqual(["acme/chat-1"]);
    expect(textOf(await call(client, "list_router_models", { query: "zebra" }))).toBe(
      "The Router serves no model that matches.",
    );
  });

  it("answers bad arguments with a tool error naming the argument, and an unknown tool with a protocol error", async () => {
    const client = await mcp();
    expect(refused(await call(client, "search_models", { limit: 0 }))).toBe(
      'The argument "limit" must be >= 1.',
    );
    expect(refused(await call(client, "search_models", { q: "bert" }))).toBe(
      'search_models takes no argument "q"; it takes query, author, filter, sort, direction, limit, offset.',
    );
    expect(refused(await call(client, "search_models", { direction: "up" }))).toBe(
      'The argument "direction" must be one of "desc", "asc".',
    );
    expect(refused(await call(client, "search_models", { sort: "stars" }))).toMatch(
      /sort: "stars" is not available from this hub; sort by lastModified, createdAt, id, likes, downloads/,
    );
    expect(refused(await call(client, "search_models", { limit: "5" }))).toBe(
      'The argument "limit" must be integer.',
    );
    expect(refused(await call(client, "search_models", { filter: ["ok", ""] }))).toBe(
      'The argument "filter.1" must NOT have fewer than 1 characters.',
    );
    expect(refused(await call(client, "read_repo_card", {}))).toBe('The argument "repo_id" is required.');
    expect(refused(await call(client, "read_repo_card", { repo_id: "Not A Repo" }))).toMatch(
      /^The argument "repo_id" must match pattern/,
    );
    expect(refused(await call(client, "read_repo_card", { repo_id: "a/b", repo_type: "bucket" }))).toBe(
      'The argument "repo_type" must be one of "model", "dataset", "space", "mcp".',
    );
    await expect(call(client, "delete_everything")).rejects.toThrow(
      /There is no tool "delete_everything"; the tools are search_models/,
    );
  });

  it("refuses a bad or revoked token with 401 before any tool runs", async () => {
    await expect(connect(hub.url, hubFetch, "hf_not_a_token")).rejects.toMatchObject({
      code: 401,
      message: expect.stringContaining('"code":"invalid_token"'),
    });
    const token = await hub.createToken("bob", ["--role", "read"]);
    await hub.reauthenticate(tokens.bob, passwords.bob);
    const { tokens: list } = await readJson<{ tokens: Array<{ token_id: string; token_prefix: string }> }>(
      await api("/api/me/tokens", { token: tokens.bob }),
    );
    const matching = list.filter((t) => token.startsWith(t.token_prefix));
    expect(matching).toHaveLength(1);
    const id = matching[0]?.token_id;
    const client = await mcp(token);
    expect(
      ok<McpRepoSearchResult>(await call(client, "search_models", { author: "bob" })).repositories,
    ).toHaveLength(1);
    const revoked = await api(`/api/me/tokens/${id}`, { method: "DELETE", token: tokens.bob });
    expect(revoked.status).toBe(204);
    await expect(call(client, "search_models", { author: "bob" })).rejects.toMatchObject({
      code: 401,
      message: expect.stringContaining("The token is invalid, revoked or expired"),
    });
    const raw = await api("/mcp", {
      method: "POST",
      token,
      headers: { accept: MCP_ACCEPT },
      json: INITIALIZE,
    });
    expect(raw.status).toBe(401);
    expect((await readJson<ApiError>(raw)).code).toBe("invalid_token");
  });

  it("takes no browser session (without the forgery token it is a cross-site write; with it, still no token) nor other sites' pages", async () => {
    const cookie = await hub.signIn("alice", passwords.alice);
    const post = (headers: Record<string, string>) =>
      api("/mcp", { method: "POST", headers: { cookie, accept: MCP_ACCEPT, ...headers }, json: INITIALIZE });
    const forged = await post({ "x-csrf-token": "" });
    expect(forged.status).toBe(403);
    expect((await readJson<ApiError>(forged)).code).toBe("invalid_csrf_token");
    const anonymous = (origin: string) =>
      api("/mcp", { method: "POST", headers: { origin, accept: MCP_ACCEPT }, json: INITIALIZE });
    const rebound = await anonymous("https://evil.example");
    expect(rebound.status).toBe(403);
    expect((await readJson<ApiError>(rebound)).code).toBe("origin_not_allowed");
    expect((await anonymous(new URL(hub.url).origin)).status).toBe(200);
    const sameSite = await post({});
    expect(sameSite.status).toBe(403);
    expect(await readJson<ApiError>(sameSite)).toMatchObject({
      code: "token_required",
      error: expect.stringMatching(/send Authorization: Bearer <token>/),
    });
  });

  it("answers plain HTTP as Streamable HTTP does: JSON to a POST, 405 to GET and DELETE, metered as the API", async () => {
    const response = await api("/mcp", { method: "POST", headers: { accept: MCP_ACCEPT }, json: INITIALIZE });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(response.headers.get("mcp-session-id")).toBeNull();
    expect(response.headers.get("ratelimit")).toMatch(/^"hub";r=\d+;t=\d+$/);
    expect(response.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const body = await readJson<{ id: number; result: { serverInfo: { name: string } } }>(response);
    expect(body).toMatchObject({ id: 1, result: { serverInfo: { name: "hub" } } });
    const list = await api("/mcp", {
      method: "POST",
      headers: { accept: MCP_ACCEPT, "mcp-protocol-version": "2025-06-18" },
      json: { jsonrpc: "2.0", id: 2, method: "tools/list" },
    });
    expect((await readJson<{ result: { tools: unknown[] } }>(list)).result.tools).toHaveLength(7);
    const notAccepting = await api("/mcp", { method: "POST", json: INITIALIZE });
    expect(notAccepting.status).toBe(406);
    for (const method of ["GET", "DELETE"]) {
      const refusedMethod = await api("/mcp", { method, headers: { accept: "text/event-stream" } });
      expect(refusedMethod.status, method).toBe(405);
      expect(refusedMethod.headers.get("allow")).toBe("POST");
    }
    const notJson = await api("/mcp", {
      method: "POST",
      headers: { accept: MCP_ACCEPT, "content-type": "text/plain" },
      body: "hello",
    });
    expect(notJson.status).toBe(415);
  });
});

describe("the MCP server's rate limit", () => {
  let hub: InProcessHub;
  beforeAll(async () => {
    hub = await startInProcessHub({ env: { HUB_RATE_LIMIT: "3" } });
  });
  afterAll(() => hub?.stop());

  it("counts every message in the caller's API bucket and answers 429 once it is empty", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await hub.request("/mcp", {
        method: "POST",
        headers: { accept: MCP_ACCEPT },
        json: INITIALIZE,
      });
      statuses.push(response.status);
      if (response.status === 429) expect((await readJson<ApiError>(response)).code).toBe("rate_limited");
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});

describe("the MCP server over a real socket", () => {
  let hub: TestHub;
  beforeAll(async () => {
    hub = await startHub();
  });
  afterAll(() => hub?.stop());

  it("serves the SDK's client over HTTP: initialize, list tools, call one", async () => {
    await hub.createUser("carol");
    const token = await hub.createToken("carol");
    const response = await hub.request("/api/repos", {
      method: "POST",
      token,
      json: { repo_id: "carol/socket-model", repo_type: "model" },
    });
    expect(response.status).toBe(201);
    const client = await connect(hub.url, undefined);
    try {
      expect((await client.listTools()).tools).toHaveLength(7);
      const found = ok<McpRepoSearchResult>(await call(client, "search_models", { query: "socket" }));
      expect(found.repositories.map((r) => r.id)).toEqual(["carol/socket-model"]);
    } finally {
      await client.close();
    }
  });
});
