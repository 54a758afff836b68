import { createHash, randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import { ListMultipartUploadsCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMinio, type TestMinio } from "../../test-support/minio.js";
import { ObjectMismatchError, type ObjectStore } from "./object-store.js";
import { createS3ObjectStore } from "./s3-object-store.js";

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

/** A body that sends `bytes` in 1 MiB chunks, then fails (a client that went away), when `failAfter` is given. */
function body(bytes: Buffer, failAfter?: number): Readable {
  return Readable.from(
    (async function* () {
      for (let at = 0; at < bytes.length; at += 1024 * 1024) {
        if (failAfter !== undefined && at >= failAfter) throw new Error("connection reset");
        yield bytes.subarray(at, at + 1024 * 1024);
      }
    })(),
  );
}

describe("the S3 object store on MinIO", () => {
  let minio: TestMinio;
  let bucket: string;
  let store: ObjectStore;

  /** Every key in the bucket and every multipart upload still open: what a failed write must not leave. */
  const leftovers = async () => {
    const objects = await minio.client.send(new ListObjectsV2Command({ Bucket: bucket }));
    const uploads = await minio.client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
    return {
      keys: (objects.Contents ?? []).map((item) => item.Key),
      uploads: (uploads.Uploads ?? []).map((upload) => upload.Key),
    };
  };

  beforeAll(async () => {
    minio = await startMinio();
    bucket = await minio.createBucket();
    store = createS3ObjectStore({ client: minio.client, bucket, prefix: "hub/", presignedDownloads: true });
  }, 60_000);
  afterAll(async () => {
    await minio?.stop();
  });

  it("is reachable while its bucket exists, and says why not for a bucket that does not", async () => {
    await expect(store.reachable(AbortSignal.timeout(5000))).resolves.toBeUndefined();
    const missing = createS3ObjectStore({
      client: minio.client,
      bucket: `${bucket}-missing`,
      prefix: "hub/",
      presignedDownloads: true,
    });
    await expect(missing.reachable(AbortSignal.timeout(5000))).rejects.toThrow();
  });

  it("stores a small object under the prefix, reads it whole and by range, lists and removes it", async () => {
    const content = Buffer.from("hello, object storage\n");
    const oid = sha256(content);
    expect(await store.size(oid)).toBeNull();
    await store.write(oid, content.length, body(content));
    expect(await store.size(oid)).toBe(content.length);
    expect((await leftovers()).keys).toEqual([
      `hub/lfs/objects/${oid.slice(0, 2)}/${oid.slice(2, 4)}/${oid}`,
    ]);
    expect(await buffer(store.read(oid))).toEqual(content);
    expect((await buffer(store.read(oid, { start: 7, end: 11 }))).toString()).toBe("objec");
    const listed = [];
    for await (const item of store.list()) listed.push(item);
    expect(listed).toEqual([{ key: oid, size: content.length }]);
    await store.remove(oid);
    await store.remove(oid);
    expect(await store.size(oid)).toBeNull();
    expect(await leftovers()).toEqual({ keys: [], uploads: [] });
  });

  it("stores a large object in parts and reads back exactly its bytes", async () => {
    const content = randomBytes(20 * 1024 * 1024 + 123);
    const oid = sha256(content);
    await store.write(oid, content.length, body(content));
    expect(await store.size(oid)).toBe(content.length);
    expect(sha256(await buffer(store.read(oid)))).toBe(oid);
    const start = 8 * 1024 * 1024 - 5;
    expect(await buffer(store.read(oid, { start, end: start + 9 }))).toEqual(
      content.subarray(start, start + 10),
    );
    await store.remove(oid);
    expect(await leftovers()).toEqual({ keys: [], uploads: [] });
  });

  it.each([
    ["a small body that does not hash to its oid", 1000, "hash"],
    ["a large body that does not hash to its oid", 20 * 1024 * 1024, "hash"],
    ["a body shorter than announced", 20 * 1024 * 1024, "short"],
    ["a body longer than announced", 20 * 1024 * 1024, "long"],
  ])("keeps nothing of %s, and leaves no upload open", async (_name, length, fault) => {
    const content = randomBytes(length);
    const oid = fault === "hash" ? sha256(Buffer.from("something else")) : sha256(content);
    const announced = fault === "short" ? length + 1 : fault === "long" ? length - 1 : length;
    await expect(store.write(oid, announced, body(content))).rejects.toBeInstanceOf(ObjectMismatchError);
    expect(await store.size(oid)).toBeNull();
    expect(await leftovers()).toEqual({ keys: [], uploads: [] });
  });

  it("keeps nothing of an upload whose body breaks off after some parts went up", async () => {
    const content = randomBytes(30 * 1024 * 1024);
    const oid = sha256(content);
    await expect(store.write(oid, content.length, body(content, 20 * 1024 * 1024))).rejects.toThrow(
      "connection reset",
    );
    expect(await store.size(oid)).toBeNull();
    expect(await leftovers()).toEqual({ keys: [], uploads: [] });
  });

  it("keeps a namespace's objects apart: put once, read by range, list, remove", async () => {
    const xorbs = store.namespace("xet/xorbs");
    const key = "ab".repeat(32);
    const bytes = randomBytes(4096);
    expect(await xorbs.size(key)).toBeNull();
    expect(await xorbs.put(key, bytes)).toBe(true);
    expect(await xorbs.put(key, randomBytes(10))).toBe(false);
    expect(await xorbs.size(key)).toBe(4096);
    expect(await buffer(xorbs.read(key, { start: 100, end: 199 }))).toEqual(bytes.subarray(100, 200));
    const listed = [];
    for await (const item of xorbs.list()) listed.push(item);
    expect(listed).toEqual([{ key, size: 4096 }]);
    const objects = [];
    for await (const item of store.list()) objects.push(item);
    expect(objects).toEqual([]);
    expect(await store.size(key)).toBeNull();
    await xorbs.remove(key);
    expect(await xorbs.size(key)).toBeNull();
    expect(() => store.namespace("objects")).toThrow();
    expect(() => store.namespace("../x")).toThrow();
  });

  it("stores an empty object", async () => {
    const oid = sha256(Buffer.alloc(0));
    await store.write(oid, 0, body(Buffer.alloc(0)));
    expect(await store.size(oid)).toBe(0);
    expect((await buffer(store.read(oid))).length).toBe(0);
    await store.remove(oid);
  });

  it("fails a read of an object that is not there", async () => {
    await expect(buffer(store.read("0".repeat(64)))).rejects.toThrow();
  });

  it("signs download URLs that serve the object, ranges of it, and stop working when they expire", async () => {
    const content = Buffer.from("presigned bytes");
    const oid = sha256(content);
    await store.write(oid, content.length, body(content));
    const signed = store.signedDownloadUrl;
    if (!signed) throw new Error("the store offers no signed URLs");
    const url = await signed(oid, { expiresInSeconds: 60, filename: "weights ü.bin" });
    expect(url.startsWith(`${minio.endpoint}/${bucket}/hub/lfs/objects/`)).toBe(true);
    const whole = await fetch(url);
    expect(whole.status).toBe(200);
    expect(Buffer.from(await whole.arrayBuffer())).toEqual(content);
    expect(whole.headers.get("content-disposition")).toBe(
      `inline; filename="weights _.bin"; filename*=UTF-8''weights%20%C3%BC.bin`,
    );
    const part = await fetch(url, { headers: { range: "bytes=0-0" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 0-0/${content.length}`);
    expect(await part.text()).toBe("p");
    // A URL is the grant it was minted with: changing what it names breaks its signature.
    const other = url.replace(oid, sha256(Buffer.from("x")));
    expect((await fetch(other)).status).toBe(403);

    const shortLived = await signed(oid, { expiresInSeconds: 1 });
    expect((await fetch(shortLived)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const expired = await fetch(shortLived);
    expect(expired.status).toBe(403);
    expect(await expired.text()).toContain("expired");
    await store.remove(oid);
  });

  it("offers no signed URLs when downloads go through the hub", () => {
    const streaming = createS3ObjectStore({
      client: minio.client,
      bucket,
      prefix: "",
      presignedDownloads: false,
    });
    expect(streaming.signedDownloadUrl).toBeUndefined();
  });
});
