import type {
  ApiError,
  ContentPreferences,
  Recommendation,
  RecommendationSuppression,
  RecommendationSuppressionList,
} from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { readJson, startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";
import { readmeTags } from "./readme-tags.js";

describe("card tags", () => {
  it("reads tags from the README's YAML front matter only", () => {
    expect(
      readmeTags("---\ntags:\n- llama\n- text-generation\n- llama\nlicense: mit\n---\n# Model\n"),
    ).toEqual(["llama", "text-generation"]);
    expect(readmeTags("---\ntags: single\n---\n")).toEqual(["single"]);
    expect(readmeTags("---\ntags: [ok, 'bad tag', 3, {a: 1}]\n---\n")).toEqual(["ok"]);
    for (const text of [
      "# no header\ntags: [x]\n",
      "---\ntags: [unclosed\n---\n",
      "---\n- a list\n---\n",
      "",
    ]) {
      expect(readmeTags(text)).toEqual([]);
    }
  });
});

describe.each(DIALECTS)("content preferences and recommendation suppressions on %s", (dialect) => {
  let hub: InProcessHub;
  let alice: string;
  let read: string;
  let fineGrained: string;
  let bob: string;

  const commitReadme = async (repo: string, tags: string[]) => {
    const readme = `---\ntags:\n${tags.map((t) => `- ${t}`).join("\n")}\n---\n# ${repo}\n`;
    const body = [
      { key: "header", value: { summary: "card" } },
      {
        key: "file",
        value: { path: "README.md", content: Buffer.from(readme).toString("base64"), encoding: "base64" },
      },
    ]
      .map((line) => JSON.stringify(line))
      .join("\n");
    const response = await hub.request(`/api/models/${repo}/commit/main`, {
      method: "POST",
      token: bob,
      headers: { "content-type": "application/x-ndjson" },
      body,
    });
    expect(response.status).toBe(200);
  };
  const download = (repo: string, token?: string, method = "GET") =>
    hub.request(`/${repo}/resolve/main/README.md`, { method, ...(token ? { token } : {}) });
  const preferences = async (token = alice) => {
    const response = await hub.request("/api/me/content-preferences", { token });
    expect(response.status).toBe(200);
    return readJson<ContentPreferences>(response);
  };
  const put = (json: unknown, token = alice) =>
    hub.request("/api/me/content-preferences", { method: "PUT", token, json });
  const suppress = (json: unknown, token = alice) =>
    hub.request("/api/me/recommendation-suppressions", { method: "POST", token, json });

  beforeAll(async () => {
    hub = await startInProcessHub({ dialect });
    await hub.createUser("alice");
    await hub.createUser("bob");
    alice = await hub.createToken("alice");
    read = await hub.createToken("alice", ["--role", "read"]);
    fineGrained = await hub.createToken("alice", ["--scopes", "repo:read,repo:write"]);
    bob = await hub.createToken("bob");
    expect((await hub.cli(["org", "create", "acme", "--owner", "bob"])).code).toBe(0);
    for (const name of ["llama", "bert", "secret"]) {
      const created = await hub.request("/api/repos", {
        method: "POST",
        token: bob,
        json: { repo_id: `bob/${name}`, private: name === "secret" },
      });
      expect(created.status).toBe(201);
    }
    await commitReadme("bob/llama", ["text-generation", "llama", "en"]);
    await commitReadme("bob/bert", ["fill-mask", "en"]);
    await commitReadme("bob/secret", ["secret-tag"]);
  });
  afterAll(() => hub?.stop());

  it("learns interests from the tags of repositories the account downloaded", async () => {
    expect(await preferences()).toEqual({
      hiddenTags: [],
      languages: [],
      contentFilters: [],
      learnedInterests: [],
      updatedAt: null,
    });
    expect((await download("bob/llama", alice)).status).toBe(200);
    expect((await download("bob/llama", alice)).status).toBe(200);
    expect((await download("bob/bert", alice)).status).toBe(200);
    // Metadata probes and anonymous downloads are not the account's activity.
    expect((await download("bob/bert", alice, "HEAD")).status).toBe(200);
    expect((await download("bob/bert")).status).toBe(200);
    expect((await download("bob/secret", bob)).status).toBe(200);
    expect((await preferences()).learnedInterests).toEqual([
      { tag: "en", score: 3, repositories: 2 },
      { tag: "llama", score: 2, repositories: 1 },
      { tag: "text-generation", score: 2, repositories: 1 },
      { tag: "fill-mask", score: 1, repositories: 1 },
    ]);
    expect((await preferences(bob)).learnedInterests).toEqual([
      { tag: "secret-tag", score: 1, repositories: 1 },
    ]);
  });

  it("PUT replaces the explicit part; hidden tags leave the learned interests", async () => {
    const response = await put({
      hiddenTags: ["llama", "license:mit"],
      languages: ["en", "pt-BR"],
      contentFilters: ["not-for-all-audiences", "gated"],
      fromANewerClient: true,
    });
    expect(response.status).toBe(200);
    const saved = await readJson<ContentPreferences>(response);
    expect(saved).toMatchObject({
      hiddenTags: ["llama", "license:mit"],
      languages: ["en", "pt-BR"],
      contentFilters: ["not-for-all-audiences", "gated"],
    });
    expect(saved.learnedInterests.map((i) => i.tag)).toEqual(["en", "text-generation", "fill-mask"]);
    expect(Date.parse(saved.updatedAt ?? "")).toBeGreaterThan(Date.now() - 60_000);
    expect(await preferences(read)).toEqual(saved);
    const cleared = await readJson<ContentPreferences>(await put({ languages: ["fr"] }));
    expect(cleared).toMatchObject({ hiddenTags: [], languages: ["fr"], contentFilters: [] });
    expect(cleared.learnedInterests.map((i) => i.tag)).toContain("llama");
  });

  it("refuses every bad field with a 400 naming it", async () => {
    const cases: Array<[unknown, string]> = [
      [{ hiddenTags: "llama" }, "hiddenTags"],
      [{ hiddenTags: ["bad tag"] }, "hiddenTags.0"],
      [{ hiddenTags: [""] }, "hiddenTags.0"],
      [{ hiddenTags: [7] }, "hiddenTags.0"],
      [{ hiddenTags: ["a", "a"] }, "hiddenTags"],
      [{ hiddenTags: Array.from({ length: 101 }, (_, i) => `t${i}`) }, "hiddenTags"],
      [{ languages: ["english"] }, "languages.0"],
      [{ languages: ["EN"] }, "languages.0"],
      [{ languages: ["en", "en"] }, "languages"],
      [{ languages: Array.from({ length: 21 }, (_, i) => `a${String.fromCharCode(97 + i)}`) }, "languages"],
      [{ languages: null }, "languages"],
      [{ contentFilters: ["violence"] }, "contentFilters.0"],
      [{ contentFilters: ["gated", "gated"] }, "contentFilters"],
      [{ contentFilters: "gated" }, "contentFilters"],
    ];
    for (const [body, field] of cases) {
      const response = await put(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect((await readJson<ApiError>(response)).field, JSON.stringify(body)).toBe(field);
    }
    for (const body of [[], "x", null]) expect((await put(body)).status).toBe(400);
    expect((await preferences()).languages).toEqual(["fr"]);
  });

  it("learns only from repositories the account may still read, and forgets on request", async () => {
    const hidden = await hub.request("/api/models/bob/llama/settings", {
      method: "PUT",
      token: bob,
      json: { private: true },
    });
    expect(hidden.status).toBe(200);
    expect((await preferences()).learnedInterests).toEqual([
      { tag: "en", score: 1, repositories: 1 },
      { tag: "fill-mask", score: 1, repositories: 1 },
    ]);
    const cleared = await hub.request("/api/me/content-preferences/learned-interests", {
      method: "DELETE",
      token: alice,
    });
    expect(cleared.status).toBe(204);
    const after = await preferences();
    expect(after.learnedInterests).toEqual([]);
    expect(after.languages).toEqual(["fr"]);
    expect((await preferences(bob)).learnedInterests).toHaveLength(1);
    expect((await download("bob/bert", alice)).status).toBe(200);
    expect((await preferences()).learnedInterests.map((i) => i.tag)).toEqual(["en", "fill-mask"]);
  });

  it("needs a session or a role token: read to view, write to change", async () => {
    expect((await hub.request("/api/me/content-preferences")).status).toBe(401);
    expect((await put({})).status).toBe(200);
    expect((await hub.request("/api/me/content-preferences", { method: "PUT", json: {} })).status).toBe(401);
    expect(
      (await hub.request("/api/me/content-preferences/learned-interests", { method: "DELETE" })).status,
    ).toBe(401);
    for (const [token, wantsWrite] of [
      [read, true],
      [fineGrained, false],
      [fineGrained, true],
    ] as const) {
      const responses = wantsWrite
        ? [
            await put({}, token),
            await hub.request("/api/me/content-preferences/learned-interests", { method: "DELETE", token }),
          ]
        : [await hub.request("/api/me/content-preferences", { token })];
      for (const response of responses) {
        expect(response.status).toBe(403);
        expect((await readJson<ApiError>(response)).code).toBe("insufficient_scope");
      }
    }
  });

  it("records, lists and deletes recommendation suppressions", async () => {
    const created: RecommendationSuppression[] = [];
    for (const [body, value] of [
      [{ kind: "repository", value: "bob/bert", note: "ignored" }, "model/bob/bert"],
      [{ kind: "author", value: "bob" }, "bob"],
      [{ kind: "author", value: "acme" }, "acme"],
      [{ kind: "tag", value: "text-generation" }, "text-generation"],
    ] as const) {
      const response = await suppress(body);
      expect(response.status, JSON.stringify(body)).toBe(201);
      const suppression = await readJson<RecommendationSuppression>(response);
      expect(suppression).toMatchObject({ kind: body.kind, value });
      expect(suppression.id).toMatch(/^[0-9a-f-]{36}$/);
      created.push(suppression);
    }
    const list = await readJson<RecommendationSuppressionList>(
      await hub.request("/api/me/recommendation-suppressions", { token: read }),
    );
    expect(list.suppressions.map((s) => s.value).sort()).toEqual(
      ["acme", "bob", "model/bob/bert", "text-generation"].sort(),
    );
    expect(
      (
        await readJson<RecommendationSuppressionList>(
          await hub.request("/api/me/recommendation-suppressions", { token: bob }),
        )
      ).suppressions,
    ).toEqual([]);

    const duplicate = await suppress({ kind: "tag", value: "text-generation" });
    expect(duplicate.status).toBe(409);
    expect((await readJson<ApiError>(duplicate)).code).toBe("suppression_exists");
    for (const [body, status, field] of [
      [{}, 400, "kind"],
      [{ kind: "user", value: "bob" }, 400, "kind"],
      [{ kind: "tag" }, 400, "value"],
      [{ kind: "tag", value: "" }, 400, "value"],
      [{ kind: "tag", value: 5 }, 400, "value"],
      [{ kind: "tag", value: "x".repeat(201) }, 400, "value"],
      [{ kind: "tag", value: "bad tag" }, 400, "value"],
      [{ kind: "repository", value: "no-slash" }, 400, "value"],
      [{ kind: "repository", value: "bob/bert", repoType: "image" }, 400, "repoType"],
      [{ kind: "repository", value: "bob/nothing" }, 404, undefined],
      [{ kind: "repository", value: "bob/bert", repoType: "dataset" }, 404, undefined],
      [{ kind: "repository", value: "bob/secret" }, 404, undefined],
      [{ kind: "author", value: "nobody" }, 404, undefined],
    ] as const) {
      const response = await suppress(body);
      expect(response.status, JSON.stringify(body)).toBe(status);
      if (field) expect((await readJson<ApiError>(response)).field, JSON.stringify(body)).toBe(field);
    }
    for (const body of [[], "x", null]) expect((await suppress(body)).status).toBe(400);

    const first = created[0]?.id ?? "";
    expect(
      (await hub.request(`/api/me/recommendation-suppressions/${first}`, { method: "DELETE", token: bob }))
        .status,
    ).toBe(404);
    const removed = await hub.request(`/api/me/recommendation-suppressions/${first}`, {
      method: "DELETE",
      token: alice,
    });
    expect(removed.status).toBe(204);
    expect(
      (await hub.request(`/api/me/recommendation-suppressions/${first}`, { method: "DELETE", token: alice }))
        .status,
    ).toBe(404);
    expect(
      (await hub.request("/api/me/recommendation-suppressions/not-an-id", { method: "DELETE", token: alice }))
        .status,
    ).toBe(404);
    expect(
      (
        await hub.request(`/api/me/recommendation-suppressions/${"x".repeat(65)}`, {
          method: "DELETE",
          token: alice,
        })
      ).status,
    ).toBe(400);

    // Suppressions of repositories and authors follow renames.
    expect((await suppress({ kind: "repository", value: "bob/bert" })).status).toBe(201);
    const moved = await hub.request("/api/repos/move", {
      method: "POST",
      token: bob,
      json: { fromRepo: "bob/bert", toRepo: "bob/roberta", type: "model" },
    });
    expect(moved.status).toBe(200);
    const after = await readJson<RecommendationSuppressionList>(
      await hub.request("/api/me/recommendation-suppressions", { token: alice }),
    );
    expect(after.suppressions.map((s) => s.value)).toContain("model/bob/roberta");
  });

  it("needs a session or a role token for suppressions: read to list, write to change", async () => {
    const id = "00000000-0000-0000-0000-000000000000";
    expect((await hub.request("/api/me/recommendation-suppressions")).status).toBe(401);
    expect((await suppress({ kind: "tag", value: "x" }, "")).status).toBe(401);
    expect(
      (await hub.request(`/api/me/recommendation-suppressions/${id}`, { method: "DELETE" })).status,
    ).toBe(401);
    for (const response of [
      await suppress({ kind: "tag", value: "x" }, read),
      await hub.request(`/api/me/recommendation-suppressions/${id}`, { method: "DELETE", token: read }),
      await hub.request("/api/me/recommendation-suppressions", { token: fineGrained }),
      await suppress({ kind: "tag", value: "x" }, fineGrained),
    ]) {
      expect(response.status).toBe(403);
    }
  });

  it("documents the operations with their schemas", async () => {
    const doc = (await (await hub.request("/api/openapi.json")).json()) as {
      paths: Record<
        string,
        Record<string, { operationId: string; requestBody?: unknown; responses: object }>
      >;
    };
    const prefs = doc.paths["/api/me/content-preferences"];
    expect(prefs?.get?.operationId).toBe("account_content_preferences_get");
    expect(JSON.stringify(prefs?.get?.responses)).toContain("learnedInterests");
    expect(prefs?.put?.operationId).toBe("account_content_preferences_update");
    expect(JSON.stringify(prefs?.put?.requestBody)).toContain("contentFilters");
    expect(doc.paths["/api/me/content-preferences/learned-interests"]?.delete?.operationId).toBe(
      "account_content_preferences_learned_interests_clear",
    );
    const suppressions = doc.paths["/api/me/recommendation-suppressions"];
    expect(suppressions?.get?.operationId).toBe("account_recommendation_suppressions_list");
    expect(suppressions?.post?.operationId).toBe("account_recommendation_suppressions_create");
    expect(JSON.stringify(suppressions?.post?.requestBody)).toContain("repoType");
    expect(doc.paths["/api/me/recommendation-suppressions/{suppressionId}"]?.delete?.operationId).toBe(
      "account_recommendation_suppressions_delete",
    );
  });
});

describe.each(DIALECTS)("recommendations on %s", (dialect) => {
  let hub: InProcessHub;
  const tokens: Record<string, string> = {};

  const repo = async (who: string, name: string, tags: string[], extra: Record<string, unknown> = {}) => {
    const created = await hub.request("/api/repos/create", {
      method: "POST",
      token: tokens[who],
      json: { name, ...extra },
    });
    expect(created.status, name).toBe(200);
    const readme = `---\ntags: [${tags.join(", ")}]\n---\n# ${name}\n`;
    const body = [
      { key: "header", value: { summary: "card" } },
      {
        key: "file",
        value: { path: "README.md", content: Buffer.from(readme).toString("base64"), encoding: "base64" },
      },
    ]
      .map((line) => JSON.stringify(line))
      .join("\n");
    const committed = await hub.request(`/api/models/${who}/${name}/commit/main`, {
      method: "POST",
      token: tokens[who],
      headers: { "content-type": "application/x-ndjson" },
      body,
    });
    expect(committed.status, name).toBe(200);
  };
  const recommended = async (query = "", token = tokens.carol) => {
    const response = await hub.request(`/api/me/recommendations${query}`, { token });
    expect(response.status).toBe(200);
    return (await readJson<Recommendation[]>(response)).map((r) => [r.id, r.reasons]);
  };

  beforeAll(async () => {
    hub = await startInProcessHub({ dialect });
    for (const handle of ["carol", "dan", "eve"]) {
      await hub.createUser(handle);
      tokens[handle] = await hub.createToken(handle);
    }
    await repo("dan", "en-model", ["en", "text-generation"]);
    await repo("dan", "fr-model", ["fr"]);
    await repo("dan", "plain", ["text-generation"]);
    await repo("dan", "nsfw", ["en", "not-for-all-audiences"]);
    await repo("dan", "hidden-one", ["fr", "hidden-tag"]);
    await repo("dan", "boring", ["fr"]);
    await repo("dan", "secret", ["fr"], { private: true });
    await repo("eve", "eve-model", ["fr"]);
    await repo("carol", "own", ["fr"]);
  });
  afterAll(() => hub?.stop());

  it("ranks preferred languages first and never shows what is suppressed, hidden, filtered, private or one's own", async () => {
    const saved = await hub.request("/api/me/content-preferences", {
      method: "PUT",
      token: tokens.carol,
      json: {
        languages: ["fr", "en"],
        hiddenTags: ["hidden-tag"],
        contentFilters: ["not-for-all-audiences"],
      },
    });
    expect(saved.status).toBe(200);
    for (const json of [
      { kind: "author", value: "eve" },
      { kind: "repository", value: "dan/boring" },
    ]) {
      const suppressed = await hub.request("/api/me/recommendation-suppressions", {
        method: "POST",
        token: tokens.carol,
        json,
      });
      expect(suppressed.status, JSON.stringify(json)).toBe(201);
    }
    expect(await recommended()).toEqual([
      ["dan/fr-model", ["fr"]],
      ["dan/en-model", ["en"]],
      ["dan/plain", []],
    ]);
    expect(await recommended("?limit=1")).toEqual([["dan/fr-model", ["fr"]]]);
    expect(await recommended("?type=dataset")).toEqual([]);
    // A suppressed tag takes out every repository carrying it; someone else's preferences are their own.
    expect(
      (
        await hub.request("/api/me/recommendation-suppressions", {
          method: "POST",
          token: tokens.carol,
          json: { kind: "tag", value: "text-generation" },
        })
      ).status,
    ).toBe(201);
    expect(await recommended()).toEqual([["dan/fr-model", ["fr"]]]);
    const forEve = (await recommended("", tokens.eve)).map(([id]) => id);
    expect(forEve).toEqual(expect.arrayContaining(["dan/nsfw", "dan/boring", "carol/own", "dan/hidden-one"]));
    expect(forEve).not.toContain("dan/secret");
    expect(forEve).not.toContain("eve/eve-model");
  });

  it("needs a credential, refuses bad parameters and is in the OpenAPI document", async () => {
    expect((await hub.request("/api/me/recommendations")).status).toBe(401);
    expect((await hub.request("/api/me/recommendations?limit=500", { token: tokens.carol })).status).toBe(
      400,
    );
    expect((await hub.request("/api/me/recommendations?type=mcp", { token: tokens.carol })).status).toBe(400);
    const doc = (await (await hub.request("/api/openapi.json")).json()) as {
      paths: Record<string, Record<string, { operationId: string; responses: object }>>;
    };
    const operation = doc.paths["/api/me/recommendations"]?.get;
    expect(operation?.operationId).toBe("account_recommendations");
    expect(JSON.stringify(operation?.responses)).toContain("reasons");
  });
});
