import { downloadFile, listModels, modelInfo, uploadFiles } from "@huggingface/hub";
import type { ApiError } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { EXPAND_FIELDS } from "../repos/listing-query.js";
import { ggufFile } from "../../../test-support/gguf.js";
import { readJson, startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";

interface Entry {
  id: string;
  tags?: string[];
  likes?: number;
  downloads?: number;
  pipeline_tag?: string | null;
  library_name?: string | null;
  cardData?: Record<string, unknown> | null;
  config?: Record<string, unknown> | null;
  safetensors?: { parameters: Record<string, number>; total: number } | null;
  baseModels?: { relation: string; models: Array<{ id: string }> } | null;
  childrenModelCount?: number;
  cardProblems?: string[];
  siblings?: Array<{ rfilename: string }>;
  sha?: string;
  author?: string;
  spaces?: string[];
  gguf?: Record<string, unknown> | null;
}

/** A safetensors file: its header (tensors and shapes) and zeroed data of the right length. */
function safetensors(tensors: Record<string, { dtype: string; shape: number[]; bytes: number }>): Buffer {
  let offset = 0;
  const header: Record<string, unknown> = { __metadata__: { format: "pt" } };
  for (const [name, tensor] of Object.entries(tensors)) {
    const size = tensor.shape.reduce((a, b) => a * b, 1) * tensor.bytes;
    header[name] = { dtype: tensor.dtype, shape: tensor.shape, data_offsets: [offset, offset + size] };
    offset += size;
  }
  const json = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([length, json, Buffer.alloc(offset)]);
}

const card = (front: string, body: string) => `---\n${front}\n---\n\n${body}\n`;

/**
 * Discovery's metadata (issue 20): what pushes to a default branch index (the
 * card's front matter, tags, base models, safetensors parameters read from
 * headers, config), the listing parameters the Hugging Face clients send,
 * `expand`, and full-text search over cards with the private and gated rules
 * applied inside the query; on both dialects, with the official JS client too.
 */
describe.each(DIALECTS)("discovery's metadata and search, on %s", (dialect) => {
  let hub: InProcessHub;
  let alice: string;
  let bob: string;

  const fetchFor = (input: string | URL | Request, init?: RequestInit) =>
    hub.fetch(input instanceof Request ? input.url : input, init);

  const create = async (token: string, repoId: string, extra: Record<string, unknown> = {}) => {
    const response = await hub.request("/api/repos", {
      method: "POST",
      token,
      json: { repo_id: repoId, ...extra },
    });
    expect(response.status, await response.clone().text()).toBe(201);
  };
  const commit = async (
    token: string,
    repoId: string,
    files: Record<string, string | Buffer>,
    { branch = "main", type = "model" } = {},
  ) => {
    const lines = [
      { key: "header", value: { summary: "Files" } },
      ...Object.entries(files).map(([path, content]) => ({
        key: "file",
        value: { path, content: Buffer.from(content).toString("base64"), encoding: "base64" },
      })),
    ];
    const response = await hub.request(`/api/${type}s/${repoId}/commit/${branch}`, {
      method: "POST",
      token,
      headers: { "content-type": "application/x-ndjson" },
      body: lines.map((line) => JSON.stringify(line)).join("\n"),
    });
    expect(response.status, await response.clone().text()).toBe(200);
  };
  const list = async (query: string, token?: string, type = "model") => {
    const response = await hub.request(`/api/${type}s?${query}`, token ? { token } : {});
    expect(response.status, `${query}: ${await response.clone().text()}`).toBe(200);
    return readJson<Entry[]>(response);
  };
  const ids = async (query: string, token?: string, type = "model") =>
    (await list(query, token, type)).map((entry) => entry.id);
  const info = async (repoId: string, query = "", token = alice) => {
    const response = await hub.request(`/api/models/${repoId}${query}`, { token });
    expect(response.status, await response.clone().text()).toBe(200);
    return readJson<Entry>(response);
  };

  beforeAll(async () => {
    hub = await startInProcessHub({ dialect });
    await hub.createUser("alice");
    await hub.createUser("bob");
    alice = await hub.createToken("alice");
    bob = await hub.createToken("bob");

    await create(alice, "alice/llama-base");
    await commit(alice, "alice/llama-base", {
      "README.md": card(
        [
          "license: apache-2.0",
          "pipeline_tag: text-generation",
          "library_name: transformers",
          "language: [en, fr]",
          "tags: [chat]",
          "datasets: [alice/corpus]",
          "model-index:",
          "  - name: llama-base",
          "    results: []",
        ].join("\n"),
        "# Llama base\n\nA small model that knows every quokka by name.",
      ),
      "config.json": JSON.stringify({ architectures: ["LlamaForCausalLM"], model_type: "llama", hidden: 4 }),
    });
    // The weights go through Git LFS, with the official client: the header is read from the object store.
    await uploadFiles({
      repo: { type: "model", name: "alice/llama-base" },
      accessToken: alice,
      hubUrl: hub.url,
      fetch: fetchFor,
      files: [
        {
          path: "model.safetensors",
          content: new Blob([
            safetensors({
              "layer.weight": { dtype: "F32", shape: [10, 20], bytes: 4 },
              "layer.bias": { dtype: "BF16", shape: [5], bytes: 2 },
            }),
          ]),
        },
      ],
    });

    await create(alice, "alice/llama-lora");
    await commit(alice, "alice/llama-lora", {
      "README.md": card("base_model: alice/llama-base\nlibrary_name: peft", "An adapter."),
    });
    await create(bob, "bob/llama-gguf");
    await commit(bob, "bob/llama-gguf", {
      "README.md": card("base_model: alice/llama-base\ntags: [gguf]", "Quantized."),
      "llama.Q4.gguf": ggufFile(
        {
          "general.architecture": { string: "llama" },
          "llama.context_length": { u32: 8192 },
          "tokenizer.ggml.tokens": { strings: ["<s>", "</s>", "hi"] },
          "tokenizer.ggml.bos_token_id": { u32: 0 },
          "tokenizer.ggml.eos_token_id": { u32: 1 },
        },
        { "token_embd.weight": [3, 1000], "output.weight": [1000, 3] },
      ),
    });
    await create(alice, "alice/secret", { private: true });
    await commit(alice, "alice/secret", { "README.md": card("tags: [chat]", "A secret quokka.") });
    await create(alice, "alice/walled");
    await commit(alice, "alice/walled", { "README.md": card("tags: [chat]", "Only a wombat lives here.") });
    const gate = await hub.request("/api/models/alice/walled/settings", {
      method: "PUT",
      token: alice,
      json: { gated: "auto" },
    });
    expect(gate.status).toBe(200);
    await create(bob, "bob/quokka-zoo");
    await commit(bob, "bob/quokka-zoo", { "README.md": card("tags: [zoo]", "Animals.") });
    await create(bob, "bob/broken");
    await commit(bob, "bob/broken", { "README.md": "---\nlicense: [mit\ntags: {\n---\nText.\n" });
    await create(bob, "bob/demo", { repo_type: "space" });
    await commit(
      bob,
      "bob/demo",
      { "README.md": card("sdk: gradio\nmodels: [alice/llama-base]", "A demo.") },
      { type: "space" },
    );
  });
  afterAll(() => hub?.stop());

  it("indexes a card's front matter, files and safetensors headers at each push to the default branch", async () => {
    const base = await info("alice/llama-base");
    expect(base.cardData).toMatchObject({ license: "apache-2.0", language: ["en", "fr"], tags: ["chat"] });
    expect(base.pipeline_tag).toBe("text-generation");
    expect(base.library_name).toBe("transformers");
    expect(base.safetensors).toEqual({ parameters: { F32: 200, BF16: 5 }, total: 205 });
    expect(base.config).toEqual({ architectures: ["LlamaForCausalLM"], model_type: "llama" });
    expect(base.tags).toEqual(
      expect.arrayContaining([
        "chat",
        "text-generation",
        "transformers",
        "en",
        "fr",
        "license:apache-2.0",
        "dataset:alice/corpus",
        "safetensors",
      ]),
    );
    expect(base.likes).toBe(0);
    expect(base.downloads).toBe(0);
    expect((base as unknown as Record<string, unknown>)["model-index"]).toEqual([
      { name: "llama-base", results: [] },
    ]);

    // A push to another branch changes nothing indexed; one to the default branch does.
    await commit(
      alice,
      "alice/llama-lora",
      { "README.md": card("license: mit", "Other.") },
      { branch: "main" },
    );
    expect((await info("alice/llama-lora")).cardData).toEqual({ license: "mit" });
    const branch = await hub.request("/api/models/alice/llama-lora/branch/dev", {
      method: "POST",
      token: alice,
      json: {},
    });
    expect(branch.status, await branch.clone().text()).toBeLessThan(300);
    await commit(
      alice,
      "alice/llama-lora",
      { "README.md": card("license: gpl-3.0", "Dev.") },
      { branch: "dev" },
    );
    expect((await info("alice/llama-lora")).cardData).toEqual({ license: "mit" });
    await commit(alice, "alice/llama-lora", {
      "README.md": card("base_model: alice/llama-base\nlibrary_name: peft", "An adapter."),
    });
    expect((await info("alice/llama-lora")).cardData).toEqual({
      base_model: "alice/llama-base",
      library_name: "peft",
    });
  });

  it("keeps a push with invalid YAML and says what was wrong with the card", async () => {
    const broken = await info("bob/broken", "", bob);
    expect(broken.cardData).toBeNull();
    expect(broken.cardProblems?.[0]).toMatch(/YAML front matter is invalid/);
    expect(broken.siblings?.map((s) => s.rfilename)).toContain("README.md");
    expect((await info("alice/llama-base")).cardProblems).toEqual([]);
  });

  it("builds the model tree from other cards' base_model, with each one's relation", async () => {
    expect((await info("alice/llama-lora", "?expand[]=baseModels")).baseModels).toEqual({
      relation: "adapter",
      models: [{ id: "alice/llama-base" }],
    });
    expect((await info("bob/llama-gguf", "?expand[]=baseModels")).baseModels?.relation).toBe("quantized");
    // A GGUF file's header gives its facts, and its parameters to the num_parameters filter.
    expect((await info("bob/llama-gguf", "?expand[]=gguf")).gguf).toEqual({
      total: 6000,
      architecture: "llama",
      context_length: 8192,
      bos_token: "<s>",
      eos_token: "</s>",
    });
    expect((await info("alice/llama-lora", "?expand[]=gguf")).gguf).toBeNull();
    expect(await ids("num_parameters=min:5K,max:7K")).toEqual(["bob/llama-gguf"]);
    expect((await info("alice/llama-base", "?expand[]=childrenModelCount")).childrenModelCount).toBe(2);
    expect((await ids("base_model=alice/llama-base&sort=id&direction=1")).sort()).toEqual([
      "alice/llama-lora",
      "bob/llama-gguf",
    ]);
    expect(await ids("filter=base_model:adapter:alice/llama-base")).toEqual(["alice/llama-lora"]);
    expect(await ids("filter=base_model:quantized:alice/llama-base")).toEqual(["bob/llama-gguf"]);
    expect((await info("alice/llama-base", "?expand[]=spaces")).spaces).toEqual(["bob/demo"]);
    expect(await ids("models=alice/llama-base", undefined, "space")).toEqual(["bob/demo"]);
  });

  it("filters listings by tags and the clients' shortcuts, all of them together", async () => {
    expect((await ids("filter=chat", alice)).sort()).toEqual([
      "alice/llama-base",
      "alice/secret",
      "alice/walled",
    ]);
    expect((await ids("filter=chat")).sort()).toEqual(["alice/llama-base", "alice/walled"]);
    expect(await ids("pipeline_tag=text-generation")).toEqual(["alice/llama-base"]);
    expect(await ids("library=peft")).toEqual(["alice/llama-lora"]);
    expect(await ids("language=fr")).toEqual(["alice/llama-base"]);
    expect(await ids("license=apache-2.0")).toEqual(["alice/llama-base"]);
    expect(await ids("dataset=alice/corpus")).toEqual(["alice/llama-base"]);
    expect(await ids("trained_dataset=alice/corpus")).toEqual(["alice/llama-base"]);
    expect(await ids("filter=gguf")).toEqual(["bob/llama-gguf"]);
    expect(await ids("filter=chat&filter=fr")).toEqual(["alice/llama-base"]);
    expect(await ids("filter=chat,zoo")).toEqual([]);
    // 205 from llama-base's safetensors, 6,000 from llama-gguf's GGUF header.
    expect((await ids("num_parameters=min:100")).sort()).toEqual(["alice/llama-base", "bob/llama-gguf"]);
    expect(await ids("num_parameters=min:1K")).toEqual(["bob/llama-gguf"]);
    expect(await ids("num_parameters=min:7K")).toEqual([]);
    expect(await ids("num_parameters=max:0.2K")).toEqual([]);
    expect(await ids("num_parameters=min:0,max:205")).toEqual(["alice/llama-base"]);
    expect((await ids("sort=num_parameters")).slice(0, 2)).toEqual(["bob/llama-gguf", "alice/llama-base"]);
  });

  it("serves each expand field, only those asked, and the listing flags full, cardData and config", async () => {
    const [entry] = await list("search=llama-base&expand[]=safetensors&expand[]=tags");
    expect(Object.keys(entry ?? {}).sort()).toEqual(["_id", "id", "safetensors", "tags"]);
    expect(entry?.safetensors?.total).toBe(205);
    const [full] = await list("search=llama-base&full=true");
    expect(full?.siblings?.map((s) => s.rfilename).sort()).toEqual([
      ".gitattributes",
      "README.md",
      "config.json",
      "model.safetensors",
    ]);
    expect(full?.sha).toMatch(/^[0-9a-f]{40}$/);
    expect(full?.cardData?.license).toBe("apache-2.0");
    const [withConfig] = await list("search=llama-base&config=true&cardData=true");
    expect(withConfig?.config?.model_type).toBe("llama");
    expect(withConfig?.cardData?.license).toBe("apache-2.0");
    const [plain] = await list("search=llama-base");
    expect(plain).not.toHaveProperty("cardData");
    expect(plain).toMatchObject({ author: "alice", likes: 0, downloads: 0, pipeline_tag: "text-generation" });

    for (const field of [
      "xetEnabled",
      "cardProblems",
      "usedStorage",
      "gguf",
      "inference",
      "widgetData",
      "trendingScore",
    ]) {
      const one = await info("alice/llama-base", `?expand[]=${field}`);
      expect(Object.keys(one).sort(), field).toEqual(["_id", field, "id"].sort());
    }
    // Every field the Hugging Face Hub accepts for each kind is served, alone, on info and on listings.
    for (const [type, repoId] of [
      ["model", "alice/llama-base"],
      ["space", "bob/demo"],
    ] as const) {
      for (const field of EXPAND_FIELDS[type]) {
        const response = await hub.request(`/api/${type}s/${repoId}?expand[]=${field}`, { token: alice });
        expect(response.status, `${type} ${field}`).toBe(200);
        expect(Object.keys(await readJson<object>(response)).sort(), `${type} ${field}`).toEqual(
          ["_id", "id", field].sort(),
        );
        const [entry] = await list(`search=${repoId.split("/")[1]}&expand[]=${field}`, alice, type);
        expect(Object.keys(entry ?? {}).sort(), `${type} listing ${field}`).toEqual(
          ["_id", "id", field].sort(),
        );
      }
    }
    const refused = await hub.request("/api/models/alice/llama-base?expand[]=weights", { token: alice });
    expect(refused.status).toBe(400);
    const error = await readJson<ApiError>(refused);
    expect(error.field).toBe("expand");
    expect(error.error).toContain("safetensors");
  });

  it("searches names and card text, ranked, never showing a private repository or a gated card to those who may not see it", async () => {
    // The name's match comes first, then the card's.
    expect(await ids("search=quokka")).toEqual(["bob/quokka-zoo", "alice/llama-base"]);
    expect(await ids("search=quokka", bob)).toEqual(["bob/quokka-zoo", "alice/llama-base"]);
    expect((await ids("search=quokka", alice)).sort()).toEqual([
      "alice/llama-base",
      "alice/secret",
      "bob/quokka-zoo",
    ]);
    // Stemming: "quokkas" finds "quokka"; every word must be there.
    expect(await ids("search=QUOKKAS name")).toEqual(["alice/llama-base"]);
    expect(await ids("search=quokka wombat")).toEqual([]);
    // Operators are words, never syntax.
    expect(await ids('search=quokka" OR "secret')).toEqual([]);
    expect(await ids("search=*")).toEqual([]);

    // A gated repository's name is public, its card only past the gate.
    expect(await ids("search=walled")).toEqual(["alice/walled"]);
    expect(await ids("search=wombat")).toEqual([]);
    expect(await ids("search=wombat", bob)).toEqual([]);
    expect(await ids("search=wombat", alice)).toEqual(["alice/walled"]);
    const asked = await hub.request("/api/models/alice/walled/ask-access", {
      method: "POST",
      token: bob,
      json: {},
    });
    expect(asked.status, await asked.clone().text()).toBe(201);
    expect(await ids("search=wombat", bob)).toEqual(["alice/walled"]);

    // With a sort asked for, matches come in its order.
    expect(await ids("search=quokka&sort=id&direction=1")).toEqual(["alice/llama-base", "bob/quokka-zoo"]);
  });

  it("answers the official JS client's listModels and modelInfo", async () => {
    const found: string[] = [];
    for await (const model of listModels({
      search: { query: "llama", tags: ["chat"] },
      hubUrl: hub.url,
      fetch: fetchFor,
      additionalFields: ["safetensors", "library_name"],
    })) {
      found.push(model.name);
      if (model.name === "alice/llama-base") {
        expect(model.safetensors?.total).toBe(205);
        expect(model.task).toBe("text-generation");
        expect(model.likes).toBe(0);
      }
    }
    expect(found).toEqual(["alice/llama-base"]);
    const model = await modelInfo({
      name: "alice/llama-base",
      hubUrl: hub.url,
      fetch: fetchFor,
      additionalFields: ["cardData", "tags"],
    });
    expect(model.cardData?.license).toBe("apache-2.0");
    expect(model.tags).toContain("safetensors");
  });

  it("counts one download per snapshot per caller, by the files a library fetches first, never per file", async () => {
    const fetchFile = async (path: string, token?: string, method = "GET", repoPath = "alice/llama-base") => {
      const response = await hub.request(`/${repoPath}/resolve/main/${path}`, {
        method,
        ...(token ? { token } : {}),
        redirect: "manual",
      });
      expect(response.status, path).toBeLessThan(400);
      await response.arrayBuffer();
    };
    const counts = async (repoId = "alice/llama-base", type = "model") => {
      await hub.deps.downloads.flush();
      const response = await hub.request(
        `/api/${type}s/${repoId}?expand[]=downloads&expand[]=downloadsAllTime`,
        {
          token: alice,
        },
      );
      return readJson<{ downloads: number; downloadsAllTime: number }>(response);
    };
    // A snapshot by one caller: HEAD and GET of every file, one download.
    for (const path of ["config.json", "README.md", "model.safetensors", ".gitattributes"]) {
      await fetchFile(path, alice, "HEAD");
      await fetchFile(path, alice);
    }
    expect(await counts()).toMatchObject({ downloads: 1, downloadsAllTime: 1 });
    // The card alone is not a download; the config by another caller is, and an anonymous one too.
    await fetchFile("README.md", bob);
    expect((await counts()).downloads).toBe(1);
    await fetchFile("config.json", bob);
    await fetchFile("config.json");
    await fetchFile("config.json", alice);
    expect(await counts()).toMatchObject({ downloads: 3, downloadsAllTime: 3 });
    // The official client's downloadFile is a download like any other.
    await downloadFile({
      repo: { type: "model", name: "alice/llama-lora" },
      path: "README.md",
      hubUrl: hub.url,
      fetch: fetchFor,
      accessToken: bob,
    });
    expect((await counts("alice/llama-lora")).downloads).toBe(0);

    expect((await ids("sort=downloads")).slice(0, 1)).toEqual(["alice/llama-base"]);
    expect((await ids("sort=downloads&direction=1")).at(-1)).toBe("alice/llama-base");

    // Days age out of the last 30 days; all time keeps them. Trending favours what is recent.
    const day = (ago: number) => new Date(Date.now() - ago * 86_400_000).toISOString().slice(0, 10);
    const bobGguf = await hub.deps.repos.find("model", "bob", "llama-gguf");
    await hub.db
      .insertInto("repo_downloads")
      .values([
        { repository_id: bobGguf?.row.id ?? "", day: day(40), count: 50 },
        { repository_id: bobGguf?.row.id ?? "", day: day(2), count: 2 },
      ])
      .execute();
    await hub.deps.discoveryUpkeep.recompute();
    expect((await counts("bob/llama-gguf")).downloads).toBe(2);
    expect((await counts()).downloads).toBe(3);
    expect(await ids("sort=trendingScore&limit=2")).toEqual(["alice/llama-base", "bob/llama-gguf"]);
    const [trending] = await list("sort=trendingScore&limit=1&expand[]=trendingScore");
    expect((trending as unknown as { trendingScore: number }).trendingScore).toBe(3);
  });

  it("leaves out of a personalized listing what the account's preferences hide and its suppressions name", async () => {
    const carol = await hub.createToken("alice");
    const before = await ids("sort=id&direction=1&limit=100", carol);
    expect(before).toEqual(
      expect.arrayContaining(["alice/walled", "bob/quokka-zoo", "bob/broken", "alice/llama-lora"]),
    );
    const put = await hub.request("/api/me/content-preferences", {
      method: "PUT",
      token: carol,
      json: { hiddenTags: ["zoo"], contentFilters: ["gated", "without-model-card"] },
    });
    expect(put.status, await put.clone().text()).toBe(200);
    const suppress = async (json: Record<string, string>) => {
      const response = await hub.request("/api/me/recommendation-suppressions", {
        method: "POST",
        token: carol,
        json,
      });
      expect(response.status, await response.clone().text()).toBeLessThan(300);
    };
    await suppress({ kind: "repository", value: "alice/llama-lora" });
    await suppress({ kind: "tag", value: "gguf" });
    const personal = await ids("sort=id&direction=1&limit=100&personalized=true", carol);
    // zoo is hidden, walled is gated, broken's card is invalid, llama-lora and the gguf-tagged repository suppressed.
    for (const hidden of [
      "bob/quokka-zoo",
      "alice/walled",
      "bob/broken",
      "alice/llama-lora",
      "bob/llama-gguf",
    ]) {
      expect(personal, hidden).not.toContain(hidden);
    }
    expect(personal).toEqual(expect.arrayContaining(["alice/llama-base", "alice/secret"]));
    // Without asking, and for anonymous callers, nothing changes.
    expect(await ids("sort=id&direction=1&limit=100", carol)).toEqual(before);
    expect(await ids("sort=id&direction=1&limit=100&personalized=true")).toEqual(
      await ids("sort=id&direction=1&limit=100"),
    );
    await suppress({ kind: "author", value: "bob" });
    expect((await ids("limit=100&personalized=1", carol)).filter((id) => id.startsWith("bob/"))).toEqual([]);
  });

  it("indexes repositories made before indexing existed, in the background", async () => {
    await hub.db.deleteFrom("repo_metadata").execute();
    await hub.db.deleteFrom("repo_tags").execute();
    expect(await ids("filter=chat")).toEqual([]);
    const indexed = await hub.deps.metadataIndexer.backfill((id) => hub.deps.repos.findById(id));
    expect(indexed).toBeGreaterThanOrEqual(8);
    expect((await ids("filter=chat")).sort()).toEqual(["alice/llama-base", "alice/walled"]);
    expect(await hub.deps.metadataIndexer.backfill((id) => hub.deps.repos.findById(id))).toBe(0);
  });
});
