import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AVATAR_NAMESPACE,
  createAvatarStore,
  localAvatars,
} from "../../areas/accounts/profile/avatar-store.js";
import { loadConfig } from "../../config.js";
import { runHubd } from "../../test-support/hub-process.js";
import { startMinio, type TestMinio } from "../../test-support/minio.js";
import { createObjectStore } from "./create-object-store.js";
import { createLocalObjectStore } from "./local-object-store.js";
import { migrateObjects } from "./migrate-objects.js";
import type { ObjectStore } from "./object-store.js";

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

describe("migrating a data dir's objects to an S3 store", () => {
  let minio: TestMinio;
  let dataDir: string;
  let local: ObjectStore;
  const contents = [randomBytes(100), randomBytes(70_000), randomBytes(9 * 1024 * 1024)];
  const xorbs = new Map([
    ["1".repeat(64), randomBytes(5000)],
    ["2".repeat(64), randomBytes(6000)],
  ]);

  /** A store on a fresh bucket of the MinIO, as a hub configured with these settings would open it. */
  const s3Store = async () => {
    const env = minio.env(await minio.createBucket());
    return { env, store: createObjectStore(loadConfig({ ...env, HUB_DATA_DIR: dataDir })) };
  };
  const expectAllIn = async (store: ObjectStore) => {
    for (const content of contents)
      expect(sha256(await buffer(store.read(sha256(content))))).toBe(sha256(content));
    for (const [key, bytes] of xorbs)
      expect(await buffer(store.namespace("xet/xorbs").read(key))).toEqual(bytes);
  };

  beforeAll(async () => {
    minio = await startMinio();
    dataDir = mkdtempSync(path.join(os.tmpdir(), "hub-migrate-"));
    local = createLocalObjectStore(dataDir);
    for (const content of contents)
      await local.write(sha256(content), content.length, Readable.from([content]));
    for (const [key, bytes] of xorbs) await local.namespace("xet/xorbs").put(key, bytes);
  }, 60_000);
  afterAll(async () => {
    await minio?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("copies everything, and after an interruption copies only what is missing", async () => {
    const { store } = await s3Store();
    let writes = 0;
    // The run breaks off at its second object, as a killed process or a lost connection would.
    const breaking: ObjectStore = {
      ...store,
      write: (oid, size, body) => {
        writes += 1;
        if (writes === 2) {
          body.destroy();
          return Promise.reject(new Error("connection lost"));
        }
        return store.write(oid, size, body);
      },
    };
    const first = await migrateObjects(local, breaking, ["xet/xorbs"]);
    expect(first.failed).toEqual([expect.objectContaining({ namespace: null, reason: "connection lost" })]);
    expect(first.copied).toBe(4);

    const second = await migrateObjects(local, store, ["xet/xorbs"]);
    expect(second).toMatchObject({ copied: 1, present: 4, failed: [] });
    await expectAllIn(store);
    const third = await migrateObjects(local, store, ["xet/xorbs"]);
    expect(third).toMatchObject({ copied: 0, copiedBytes: 0, present: 5, failed: [] });
  });

  it("replaces a namespace's object whose copy differs, and reports a local object that no longer hashes to its id", async () => {
    const { store } = await s3Store();
    expect(await migrateObjects(local, store, ["xet/xorbs"])).toMatchObject({ copied: 5, failed: [] });
    const [key, bytes] = [...xorbs][0] ?? ["", Buffer.alloc(0)];
    await store.namespace("xet/xorbs").remove(key);
    await store.namespace("xet/xorbs").put(key, randomBytes(bytes.length));
    expect(await migrateObjects(local, store, ["xet/xorbs"])).toMatchObject({
      copied: 1,
      present: 4,
      failed: [],
    });
    await expectAllIn(store);

    const broken = randomBytes(300);
    const oid = sha256(broken);
    await local.write(oid, broken.length, Readable.from([broken]));
    writeFileSync(
      path.join(dataDir, "lfs", "objects", oid.slice(0, 2), oid.slice(2, 4), oid),
      randomBytes(300),
    );
    const report = await migrateObjects(local, store, ["xet/xorbs"]);
    expect(report.failed).toEqual([
      { key: oid, namespace: null, reason: "The content does not hash to the object id." },
    ]);
    expect(await store.size(oid)).toBeNull();
    await local.remove(oid);
  });

  it("reports an avatar whose bytes no longer hash to its name, and leaves the store's copy alone", async () => {
    const { store } = await s3Store();
    const avatarDir = mkdtempSync(path.join(os.tmpdir(), "hub-migrate-avatars-"));
    const good = randomBytes(500);
    const sha = await createAvatarStore(avatarDir).put(good);
    const avatars = { name: AVATAR_NAMESPACE, from: localAvatars(avatarDir), namedBySha256: true };
    expect(await migrateObjects(local, store, [avatars])).toMatchObject({ failed: [] });
    // The local file is damaged afterwards (a write cut off by a crash): a rerun keeps the good copy.
    writeFileSync(path.join(avatarDir, "avatars", sha.slice(0, 2), sha), randomBytes(500));
    const report = await migrateObjects(local, store, [avatars]);
    expect(report.failed).toEqual([
      { key: sha, namespace: AVATAR_NAMESPACE, reason: "The content does not hash to its name." },
    ]);
    expect(await buffer(store.namespace(AVATAR_NAMESPACE).read(sha))).toEqual(good);
    rmSync(avatarDir, { recursive: true, force: true });
  });

  it("runs as `hubd storage migrate --to s3://…`", async () => {
    const bucket = await minio.createBucket();
    const { HUB_OBJECT_STORE: _target, ...settings } = minio.env(bucket);
    // The hub's usual environment, nginx hand-off included (a setting of the local store, not of the target).
    const env = {
      PATH: process.env.PATH,
      HOME: dataDir,
      HUB_DATA_DIR: dataDir,
      HUB_ACCEL_REDIRECT: "/_hub_lfs/",
      ...settings,
    };
    // An avatar uploaded while the hub kept them in the data dir, and a temporary file a write left beside it.
    const avatar = randomBytes(2000);
    const avatarSha = await createAvatarStore(dataDir).put(avatar);
    writeFileSync(path.join(dataDir, "avatars", avatarSha.slice(0, 2), `${avatarSha}.0a1b2c.tmp`), "partial");
    const run = await runHubd(["storage", "migrate", "--to", `s3://${bucket}/moved`], env);
    expect(run.code, run.stderr).toBe(0);
    const bytes = contents.reduce((sum, content) => sum + content.length, 0) + 11_000 + avatar.length;
    expect(run.stdout).toBe(`copied 6 objects (${bytes} bytes), 0 already there and verified, 0 failed\n`);
    const moved = createObjectStore(
      loadConfig({ ...env, HUB_OBJECT_STORE: `s3://${bucket}/moved`, HUB_ACCEL_REDIRECT: "" }),
    );
    await expectAllIn(moved);
    // A hub on the store reads the avatar from it, with the data dir it was stored in gone.
    const elsewhere = mkdtempSync(path.join(os.tmpdir(), "hub-migrated-"));
    expect(await createAvatarStore(elsewhere, moved.namespace(AVATAR_NAMESPACE)).read(avatarSha)).toEqual(
      avatar,
    );
    rmSync(elsewhere, { recursive: true, force: true });
    const again = await runHubd(["storage", "migrate", "--to", `s3://${bucket}/moved`], env);
    expect(again.stdout).toBe("copied 0 objects (0 bytes), 6 already there and verified, 0 failed\n");
    const wrong = await runHubd(["storage", "migrate", "--to", "/elsewhere"], env);
    expect(wrong.code).toBe(2);
  });
});
