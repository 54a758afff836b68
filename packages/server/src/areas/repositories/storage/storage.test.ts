import { createHash, randomBytes } from "node:crypto";
import { downloadFile, uploadFiles } from "@huggingface/hub";
import type { ApiError, CommitItem, LfsFileEntry, RepoStorageEntry, TreeEntry } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../config.js";
import { createObjectStore } from "../../../git/lfs/create-object-store.js";
import type { ObjectStore } from "../../../git/lfs/object-store.js";
import { DIALECTS } from "../../../test-support/databases.js";
import { readJson, startHub, type TestHub } from "../../../test-support/hub-process.js";
import { STORE_SUITES, storeFor } from "../../../test-support/minio.js";

const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex");

describe.each(DIALECTS)("repository storage, on %s", (dialect) => {
  let hub: TestHub;
  let alice: string;
  const api = "/api/models/alice/weights";
  const versions = [randomBytes(300_000), randomBytes(200_000), randomBytes(100_000)];

  const upload = (content: Buffer, path = "big.bin", name = "alice/weights") =>
    uploadFiles({
      repo: { type: "model", name },
      accessToken: alice,
      hubUrl: hub.url,
      files: [{ path, content: new Blob([content]) }],
    });
  const lfsFiles = async () => {
    const response = await hub.request(`${api}/lfs-files`, { token: alice });
    expect(response.status).toBe(200);
    return readJson<LfsFileEntry[]>(response);
  };
  const remove = (sha: string[], rewriteHistory?: boolean) =>
    hub.request(`${api}/lfs-files/batch`, {
      method: "POST",
      token: alice,
      json: { deletions: { sha, ...(rewriteHistory === undefined ? {} : { rewriteHistory }) } },
    });
  const history = async () =>
    readJson<CommitItem[]>(await hub.request(`${api}/commits/main`, { token: alice }));
  /** The LFS object big.bin points to at each commit of main (null where it is missing). */
  const pointersInHistory = async () => {
    const found: Array<string | null> = [];
    for (const commit of await history()) {
      const response = await hub.request(`${api}/paths-info/${commit.id}`, {
        method: "POST",
        token: alice,
        json: { paths: ["big.bin"] },
      });
      found.push((await readJson<TreeEntry[]>(response))[0]?.lfs?.oid ?? null);
    }
    return found;
  };
  const setProtected = async (denyForcePush: boolean) => {
    const response = await hub.request(`${api}/settings`, {
      method: "PUT",
      token: alice,
      json: { denyForcePush },
    });
    expect(response.status).toBe(200);
  };

  beforeAll(async () => {
    hub = await startHub({ dialect });
    await hub.createUser("alice");
    await hub.createUser("bob");
    alice = await hub.createToken("alice");
    for (const [repo_id, isPrivate] of [
      ["alice/weights", false],
      ["alice/notes", true],
    ] as const) {
      const created = await hub.request("/api/repos", {
        method: "POST",
        token: alice,
        json: { repo_id, private: isPrivate },
      });
      expect(created.status).toBe(201);
    }
    await upload(versions[0] as Buffer);
    await upload(versions[1] as Buffer);
  });
  afterAll(() => hub?.stop());

  it("lists the caller's repositories with the bytes each uses", async () => {
    const response = await hub.request("/api/settings/repositories", { token: alice });
    expect(response.status).toBe(200);
    const entries = new Map((await readJson<RepoStorageEntry[]>(response)).map((e) => [e.id, e]));
    expect([...entries.keys()].sort()).toEqual(["alice/notes", "alice/weights"]);
    const weights = entries.get("alice/weights");
    const notes = entries.get("alice/notes");
    expect(weights).toMatchObject({ type: "model", visibility: "public" });
    expect(notes?.visibility).toBe("private");
    // Both LFS objects count, beside the git repository itself.
    expect(weights?.storage).toBeGreaterThan(500_000);
    expect((weights?.storagePercent ?? 0) + (notes?.storagePercent ?? 0)).toBeCloseTo(100, 0);
    expect((await hub.request("/api/settings/repositories")).status).toBe(401);
    const bob = await hub.createToken("bob");
    const bobs = await readJson<RepoStorageEntry[]>(
      await hub.request("/api/settings/repositories", { token: bob }),
    );
    expect(bobs).toEqual([]);
  });

  it("lists the repository's LFS objects with a path that points to each", async () => {
    const files = await lfsFiles();
    expect(files.map((f) => [f.fileOid, f.size, f.filename]).sort()).toEqual(
      [
        [sha256(versions[0] as Buffer), 300_000, "big.bin"],
        [sha256(versions[1] as Buffer), 200_000, "big.bin"],
      ].sort(),
    );
    expect(Number.isNaN(Date.parse(files[0]?.pushedAt ?? ""))).toBe(false);
    const bob = await hub.createToken("bob");
    expect((await hub.request(`${api}/lfs-files`, { token: bob })).status).toBe(403);
  });

  it("refuses to delete what a branch still uses, what is not there, and malformed ids, deleting nothing", async () => {
    const current = await remove([sha256(versions[1] as Buffer)]);
    expect(current.status).toBe(409);
    expect(await readJson<ApiError>(current)).toMatchObject({ code: "lfs_object_in_use" });
    const both = await remove([sha256(versions[0] as Buffer), sha256(versions[1] as Buffer)]);
    expect(both.status).toBe(409);
    expect((await remove(["f".repeat(64)])).status).toBe(404);
    expect((await remove(["not-a-sha"])).status).toBe(400);
    expect((await remove([])).status).toBe(400);
    expect(await lfsFiles()).toHaveLength(2);
  });

  it("refuses to rewrite a history the repository protects", async () => {
    await setProtected(true);
    const refused = await remove([sha256(versions[0] as Buffer)]);
    expect(refused.status).toBe(409);
    expect(await readJson<ApiError>(refused)).toMatchObject({ code: "history_protected" });
    expect(await lfsFiles()).toHaveLength(2);
    await setProtected(false);
  });

  it("deletes an old object and rewrites the history without its pointers", async () => {
    const before = await history();
    const old = sha256(versions[0] as Buffer);
    expect(await pointersInHistory()).toContain(old);
    const response = await remove([old]);
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await readJson(response)).toEqual({
      deleted: [{ oid: old, size: 300_000 }],
      freedBytes: 300_000,
      rewrittenRefs: ["refs/heads/main"],
    });
    expect((await lfsFiles()).map((f) => f.fileOid)).toEqual([sha256(versions[1] as Buffer)]);
    const after = await history();
    expect(after.map((c) => c.title)).toEqual(before.map((c) => c.title));
    expect(after.map((c) => c.date)).toEqual(before.map((c) => c.date));
    expect(await pointersInHistory()).not.toContain(old);
    const current = await hub.request("/alice/weights/resolve/main/big.bin", { token: alice });
    expect(sha256(Buffer.from(await current.arrayBuffer()))).toBe(sha256(versions[1] as Buffer));
  });

  it("deletes without rewriting the history when asked: old revisions then miss the file", async () => {
    await upload(versions[2] as Buffer);
    const [, older] = await history();
    const head = (await history())[0]?.id;
    const oid = sha256(versions[1] as Buffer);
    const response = await remove([oid], false);
    expect(response.status).toBe(200);
    expect(await readJson(response)).toMatchObject({ freedBytes: 200_000, rewrittenRefs: [] });
    expect((await history())[0]?.id).toBe(head);
    expect((await hub.request(`/alice/weights/resolve/${older?.id}/big.bin`, { token: alice })).status).toBe(
      404,
    );
  });

  it("squashes a branch into one commit that keeps its files", async () => {
    await upload(Buffer.from("notes"), "notes.txt");
    const files = async () =>
      (await readJson<TreeEntry[]>(await hub.request(`${api}/tree/main?recursive=1`, { token: alice })))
        .map((e) => `${e.path}:${e.oid}`)
        .sort();
    const before = await files();
    const reader = await hub.createToken("alice", ["--role", "read"]);
    expect(
      (await hub.request(`${api}/super-squash/main`, { method: "POST", token: reader, json: {} })).status,
    ).toBe(403);
    await setProtected(true);
    const refused = await hub.request(`${api}/super-squash/main`, {
      method: "POST",
      token: alice,
      json: { message: "Squashed" },
    });
    expect(refused.status).toBe(409);
    await setProtected(false);
    const squashed = await hub.request(`${api}/super-squash/main`, {
      method: "POST",
      token: alice,
      json: { message: "Squashed" },
    });
    expect(squashed.status).toBe(200);
    const { commitOid } = await readJson<{ commitOid: string }>(squashed);
    expect((await history()).map((c) => [c.id, c.title])).toEqual([[commitOid, "Squashed"]]);
    expect(await files()).toEqual(before);
    expect(
      (await hub.request(`${api}/super-squash/nope`, { method: "POST", token: alice, json: {} })).status,
    ).toBe(404);
  });
});

