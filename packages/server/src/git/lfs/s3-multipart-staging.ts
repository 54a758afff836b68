import { Readable } from "node:stream";
import { pipeline } from "node:stream";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { COMPLETING, measuringPart, type MultipartStaging } from "./multipart-staging.js";
import { listObjects, statusOf } from "./s3-listing.js";

const MiB = 1024 * 1024;

export interface S3MultipartStagingOptions {
  client: S3Client;
  bucket: string;
  /** Prepended to every key: empty or ending in `/`. */
  prefix: string;
}

/**
 * Parts of multipart LFS uploads (the Hugging Face extension) in the bucket
 * of the S3-compatible store, under `<prefix>lfs/multipart/<repository>/<oid>/<session>/`:
 * part `n` as the object `n` and its ETag as `n.etag`, so any process of a
 * deployment can take the next part or complete the upload, whichever
 * received the others. Completion reads them back in order into the store's
 * verified write, then removes them. Parts of an upload nobody wrote to for a
 * while are removed as leftovers (`upload-leftovers.ts`).
 */
export function createS3MultipartStaging({
  client,
  bucket,
  prefix,
}: S3MultipartStagingOptions): MultipartStaging {
  const root = `${prefix}lfs/multipart/`;
  const dirOf = (repositoryId: string, oid: string, session: string) =>
    `${root}${repositoryId}/${oid}/${session}/`;

  async function text(key: string): Promise<string | null> {
    try {
      const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return (await response.Body?.transformToString("utf8")) ?? null;
    } catch (err) {
      if (statusOf(err) === 404) return null;
      throw err;
    }
  }

  async function exists(key: string): Promise<boolean> {
    try {
      await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return true;
    } catch (err) {
      if (statusOf(err) === 404) return false;
      throw err;
    }
  }

  return {
    async writePart(repositoryId, oid, session, part, size, body) {
      const dir = dirOf(repositoryId, oid, session);
      const measure = measuringPart(part, size);
      // A body that fails or ends short fails the stream before its end, so the upload never completes.
      pipeline(body, measure.stream, () => {});
      const upload = new Upload({
        client,
        params: { Bucket: bucket, Key: `${dir}${part}`, Body: measure.stream },
        partSize: 8 * MiB,
        queueSize: 4,
        leavePartsOnError: false,
      });
      try {
        await upload.done();
      } finally {
        measure.stream.destroy();
      }
      const etag = measure.etag();
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: `${dir}${part}.etag`, Body: etag }));
      return etag;
    },

    async complete(repositoryId, oid, session, parts, count) {
      if (parts.length !== count) return false;
      const dir = dirOf(repositoryId, oid, session);
      for (let part = 1; part <= count; part++) {
        const reported = parts.find((p) => p.partNumber === part)?.etag;
        const stored = await text(`${dir}${part}.etag`);
        if (!stored || !(await exists(`${dir}${part}`))) return false;
        if (reported === undefined || reported.replace(/"/g, "") !== stored.replace(/"/g, "")) return false;
      }
      return true;
    },

    read(repositoryId, oid, session, count) {
      const dir = dirOf(repositoryId, oid, session);
      return Readable.from(
        (async function* () {
          for (let part = 1; part <= count; part++) {
            // A completion reading the parts is a write to the upload: it is no leftover while it runs.
            await client.send(new PutObjectCommand({ Bucket: bucket, Key: `${dir}${COMPLETING}`, Body: "" }));
            const response = await client.send(
              new GetObjectCommand({ Bucket: bucket, Key: `${dir}${part}` }),
            );
            if (!(response.Body instanceof Readable))
              throw new Error("The S3 client did not answer a stream.");
            yield* response.Body;
          }
        })(),
      );
    },

    async discard(repositoryId, oid, session) {
      // One by one: a part and its ETag each, and DeleteObjects needs a checksum header not every service takes.
      for await (const item of listObjects(client, bucket, dirOf(repositoryId, oid, session)))
        if (item.Key) await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: item.Key }));
    },

    async removeLeftovers(before, signal) {
      // Every staged key by its upload (`…/<repository>/<oid>/<session>/`), with the upload's newest write.
      const uploads = new Map<string, { newest: number; keys: string[]; bytes: number }>();
      for await (const item of listObjects(client, bucket, root)) {
        if (!item.Key) continue;
        const upload = item.Key.slice(0, item.Key.lastIndexOf("/") + 1);
        const entry = uploads.get(upload) ?? { newest: 0, keys: [], bytes: 0 };
        entry.newest = Math.max(entry.newest, item.LastModified?.getTime() ?? Date.now());
        entry.keys.push(item.Key);
        entry.bytes += item.Size ?? 0;
        uploads.set(upload, entry);
      }
      const leftovers = { removed: 0, freedBytes: 0 };
      for (const { newest, keys, bytes } of uploads.values()) {
        if (signal?.aborted) break;
        if (newest >= before.getTime()) continue;
        for (const key of keys) await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
        leftovers.removed++;
        leftovers.freedBytes += bytes;
      }
      return leftovers;
    },
  };
}
