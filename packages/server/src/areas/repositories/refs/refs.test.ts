import { countCommits, createBranch, deleteBranch, listCommits, uploadFiles } from "@huggingface/hub";
import type { ApiError } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { readJson, startHub, type TestHub } from "../../../test-support/hub-process.js";

interface Refs {
  branches: Array<{ name: string; ref: string; targetCommit: string }>;
  tags: Array<{ name: string; ref: string; targetCommit: string }>;
  converts: unknown[];
  pullRequests?: unknown[];
}

describe.each(DIALECTS)("refs, branches, tags and history on %s", (dialect) => {
  let hub: TestHub;
  let token: string;
  const repo = { type: "model" as const, name: "alice/history" };
  const credentials = () => ({ accessToken: token, hubUrl: hub.url });
  const refs = async (query = "") =>
    readJson<Refs>(await hub.request(`/api/models/alice/history/refs${query}`, { token }));

  beforeAll(async () => {
    hub = await startHub({ dialect });
    await hub.createUser("alice");
    token = await hub.createToken("alice");
    expect(
      (await hub.request("/api/repos", { method: "POST", token, json: { repo_id: "alice/history" } })).status,
    ).toBe(201);
    for (const n of [1, 2, 3]) {
      await uploadFiles({
        repo,
        ...credentials(),
        files: [{ path: `f${n}.txt`, content: new Blob([String(n)]) }],
      });
    }
  });
  afterAll(() => hub?.stop());

  it("lists refs with converts always present and pull requests on request", async () => {
    const all = await refs();
    expect(all.branches.map((b) => b.name)).toEqual(["main"]);
    expect(all.branches[0]?.ref).toBe("refs/heads/main");
    expect(all.converts).toEqual([]);
    expect(all.pullRequests).toBeUndefined();
    expect((await refs("?include_prs=1")).pullRequests).toEqual([]);
  });

  it("counts and lists commits newest first, page by page", async () => {
    expect(await countCommits({ repo, ...credentials() })).toBe(4);
    const titles = [];
    for await (const commit of listCommits({ repo, batchSize: 2, ...credentials() }))
      titles.push(commit.title);
    expect(titles).toHaveLength(4);
    expect(titles.at(-1)).toBe("Initial commit");
    const page = await hub.request("/api/models/alice/history/commits/main?limit=3", { token });
    expect(page.headers.get("x-total-count")).toBe("4");
    expect(page.headers.get("link")).toMatch(
      /^<http:\/\/127\.0\.0\.1:\d+\/api\/models\/alice\/history\/commits\/main\?limit=3&p=1>; rel="next"$/,
    );
  });

  it("creates, moves and deletes branches", async () => {
    const main = (await refs()).branches[0]?.targetCommit;
    await createBranch({ repo, branch: "feature/x", ...credentials() });
    expect((await refs()).branches.find((b) => b.name === "feature/x")?.targetCommit).toBe(main);
    await expect(createBranch({ repo, branch: "feature/x", ...credentials() })).rejects.toThrow(
      /already exists/,
    );
    await createBranch({ repo, branch: "empty", empty: true, ...credentials() });
    const tree = await readJson<unknown[]>(
      await hub.request("/api/models/alice/history/tree/empty", { token }),
    );
    expect(tree).toEqual([]);
    await createBranch({ repo, branch: "feature/x", revision: "empty", overwrite: true, ...credentials() });
    expect((await refs()).branches.find((b) => b.name === "feature/x")?.targetCommit).not.toBe(main);
    await deleteBranch({ repo, branch: "feature/x", ...credentials() });
    expect((await refs()).branches.map((b) => b.name).sort()).toEqual(["empty", "main"]);
    for (const bad of ["-x", "refs%2Fpr%2F5", "a..b", "HEAD", "x.lock"]) {
      const response = await hub.request(`/api/models/alice/history/branch/${bad}`, {
        method: "POST",
        token,
        json: {},
      });
      expect(response.status, bad).toBe(400);
    }
    const main2 = await hub.request("/api/models/alice/history/branch/main", { method: "DELETE", token });
    expect((await readJson<ApiError>(main2)).code).toBe("default_branch");
  });

  it("lets one of two concurrent creations of a branch win and tells the other with 409", async () => {
    const statuses = await Promise.all(
      [1, 2, 3].map(
        async () =>
          (await hub.request("/api/models/alice/history/branch/race", { method: "POST", token, json: {} }))
            .status,
      ),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(2);
  });

  it("refuses a branch or tag that would be both a name and a folder, saying why and that retrying will not help", async () => {
    const create = (path: string, json: Record<string, unknown> = {}) =>
      hub.request(`/api/models/alice/history/${path}`, { method: "POST", token, json });
    for (const [path, json, clash] of [
      ["branch/main%2Fsub", {}, "main"],
      ["branch/deep%2Fnested", {}, null],
      ["branch/deep", {}, "deep/nested"],
      ["tag/main", { tag: "main/v1" }, null],
      ["tag/main", { tag: "main" }, "main/v1"],
    ] as const) {
      const response = await create(path, json);
      if (clash === null) {
        expect(response.status, path).toBe(200);
        continue;
      }
      expect(response.status, path).toBe(409);
      const body = await readJson<ApiError>(response);
      expect(body.code).toBe("ref_name_conflict");
      expect(body.error).toContain(`while ${clash} exists`);
      expect(body.error).toContain("Retrying will not help");
    }
    const names = await refs();
    expect(names.branches.map((b) => b.name)).not.toContain("main/sub");
    expect(names.tags.map((t) => t.name)).not.toContain("main");
    expect(
      (await hub.request("/api/models/alice/history/tag/main%2Fv1", { method: "DELETE", token })).status,
    ).toBe(200);
    expect(
      (await hub.request("/api/models/alice/history/branch/deep%2Fnested", { method: "DELETE", token }))
        .status,
    ).toBe(200);
  });

  it("tags revisions, lightweight or annotated, and deletes tags", async () => {
    const tag = async (json: { tag: string; message?: string }) =>
      (await hub.request("/api/models/alice/history/tag/main", { method: "POST", token, json })).status;
    const main = (await refs()).branches.find((b) => b.name === "main")?.targetCommit;
    expect(await tag({ tag: "v1" })).toBe(200);
    expect(await tag({ tag: "v2", message: "Second release" })).toBe(200);
    const tags = (await refs()).tags;
    expect(tags.map((t) => [t.name, t.targetCommit])).toEqual([
      ["v1", main],
      ["v2", main],
    ]);
    expect(await tag({ tag: "v1" })).toBe(409);
    expect((await hub.request("/api/models/alice/history/revision/v2", { token })).status).toBe(200);
    expect((await hub.request("/api/models/alice/history/tag/v2", { method: "DELETE", token })).status).toBe(
      200,
    );
    expect((await hub.request("/api/models/alice/history/tag/v2", { method: "DELETE", token })).status).toBe(
      404,
    );
    expect((await refs()).tags.map((t) => t.name)).toEqual(["v1"]);
  });
});
