import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import {
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMinio, type TestMinio } from "../../test-support/minio.js";
import { createLocalObjectStore } from "./local-object-store.js";
import { createMultipartStaging, type MultipartStaging } from "./multipart-staging.js";
import type { ObjectStore } from "./object-store.js";
import { createS3MultipartStaging } from "./s3-multipart-staging.js";
import { createS3ObjectStore } from "./s3-object-store.js";
import { createLeftoverCollector, LEFTOVER_MIN_AGE_SECONDS } from "./upload-leftovers.js";

const HOUR = 3_600_000;
const MiB = 1024 * 1024;
const oid = (label: string) => createHash("sha256").update(label).digest("hex");
const ago = (ms: number) => new Date(Date.now() - ms);
const inAnHour = () => new Date(Date.now() + HOUR);

/** Sets a file's or directory's modification time `ms` back, as if nothing had touched it since. */
function age(file: string, ms: number): void {
  const then = ago(ms);
  utimesSync(file, then, then);
}

/** Stages part 1 of a two-part multipart upload: one the client never completes. */
async function stageOnePart(staging: MultipartStaging, repository: string, label: string): Promise<void> {
  const part = randomBytes(1024);
  await staging.writePart(repository, oid(label), "session-1", 1, part.length, Readable.from([part]));
}

describe("the leftovers of uploads on local disk", () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "hub-leftovers-"));
  const store = createLocalObjectStore(dataDir);
  const staging = createMultipartStaging(dataDir);
  const tmp = path.join(dataDir, "lfs", "tmp");
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("removes a temporary write nobody touched since the cutoff and keeps a fresh one", async () => {
    // What a process killed mid-upload leaves: the temporary file its write was streaming into.
    mkdirSync(tmp, { recursive: true });
    const stale = path.join(tmp, `${oid("stale")}.0a1b2c3d4e5f`);
    const fresh = path.join(tmp, `${oid("fresh")}.5f4e3d2c1b0a`);
    writeFileSync(stale, randomBytes(3000));
    writeFileSync(fresh, randomBytes(10));
    age(stale, 3 * HOUR);

    expect(await store.removeLeftovers(ago(2 * HOUR))).toEqual({ removed: 1, freedBytes: 3000 });
    expect(readdirSync(tmp)).toEqual([path.basename(fresh)]);
    // Nothing is there to remove twice.
    expect(await store.removeLeftovers(ago(2 * HOUR))).toEqual({ removed: 0, freedBytes: 0 });
  });

  it("never touches stored objects, and finds nothing in a data dir that never had an upload", async () => {
    const content = Buffer.from("kept\n");
    await store.write(oid("kept\n"), content.length, Readable.from([content]));
    await store.removeLeftovers(inAnHour());
    expect(await store.size(oid("kept\n"))).toBe(content.length);

    const empty = createLocalObjectStore(mkdtempSync(path.join(os.tmpdir(), "hub-leftovers-empty-")));
    expect(await empty.removeLeftovers(inAnHour())).toEqual({ removed: 0, freedBytes: 0 });
  });

  it("removes a staged multipart upload nobody wrote to since the cutoff, and keeps one still receiving parts", async () => {
    await stageOnePart(staging, "repo-a", "abandoned");
    await stageOnePart(staging, "repo-b", "active");
    const uploadDir = (repository: string, label: string) =>
      path.join(dataDir, "lfs", "multipart", repository, oid(label), "session-1");
    // The abandoned upload: its directory and every file in it untouched for three hours.
    const abandoned = uploadDir("repo-a", "abandoned");
    for (const name of readdirSync(abandoned)) age(path.join(abandoned, name), 3 * HOUR);
    age(abandoned, 3 * HOUR);
    // The active one wrote its first part three hours ago and its second a moment ago: its newest write counts.
    const active = uploadDir("repo-b", "active");
    for (const name of readdirSync(active)) age(path.join(active, name), 3 * HOUR);
    age(active, 3 * HOUR);
    const second = randomBytes(512);
    await staging.writePart("repo-b", oid("active"), "session-1", 2, second.length, Readable.from([second]));

    const removed = await staging.removeLeftovers(ago(2 * HOUR));
    expect(removed.removed).toBe(1);
    expect(removed.freedBytes).toBeGreaterThanOrEqual(1024);
    expect(existsSync(path.join(dataDir, "lfs", "multipart", "repo-a"))).toBe(false);
    expect(readdirSync(active).sort()).toEqual(["1", "1.etag", "2", "2.etag"]);
  });

  it("keeps an upload whose completion is reading its parts, however old the parts are", async () => {
    await stageOnePart(staging, "repo-c", "completing");
    const upload = path.join(dataDir, "lfs", "multipart", "repo-c", oid("completing"), "session-1");
    for (const name of readdirSync(upload)) age(path.join(upload, name), 3 * HOUR);
    age(upload, 3 * HOUR);
    // The completion has read part 1 of 1 (a slow store may take long over the whole object).
    const reading = staging.read("repo-c", oid("completing"), "session-1", 1)[Symbol.asyncIterator]();
    await reading.next();
    expect((await staging.removeLeftovers(ago(2 * HOUR))).removed).toBe(0);
    expect(readdirSync(upload)).toContain("1");
    await reading.return?.();
  });
});

