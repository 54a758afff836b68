import { createHash } from "node:crypto";
import { uploadFiles } from "@huggingface/hub";
import type { ApiError, CommitItem, RepoInfo, TreeEntry } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { readJson, startHub, type TestHub } from "../../../test-support/hub-process.js";

const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex");

/**
 * What `expand` and `blobs` add where the clients ask for them: each tree and
 * paths-info entry's last commit (list_repo_tree and get_paths_info with
 * expand=True, @huggingface/hub's downloadFileToCacheDir), the formatted
 * history (list_repo_commits(formatted=True)), each sibling's size, blob id
 * and LFS object (model_info(files_metadata=True)), and a Space's SDK.
 * A value the hub cannot honour is refused by name, never ignored.
 */
describe.each(DIALECTS)("expand and blobs, on %s", (dialect) => {
  let hub: TestHub;
  let alice: string;
  const api = "/api/models/alice/expanded";
  const weights = Buffer.from("weights that travel through LFS\n".repeat(40));
  const commits: Record<string, string> = {};

  const commit = async (summary: string, files: Record<string, string>) => {
    const lines = [
      { key: "header", value: { summary } },
      ...Object.entries(files).map(([path, content]) => ({
        key: "file",
        value: { path, content: Buffer.from(content).toString("base64"), encoding: "base64" },
      })),
    ];
    const response = await hub.request(`${api}/commit/main`, {
      method: "POST",
      token: alice,
      headers: { "content-type": "application/x-ndjson" },
      body: lines.map((line) => JSON.stringify(line)).join("\n"),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await readJson<{ commitOid: string }>(response)).commitOid;
  };
  const get = async <T>(path: string) => {
    const response = await hub.request(path, { token: alice });
    expect(response.status, `${path}: ${await response.clone().text()}`).toBe(200);
    return { response, body: await readJson<T>(response) };
  };
  const refused = async (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const response = await hub.request(path, { token: alice, ...init });
    expect(response.status, path).toBe(400);
    return readJson<ApiError>(response);
  };

  beforeAll(async () => {
    hub = await startHub({ dialect });
    await hub.createUser("alice");
    alice = await hub.createToken("alice");
    const created = await hub.request("/api/repos", {
      method: "POST",
      token: alice,
      json: { repo_id: "alice/expanded", repo_type: "model" },
    });
    expect(created.status).toBe(201);
    commits.hello = await commit("Add <b>hello</b> & friends\n\nThe first line.\nThe second.", {
      "hello.txt": "hello",
    });
    const many = Object.fromEntries(
      Array.from({ length: 60 }, (_, i) => [`docs/page-${String(i).padStart(2, "0")}.md`, `page ${i}`]),
    );
    commits.docs = await commit("Add the docs", many);
    await uploadFiles({
      repo: { type: "model", name: "alice/expanded" },
      accessToken: alice,
      hubUrl: hub.url,
      files: [{ path: "weights.bin", content: new Blob([weights]) }],
    });
  });
  afterAll(() => hub?.stop());

  it("adds each tree entry's last commit with expand=true, and nothing without it", async () => {
    const plain = (await get<TreeEntry[]>(`${api}/tree/main`)).body;
    expect(plain.every((entry) => entry.lastCommit === undefined)).toBe(true);
    const expanded = new Map(
      (await get<TreeEntry[]>(`${api}/tree/main?expand=True`)).body.map((entry) => [entry.path, entry]),
    );
    expect(expanded.get("hello.txt")?.lastCommit).toMatchObject({
      id: commits.hello,
      title: "Add <b>hello</b> & friends",
    });
    // A folder's last commit is the last one that changed anything under it.
    expect(expanded.get("docs")?.lastCommit?.id).toBe(commits.docs);
    // The format the Python client parses: UTC with milliseconds.
    expect(expanded.get("hello.txt")?.lastCommit?.date).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(expanded.get("weights.bin")?.lastCommit?.id).not.toBe(commits.docs);
  });

  it("pages an expanded tree in smaller pages, keeping expand on the next page", async () => {
    const first = await get<TreeEntry[]>(`${api}/tree/main/docs?expand=true`);
    expect(first.body).toHaveLength(50);
    expect(first.body.every((entry) => entry.lastCommit?.id === commits.docs)).toBe(true);
    const next = /<([^>]+)>; rel="next"/.exec(first.response.headers.get("link") ?? "")?.[1] ?? "";
    expect(new URL(next).searchParams.get("expand")).toBe("true");
    const second = await get<TreeEntry[]>(new URL(next).pathname + new URL(next).search);
    expect(second.body.map((entry) => entry.path)).toEqual(
      Array.from({ length: 10 }, (_, i) => `docs/page-${50 + i}.md`),
    );
    expect(second.body.every((entry) => entry.lastCommit?.id === commits.docs)).toBe(true);
  });

  it("adds the last commit on paths-info, from a form body and from JSON", async () => {
    const form = await hub.request(`${api}/paths-info/main`, {
      method: "POST",
      token: alice,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "paths=hello.txt&paths=docs&paths=nothing&expand=True",
    });
    expect(form.status).toBe(200);
    const fromForm = await readJson<TreeEntry[]>(form);
    expect(fromForm.map((entry) => [entry.path, entry.lastCommit?.id])).toEqual([
      ["docs", commits.docs],
      ["hello.txt", commits.hello],
    ]);
    const json = await hub.request(`${api}/paths-info/main`, {
      method: "POST",
      token: alice,
      json: { paths: ["hello.txt"], expand: true },
    });
    expect((await readJson<TreeEntry[]>(json))[0]?.lastCommit?.id).toBe(commits.hello);
    const without = await hub.request(`${api}/paths-info/main`, {
      method: "POST",
      token: alice,
      json: { paths: ["hello.txt"] },
    });
    expect((await readJson<TreeEntry[]>(without))[0]?.lastCommit).toBeUndefined();
    const bad = await refused(`${api}/paths-info/main`, {
      method: "POST",
      json: { paths: ["hello.txt"], expand: "everything" },
    });
    expect(bad).toMatchObject({ code: "unsupported_parameter", field: "expand" });
    expect((await refused(`${api}/tree/main?expand=lastCommit`)).field).toBe("expand");
  });

  it("formats the history with expand[]=formatted, as HTML that cannot inject markup", async () => {
    const { response, body } = await get<CommitItem[]>(`${api}/commits/main?limit=2&expand[]=formatted`);
    expect(body.every((item) => item.formatted !== undefined)).toBe(true);
    const next = /<([^>]+)>; rel="next"/.exec(response.headers.get("link") ?? "")?.[1] ?? "";
    const nextUrl = new URL(next);
    expect(nextUrl.searchParams.get("expand[]")).toBe("formatted");
    const older = await get<CommitItem[]>(nextUrl.pathname + nextUrl.search);
    const hello = older.body.find((item) => item.id === commits.hello);
    expect(hello?.formatted).toEqual({
      title: "Add &lt;b&gt;hello&lt;/b&gt; &amp; friends",
      message: "Add &lt;b&gt;hello&lt;/b&gt; &amp; friends<br><br>The first line.<br>The second.",
    });
    const plain = await get<CommitItem[]>(`${api}/commits/main`);
    expect(plain.body.every((item) => item.formatted === undefined)).toBe(true);
    const bad = await refused(`${api}/commits/main?expand[]=formatted&expand[]=stats`);
    expect(bad).toMatchObject({ code: "unsupported_parameter", field: "expand" });
    expect(bad.error).toContain("stats");
  });

  it("gives each sibling its size, blob id and LFS object with blobs=true", async () => {
    const plain = (await get<RepoInfo>(api)).body;
    expect(plain.siblings.find((s) => s.rfilename === "hello.txt")).toEqual({ rfilename: "hello.txt" });
    const info = (await get<RepoInfo>(`${api}?blobs=True`)).body;
    const siblings = new Map(info.siblings.map((sibling) => [sibling.rfilename, sibling]));
    expect(siblings.size).toBe(plain.siblings.length);
    expect(siblings.get("hello.txt")).toEqual({
      rfilename: "hello.txt",
      size: 5,
      blobId: createHash("sha1").update("blob 5\0hello").digest("hex"),
    });
    const lfs = siblings.get("weights.bin");
    expect(lfs).toMatchObject({
      size: weights.length,
      lfs: { sha256: sha256(weights), size: weights.length },
    });
    expect(lfs?.blobId).toMatch(/^[0-9a-f]{40}$/);
    expect(lfs?.lfs?.pointerSize).toBeGreaterThan(100);
    expect((await get<RepoInfo>(`${api}/revision/main?blobs=true`)).body.siblings).toEqual(info.siblings);
  });

  it("serves the expand fields the clients send by themselves and refuses unknown ones by name", async () => {
    const asked = await get<RepoInfo>(
      `${api}?expand[]=pipeline_tag&expand[]=private&expand[]=gated&expand[]=downloads&expand[]=likes&expand[]=lastModified&expand[]=xetEnabled&expand[]=sha`,
    );
    expect(asked.body).toMatchObject({
      private: false,
      gated: false,
      xetEnabled: true,
      downloads: 0,
      likes: 0,
    });
    expect(asked.body.sha).toMatch(/^[0-9a-f]{40}$/);
    for (const [query, field] of [
      ["expand[]=weights", "expand"],
      ["expand=cardData&expand=safetensor", "expand"],
      ["securityStatus=true", "securityStatus"],
      ["blobs=maybe", "blobs"],
      ["files_metadata=true", "files_metadata"],
    ] as const) {
      expect(await refused(`${api}?${query}`), query).toMatchObject({
        code: "unsupported_parameter",
        field,
      });
    }
  });

  it("keeps the SDK a Space was created with, and refuses one it does not know", async () => {
    const created = await hub.request("/api/repos/create", {
      method: "POST",
      token: alice,
      json: { name: "demo", type: "space", sdk: "gradio", private: false },
    });
    expect(created.status, await created.clone().text()).toBe(200);
    expect((await get<RepoInfo>("/api/spaces/alice/demo")).body.sdk).toBe("gradio");
    const listed = (await get<Array<{ id: string; sdk?: string }>>("/api/spaces?author=alice&expand=sdk"))
      .body;
    expect(listed).toEqual([expect.objectContaining({ id: "alice/demo", sdk: "gradio" })]);
    const bad = await hub.request("/api/repos/create", {
      method: "POST",
      token: alice,
      json: { name: "flask-demo", type: "space", sdk: "flask" },
    });
    expect(bad.status).toBe(400);
    expect((await readJson<ApiError>(bad)).field).toContain("sdk");
    expect((await hub.request("/api/spaces/alice/flask-demo", { token: alice })).status).toBe(404);
    // A model has no SDK, whatever the request said.
    const model = await hub.request("/api/repos/create", {
      method: "POST",
      token: alice,
      json: { name: "not-a-space", sdk: "docker" },
    });
    expect(model.status).toBe(200);
    expect((await get<RepoInfo>("/api/models/alice/not-a-space")).body.sdk).toBeUndefined();
  });
});
