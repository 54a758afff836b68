import { randomBytes } from "node:crypto";
import { uploadFiles } from "@huggingface/hub";
import type { ApiError, RepoInfo } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { readJson, startHub, type TestHub } from "../../../test-support/hub-process.js";

interface Refs {
  branches: Array<{ name: string; targetCommit: string }>;
  tags: Array<{ name: string; targetCommit: string }>;
}

describe.each(DIALECTS)("duplicating a repository, on %s", (dialect) => {
  let hub: TestHub;
  let alice: string;
  let bob: string;
  const weights = randomBytes(120_000);

  const duplicate = (token: string, from: string, json: unknown) =>
    hub.request(`/api/${from}/duplicate`, { method: "POST", token, json });
  const refs = async (api: string, token: string) =>
    readJson<Refs>(await hub.request(`${api}/refs`, { token }));

  beforeAll(async () => {
    hub = await startHub({ dialect });
    await hub.createUser("alice");
    await hub.createUser("bob");
    alice = await hub.createToken("alice");
    bob = await hub.createToken("bob");
    for (const json of [
      { repo_id: "alice/source" },
      { repo_id: "alice/secret", private: true },
      { repo_id: "alice/demo", repo_type: "space" },
    ]) {
      expect((await hub.request("/api/repos", { method: "POST", token: alice, json })).status).toBe(201);
    }
    await uploadFiles({
      repo: { type: "model", name: "alice/source" },
      accessToken: alice,
      hubUrl: hub.url,
      files: [
        { path: "README.md", content: new Blob(["# Source\n"]) },
        { path: "weights.bin", content: new Blob([weights]) },
      ],
    });
    const api = "/api/models/alice/source";
    expect((await hub.request(`${api}/branch/dev`, { method: "POST", token: alice, json: {} })).status).toBe(
      200,
    );
    expect(
      (await hub.request(`${api}/tag/main`, { method: "POST", token: alice, json: { tag: "v1" } })).status,
    ).toBe(200);
  });
  afterAll(() => hub?.stop());

  it("copies the branches, tags and LFS objects into the caller's namespace", async () => {
    const response = await duplicate(bob, "models/alice/source", { repository: "bob/copy" });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await readJson(response)).toEqual({ url: `${hub.url}/bob/copy` });
    const [source, copy] = [
      await refs("/api/models/alice/source", bob),
      await refs("/api/models/bob/copy", bob),
    ];
    expect(copy.branches.sort((a, b) => a.name.localeCompare(b.name))).toEqual(
      source.branches.sort((a, b) => a.name.localeCompare(b.name)),
    );
    expect(copy.tags).toEqual(source.tags);
    const file = await hub.request("/bob/copy/resolve/main/weights.bin", { token: bob });
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer()).equals(weights)).toBe(true);
    const info = await readJson<RepoInfo>(await hub.request("/api/models/bob/copy", { token: bob }));
    expect(info).toMatchObject({ author: "bob", private: false, gated: false });
  });

  it("keeps the source's visibility unless told, and a Space's SDK", async () => {
    const secret = await duplicate(alice, "models/alice/secret", { repository: "alice/secret-copy" });
    expect(secret.status).toBe(200);
    expect((await hub.request("/api/models/alice/secret-copy")).status).toBe(401);
    const open = await duplicate(alice, "models/alice/secret", {
      repository: "alice/secret-open",
      visibility: "public",
    });
    expect(open.status).toBe(200);
    expect((await hub.request("/api/models/alice/secret-open")).status).toBe(200);
    const sdk = await hub.request("/api/repos/create", {
      method: "POST",
      token: alice,
      json: { name: "gradio-demo", type: "space", sdk: "gradio" },
    });
    expect(sdk.status).toBe(200);
    expect((await duplicate(bob, "spaces/alice/gradio-demo", { repository: "bob/gradio-demo" })).status).toBe(
      200,
    );
    const space = await readJson<RepoInfo>(await hub.request("/api/spaces/bob/gradio-demo"));
    expect(space.sdk).toBe("gradio");
  });

  it("refuses what the caller may not read or write, names taken, and settings it does not keep", async () => {
    expect((await duplicate(bob, "models/alice/secret", { repository: "bob/stolen" })).status).toBe(404);
    expect((await hub.request("/api/models/bob/stolen", { token: bob })).status).toBe(404);
    const foreign = await duplicate(bob, "models/alice/source", { repository: "alice/by-bob" });
    expect(foreign.status).toBe(403);
    const taken = await duplicate(bob, "models/alice/source", { repository: "bob/copy" });
    expect(taken.status).toBe(409);
    expect(await readJson<{ url: string }>(taken)).toMatchObject({ url: `${hub.url}/bob/copy` });
    const hardware = await duplicate(bob, "spaces/alice/demo", {
      repository: "bob/demo",
      hardware: "t4-small",
    });
    expect(hardware.status).toBe(400);
    expect(await readJson<ApiError>(hardware)).toMatchObject({
      code: "unsupported_parameter",
      field: "hardware",
    });
    const malformed = await duplicate(bob, "models/alice/source", { repository: "just-a-name" });
    expect(malformed.status).toBe(400);
    expect((await duplicate(bob, "models/alice/source", { repository: "bob/Bad Name" })).status).toBe(400);
    expect((await hub.request("/api/models/bob/demo", { token: bob })).status).toBe(404);
  });
});