// On the local store and on MinIO (with PostgreSQL, as a deployment on a store runs): the collector removes
// objects from whichever store holds them.
const COLLECTOR_SUITES = STORE_SUITES.filter(
  (suite) => (suite.store === "s3") === (suite.dialect === "postgres"),
);

describe.each(COLLECTOR_SUITES)("the LFS collector on $dialect, objects on $store", (suite) => {
  let hub: TestHub;
  let objects: Awaited<ReturnType<typeof storeFor>>;
  /** The hub's object store, opened as the hub opens it, to see what it holds. */
  let store: ObjectStore;
  let alice: string;
  const api = "/api/models/alice/collected";

  beforeAll(async () => {
    objects = await storeFor(suite.store);
    hub = await startHub({
      dialect: suite.dialect,
      env: { HUB_LFS_GRACE_SECONDS: "10", HUB_LFS_COLLECT_INTERVAL_SECONDS: "1", ...objects.env },
    });
    store = createObjectStore(loadConfig({ ...objects.env, HUB_DATA_DIR: hub.dataDir }));
    await hub.createUser("alice");
    alice = await hub.createToken("alice");
    const created = await hub.request("/api/repos", {
      method: "POST",
      token: alice,
      json: { repo_id: "alice/collected" },
    });
    expect(created.status).toBe(201);
  });
  afterAll(async () => {
    await hub?.stop();
    await objects?.stop();
  });

  const oids = async () =>
    (await readJson<LfsFileEntry[]>(await hub.request(`${api}/lfs-files`, { token: alice })))
      .map((f) => f.fileOid)
      .sort();
  const until = async (what: () => Promise<boolean>) => {
    for (let i = 0; i < 160 && !(await what()); i++) await new Promise((r) => setTimeout(r, 250));
    return what();
  };

  it("frees objects no history points to after the grace period, and keeps those it does", async () => {
    const first = randomBytes(50_000);
    const second = randomBytes(60_000);
    for (const content of [first, second]) {
      await uploadFiles({
        repo: { type: "model", name: "alice/collected" },
        accessToken: alice,
        hubUrl: hub.url,
        files: [{ path: "model.bin", content: new Blob([content]) }],
      });
    }
    // An upload whose commit has not come yet: only the LFS transfer, through the batch API.
    const pending = randomBytes(40_000);
    const batch = await fetch(`${hub.url}/alice/collected.git/info/lfs/objects/batch`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${alice}`,
        accept: "application/vnd.git-lfs+json",
        "content-type": "application/vnd.git-lfs+json",
      },
      body: JSON.stringify({
        operation: "upload",
        objects: [{ oid: sha256(pending), size: pending.length }],
      }),
    });
    expect(batch.status).toBe(200);
    const href = (await readJson<{ objects: Array<{ actions: { upload: { href: string } } }> }>(batch))
      .objects[0]?.actions.upload.href;
    expect((await fetch(href ?? "", { method: "PUT", body: pending })).status).toBe(200);
    const all = [sha256(first), sha256(second), sha256(pending)].sort();
    expect(await oids()).toEqual(all);

    // Within the grace period the pending upload stays; squashing leaves the first version unreachable.
    const squashed = await hub.request(`${api}/super-squash/main`, {
      method: "POST",
      token: alice,
      json: {},
    });
    expect(squashed.status).toBe(200);
    expect(await oids()).toEqual(all);

    expect(await until(async () => (await oids()).length === 1)).toBe(true);
    expect(await oids()).toEqual([sha256(second)]);
    const file = await hub.request("/alice/collected/resolve/main/model.bin", { token: alice });
    expect(sha256(Buffer.from(await file.arrayBuffer()))).toBe(sha256(second));
    expect(hub.logs.join("\n")).toContain("LFS collector freed unreferenced objects");
  });

  it("removes a deleted repository's LFS objects once no other repository holds them", async () => {
    const shared = randomBytes(30_000);
    const oid = sha256(shared);
    const stored = async () => (await store.size(oid)) !== null;
    for (const name of ["first", "second"]) {
      const created = await hub.request("/api/repos", {
        method: "POST",
        token: alice,
        json: { repo_id: `alice/${name}` },
      });
      expect(created.status).toBe(201);
      await uploadFiles({
        repo: { type: "model", name: `alice/${name}` },
        accessToken: alice,
        hubUrl: hub.url,
        files: [{ path: "shared.bin", content: new Blob([shared]) }],
      });
    }
    expect(await stored()).toBe(true);
    const remove = (name: string) =>
      hub.request("/api/repos/delete", { method: "DELETE", token: alice, json: { name, type: "model" } });
    expect((await remove("first")).status).toBe(204);
    expect(await stored()).toBe(true);
    const second = await hub.request("/alice/second/resolve/main/shared.bin", { token: alice });
    expect(sha256(Buffer.from(await second.arrayBuffer()))).toBe(oid);
    expect((await remove("second")).status).toBe(204);
    expect(await stored()).toBe(false);
  });

  it("removes the Xet xorbs of a version no history points to, keeps the current one's, and frees them with the repository", async () => {
    const xorbFiles = async () => {
      const keys: string[] = [];
      for await (const { key } of store.namespace("xet/xorbs").list()) keys.push(key);
      return keys;
    };
    const repo = { type: "model" as const, name: "alice/xet-collected" };
    const created = await hub.request("/api/repos", {
      method: "POST",
      token: alice,
      json: { repo_id: repo.name },
    });
    expect(created.status).toBe(201);
    // The JavaScript client uploads through Xet: each version comes in xorbs of its own (random bytes).
    const versions: Array<{ content: Buffer; xorbs: string[] }> = [];
    for (const size of [200_000, 300_000]) {
      const before = new Set(await xorbFiles());
      const content = randomBytes(size);
      await uploadFiles({
        repo,
        accessToken: alice,
        hubUrl: hub.url,
        files: [{ path: "weights.bin", content: new Blob([content]) }],
      });
      versions.push({ content, xorbs: (await xorbFiles()).filter((name) => !before.has(name)) });
    }
    const [old, current] = versions;
    expect(old?.xorbs.length).toBeGreaterThan(0);
    expect(current?.xorbs.length).toBeGreaterThan(0);
    const squashed = await hub.request("/api/models/alice/xet-collected/super-squash/main", {
      method: "POST",
      token: alice,
      json: {},
    });
    expect(squashed.status).toBe(200);
    /** Whether the store holds none of `xorbs`. */
    const noneHeld = async (xorbs: string[] = []) => {
      const held = new Set(await xorbFiles());
      return !xorbs.some((name) => held.has(name));
    };
    expect(await until(() => noneHeld(old?.xorbs))).toBe(true);
    const held = new Set(await xorbFiles());
    expect((current?.xorbs ?? []).every((name) => held.has(name))).toBe(true);
    expect(hub.logs.join("\n")).toContain("Xet collector freed unused data");
    // The current version still reads through Xet and through resolve.
    const blob = await downloadFile({ repo, path: "weights.bin", accessToken: alice, hubUrl: hub.url });
    expect(sha256(Buffer.from((await blob?.arrayBuffer()) ?? new ArrayBuffer(0)))).toBe(
      sha256(current?.content ?? Buffer.alloc(0)),
    );

    const removed = await hub.request("/api/repos/delete", {
      method: "DELETE",
      token: alice,
      json: { name: "xet-collected", type: "model" },
    });
    expect(removed.status).toBe(204);
    expect(await until(() => noneHeld(current?.xorbs))).toBe(true);
  });
});