describe("the leftovers of uploads in an S3-compatible store (MinIO)", () => {
  let minio: TestMinio;
  let bucket: string;
  let store: ObjectStore;
  let staging: MultipartStaging;

  const openUploads = async () =>
    ((await minio.client.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? [])
      .map((upload) => upload.Key)
      .sort();
  /** What a process killed in the middle of a large write leaves: a multipart upload with a part in it. */
  const startUpload = async (key: string) => {
    const { UploadId } = await minio.client.send(
      new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }),
    );
    await minio.client.send(
      new UploadPartCommand({
        Bucket: bucket,
        Key: key,
        UploadId,
        PartNumber: 1,
        Body: randomBytes(5 * MiB),
      }),
    );
  };

  beforeAll(async () => {
    minio = await startMinio();
    bucket = await minio.createBucket();
    store = createS3ObjectStore({ client: minio.client, bucket, prefix: "hub/", presignedDownloads: true });
    staging = createS3MultipartStaging({ client: minio.client, bucket, prefix: "hub/" });
  }, 60_000);
  afterAll(async () => {
    await minio?.stop();
  });

  it("aborts the hub's incomplete multipart uploads older than the cutoff, and nobody else's", async () => {
    const object = `hub/lfs/objects/ab/cd/${oid("killed")}`;
    const xorb = `hub/lfs/xet/xorbs/ef/01/${oid("killed xorb")}`;
    // Another application's, and another hub's whose prefix starts with this one's name.
    const foreign = ["another-app/video.mp4", `hub2/lfs/objects/ab/cd/${oid("other hub")}`];
    for (const key of [object, xorb, ...foreign]) await startUpload(key);

    // Nothing is older than a cutoff an hour ago.
    expect(await store.removeLeftovers(ago(HOUR))).toEqual({ removed: 0, freedBytes: 0 });
    expect(await openUploads()).toEqual([...foreign, object, xorb].sort());

    // A pass asked to stop removes nothing more.
    expect(await store.removeLeftovers(inAnHour(), AbortSignal.abort())).toEqual({
      removed: 0,
      freedBytes: 0,
    });

    // A cutoff after they started and after their last part: the hub's two go, with their parts' bytes.
    expect(await store.removeLeftovers(inAnHour())).toEqual({ removed: 2, freedBytes: 10 * MiB });
    expect(await openUploads()).toEqual(foreign.sort());
  });

  it("removes the parts of a staged multipart upload nobody wrote to since the cutoff", async () => {
    await stageOnePart(staging, "repo-a", "abandoned");
    const keys = async () =>
      (
        (await minio.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: "hub/lfs/multipart/" })))
          .Contents ?? []
      ).map((item) => item.Key);
    expect(await keys()).toHaveLength(2); // the part and its ETag

    expect((await staging.removeLeftovers(ago(HOUR))).removed).toBe(0);
    expect(await keys()).toHaveLength(2);
    const removed = await staging.removeLeftovers(inAnHour());
    expect(removed.removed).toBe(1);
    expect(removed.freedBytes).toBeGreaterThanOrEqual(1024);
    expect(await keys()).toEqual([]);
  });

  it("collects both after the grace period, and never sooner than twice a signed URL's life", async () => {
    await startUpload(`hub/lfs/objects/12/34/${oid("another killed write")}`);
    await stageOnePart(staging, "repo-c", "another abandoned");
    const collectAt = (at: Date, graceSeconds: number) =>
      createLeftoverCollector({ store, staging, clock: () => at, graceSeconds })();

    // A grace of a second does not shorten the least age: an hour later, both are still young.
    expect(await collectAt(inAnHour(), 1)).toEqual({ writes: 0, stagedUploads: 0, freedBytes: 0 });
    // A day's grace, two hours later: still young.
    expect(await collectAt(new Date(Date.now() + 2 * HOUR), 86_400)).toMatchObject({ writes: 0 });
    // Past the least age, with a short grace: both go.
    const later = new Date(Date.now() + (LEFTOVER_MIN_AGE_SECONDS + 60) * 1000);
    const collected = await collectAt(later, 1);
    expect(collected).toMatchObject({ writes: 1, stagedUploads: 1 });
    expect(collected.freedBytes).toBeGreaterThanOrEqual(5 * MiB + 1024);
    expect(await openUploads()).toEqual(
      ["another-app/video.mp4", `hub2/lfs/objects/ab/cd/${oid("other hub")}`].sort(),
    );
  });
});
