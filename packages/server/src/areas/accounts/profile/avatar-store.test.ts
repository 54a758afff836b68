import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { HeadObjectCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createS3ObjectStore } from "../../../git/lfs/s3-object-store.js";
import { startInProcessHub } from "../../../test-support/hub-inprocess.js";
import { startMinio, type TestMinio } from "../../../test-support/minio.js";
import { createAvatarStore } from "./avatar-store.js";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const avatarKey = (sha: string) => `hub/lfs/avatars/${sha.slice(0, 2)}/${sha.slice(2, 4)}/${sha}`;

/** A PNG signature and a header: enough for the hub's type sniffing, different every call. */
function pngLike(): Buffer {
  const header = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
  return Buffer.concat([header, Buffer.from("IHDR", "latin1"), randomBytes(64)]);
}

describe("avatars with an S3-compatible object store", () => {
  let minio: TestMinio;
  let dataDir: string;

  beforeAll(async () => {
    minio = await startMinio();
    dataDir = mkdtempSync(path.join(os.tmpdir(), "hub-avatars-"));
  });
  afterAll(async () => {
    await minio?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("are stored in the bucket by content, and ones from the data dir before the move are still read", async () => {
    const bucket = await minio.createBucket();
    const objects = createS3ObjectStore({
      client: minio.client,
      bucket,
      prefix: "hub/",
      presignedDownloads: true,
    });
    const before = Buffer.from("an avatar stored on disk before the move");
    const legacy = await createAvatarStore(dataDir).put(before);
    const store = createAvatarStore(dataDir, objects.namespace("avatars"));

    const image = Buffer.from("an avatar stored in the bucket");
    const sha = await store.put(image);
    expect(sha).toBe(sha256(image));
    await minio.client.send(new HeadObjectCommand({ Bucket: bucket, Key: avatarKey(sha) }));
    expect(existsSync(path.join(dataDir, "avatars", sha.slice(0, 2), sha))).toBe(false);
    expect(await store.read(sha)).toEqual(image);
    // A second account with the same image shares it.
    expect(await store.put(image)).toBe(sha);

    expect(await store.read(legacy)).toEqual(before);
    expect(await store.read("0".repeat(64))).toBeNull();

    await store.remove(sha);
    expect(await store.read(sha)).toBeNull();
    await store.remove(legacy);
    expect(await store.read(legacy)).toBeNull();
    expect((await minio.client.send(new ListObjectsV2Command({ Bucket: bucket }))).KeyCount).toBe(0);
  });

  it("go to the bucket through the API of a hub on the store, and are served back", async () => {
    const bucket = await minio.createBucket();
    const hub = await startInProcessHub({ dialect: "postgres", env: minio.env(bucket) });
    try {
      await hub.createUser("alice");
      const token = await hub.createToken("alice");
      const image = pngLike();
      const uploaded = await hub.request("/api/me/avatar", {
        method: "PUT",
        token,
        headers: { "content-type": "image/png" },
        body: image,
      });
      expect(uploaded.status, await uploaded.clone().text()).toBe(200);
      const served = await hub.request("/api/users/alice/avatar");
      expect(served.status).toBe(200);
      expect(Buffer.from(await served.arrayBuffer())).toEqual(image);
      await minio.client.send(new HeadObjectCommand({ Bucket: bucket, Key: avatarKey(sha256(image)) }));
      expect(existsSync(path.join(hub.dataDir, "avatars"))).toBe(false);
    } finally {
      await hub.stop();
    }
  });
});
