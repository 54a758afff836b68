import type { ApiError, RepoInfo } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { readJson, startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";

interface Listed {
  id: string;
  gated: string | false;
}

/**
 * Every query parameter `huggingface_hub` 1.28.0 sends to the listings
 * (list_models, list_datasets, list_spaces in hf_api.py) and `@huggingface/hub`
 * sends by itself, each either honoured (its effect checked) or refused with a
 * 400 that names it; and `create_pr`, which opens a pull request. Nothing is ignored.
 */
describe.each(DIALECTS)("what the clients send to listings and commits, on %s", (dialect) => {
  let hub: InProcessHub;
  let alice: string;

  const list = async (type: string, query: string) => {
    const response = await hub.request(`/api/${type}s?${query}`, { token: alice });
    return { response, items: response.status === 200 ? await readJson<Listed[]>(response.clone()) : [] };
  };
  const ids = async (type: string, query: string) => {
    const { response, items } = await list(type, query);
    expect(response.status, `${type}s?${query}`).toBe(200);
    return items.map((item) => item.id);
  };

  beforeAll(async () => {
    hub = await startInProcessHub({ dialect });
    await hub.createUser("alice");
    await hub.createUser("bob");
    alice = await hub.createToken("alice");
    const bob = await hub.createToken("bob");
    for (const type of ["model", "dataset", "space"]) {
      for (const [token, repoId] of [
        [alice, "alice/first"],
        [alice, "alice/second-gated"],
        [bob, "bob/third"],
      ] as const) {
        const created = await hub.request("/api/repos", {
          method: "POST",
          token,
          json: { repo_id: repoId, repo_type: type },
        });
        expect(created.status, await created.clone().text()).toBe(201);
      }
      const gate = await hub.request(`/api/${type}s/alice/second-gated/settings`, {
        method: "PUT",
        token: alice,
        json: { gated: "auto" },
      });
      expect(gate.status).toBe(200);
    }
  });
  afterAll(() => hub?.stop());

  it.each(["model", "dataset", "space"])(
    "honours author, search, gated, sort, direction, limit and expand on %ss",
    async (type) => {
      expect((await ids(type, "author=alice")).sort()).toEqual(["alice/first", "alice/second-gated"]);
      expect(await ids(type, "search=third")).toEqual(["bob/third"]);
      expect(await ids(type, "gated=true")).toEqual(["alice/second-gated"]);
      expect(await ids(type, "gated=True")).toEqual(["alice/second-gated"]);
      expect((await ids(type, "gated=false")).sort()).toEqual(["alice/first", "bob/third"]);
      expect(await ids(type, "sort=createdAt&direction=1")).toEqual([
        "alice/first",
        "alice/second-gated",
        "bob/third",
      ]);
      expect(await ids(type, "sort=id&direction=-1")).toEqual([
        "bob/third",
        "alice/second-gated",
        "alice/first",
      ]);
      const page = await list(type, "sort=id&limit=1");
      expect(page.items.map((item) => item.id)).toEqual(["alice/first"]);
      expect(page.response.headers.get("link")).toMatch(/rel="next"/);
      for (const field of ["author", "createdAt", "lastModified", "private", "gated"]) {
        expect((await ids(type, `expand=${field}`)).length, field).toBe(3);
        expect((await ids(type, `expand[]=${field}`)).length, field).toBe(3);
      }
      // What @huggingface/hub asks for on every listing by itself is served (left out until it is tracked).
      const js =
        "limit=500&author=alice&expand=pipeline_tag&expand=private&expand=gated&expand=downloads&expand=likes&expand=lastModified&expand=sdk";
      expect((await ids(type, js)).sort()).toEqual(["alice/first", "alice/second-gated"]);
    },
  );

  it.each([
    ["apps=ollama", "apps"],
    ["inference=warm", "inference"],
    ["inference_provider=all", "inference_provider"],
    ["linked=True", "linked"],
    ["sort=likes30d", "sort"],
    ["direction=up", "direction"],
    ["gated=maybe", "gated"],
    ["full=maybe", "full"],
    ["num_parameters=about:7B", "num_parameters"],
    ["num_parameters=min:lots", "num_parameters"],
    ["search=a&search=b", "search"],
    ["expand=weights", "expand"],
    ["emissions_thresholds=1", "emissions_thresholds"],
    ["colour=blue", "colour"],
  ])("refuses %s by name instead of listing everything", async (query, field) => {
    for (const type of ["model", "dataset", "space"]) {
      const { response } = await list(type, query);
      expect(response.status, `${type}s?${query}`).toBe(400);
      const body = await readJson<ApiError>(response);
      expect(body.code).toBe("unsupported_parameter");
      expect(body.field).toBe(field);
      expect(body.error).toContain(field);
    }
  });

  it("honours create_pr on preupload and commit: a pull request opens and the branch stays put", async () => {
    const head = async () =>
      (await readJson<RepoInfo>(await hub.request("/api/models/alice/first", { token: alice }))).sha;
    const before = await head();
    const preupload = await hub.request("/api/models/alice/first/preupload/main?create_pr=1", {
      method: "POST",
      token: alice,
      json: { files: [{ path: "a.txt", size: 1, sample: "" }] },
    });
    expect(preupload.status).toBe(200);
    const body = [
      { key: "header", value: { summary: "Through a pull request" } },
      {
        key: "file",
        value: { path: "a.txt", content: Buffer.from("a").toString("base64"), encoding: "base64" },
      },
    ]
      .map((line) => JSON.stringify(line))
      .join("\n");
    const commit = (query: string) =>
      hub.request(`/api/models/alice/first/commit/main${query}`, {
        method: "POST",
        token: alice,
        headers: { "content-type": "application/x-ndjson" },
        body,
      });
    const opened = await commit("?create_pr=1");
    expect(opened.status).toBe(200);
    expect((await readJson<{ pullRequestUrl: string }>(opened)).pullRequestUrl).toMatch(
      /\/alice\/first\/discussions\/1$/,
    );
    expect(await head()).toBe(before);
    // create_pr=0 (or false) asks for no pull request: an ordinary commit.
    expect((await commit("?create_pr=0")).status).toBe(200);
    expect(await head()).not.toBe(before);
  });
});
