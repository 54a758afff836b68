import { PassThrough, Readable } from "node:stream";
import { pipeline } from "node:stream";
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import {
  checkNamespace,
  NAMESPACED_KEY_PATTERN,
  OID_PATTERN,
  type NamespacedObjects,
  type ObjectStore,
  type SignedDownload,
  type StoredObject,
} from "./object-store.js";
import { listObjects, statusOf } from "./s3-listing.js";
import { verifyingStream } from "./verifying-stream.js";

const MiB = 1024 * 1024;
/** Parts of a multipart upload: 8 MiB, or larger when an object would need more than S3's 10,000 parts. */
const MIN_PART_BYTES = 8 * MiB;
const MAX_PARTS = 10_000;
/** Parts of one upload in flight at once; with 8 MiB parts an upload holds at most 32 MiB in memory. */
const PARTS_IN_FLIGHT = 4;
const READ_BUFFER_BYTES = MiB;

export interface S3ObjectStoreOptions {
  client: S3Client;
  /** The client that signs download URLs, when clients reach the store at another address than the hub does. */
  presignClient?: S3Client;
  bucket: string;
  /** Prepended to every key: empty or ending in `/`. */
  prefix: string;
  /** Whether the store offers `signedDownloadUrl`, so downloads go straight to it. */
  presignedDownloads: boolean;
}

/** RFC 6266: an ASCII fallback name and the exact name in UTF-8. */
function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `inline; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/**
 * Objects in a bucket of an S3-compatible service (AWS S3, MinIO, Ceph RGW, ...), under the same key layout
 * the local store uses on disk: `<prefix>lfs/objects/ab/cd/<oid>` and `<prefix>lfs/<namespace>/ab/cd/<key>`.
 *
 * A write never stages the object under another key to copy it in afterwards: it streams the body through
 * a verifying Transform into an upload to the final key, and S3 only makes an object visible when the
 * upload finishes. A small body (one part) is held in memory and sent with one PutObject after the stream
 * ended verified; a larger one goes as a multipart upload, whose parts stay invisible until
 * CompleteMultipartUpload, sent only after the stream ended verified. On a mismatch or an interrupted body
 * the stream fails first, so the PutObject is never sent or the multipart upload is aborted: nothing is
 * visible and nothing is left. This saves the server-side copy a staging key needs (minutes for an object
 * of many GB, and a multipart copy above 5 GB). A process that dies mid-upload leaves an incomplete
 * multipart upload behind, invisible; `removeLeftovers` aborts it once it received nothing for a while.
 */
export function createS3ObjectStore(options: S3ObjectStoreOptions): ObjectStore {
  const { client, bucket, prefix } = options;
  const presignClient = options.presignClient ?? client;

  async function sizeOf(key: string): Promise<number | null> {
    try {
      const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return head.ContentLength ?? 0;
    } catch (err) {
      if (statusOf(err) === 404) return null;
      throw err;
    }
  }

  function readKey(key: string, range?: { start: number; end: number }): Readable {
    const out = new PassThrough({ highWaterMark: READ_BUFFER_BYTES });
    const abort = new AbortController();
    let answered = false;
    // A reader that goes away before the store answered cancels the request; after, the pipeline below
    // destroys the response body with it.
    out.once("close", () => {
      if (!answered) abort.abort();
    });
    client
      .send(
        new GetObjectCommand({
          Bucket: bucket,
          Key: key,
          ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
        }),
        { abortSignal: abort.signal },
      )
      .then(
        (response) => {
          answered = true;
          if (!(response.Body instanceof Readable)) throw new Error("The S3 client did not answer a stream.");
          pipeline(response.Body, out, () => {});
        },
        (err: unknown) => {
          answered = true;
          out.destroy(err as Error);
        },
      )
      .catch((err: unknown) => out.destroy(err as Error));
    return out;
  }

  async function removeKey(key: string): Promise<void> {
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  }

  async function* listUnder(dir: string, pattern: RegExp): AsyncIterable<StoredObject> {
    for await (const item of listObjects(client, bucket, dir)) {
      const key = item.Key?.slice(item.Key.lastIndexOf("/") + 1) ?? "";
      // Only `ab/cd/<key>` right under the directory: a namespace nested below it is not part of it.
      if (pattern.test(key) && item.Key === `${dir}${key.slice(0, 2)}/${key.slice(2, 4)}/${key}`)
        yield { key, size: item.Size ?? 0 };
    }
  }

  /**
   * The newest part's time of an incomplete multipart upload (null when it has none) and the parts' bytes, or
   * null when the upload is gone (completed or aborted since it was listed).
   */
  async function partsOf(
    key: string,
    uploadId: string,
  ): Promise<{ newest: Date | null; bytes: number } | null> {
    let newest: Date | null = null;
    let bytes = 0;
    let marker: string | undefined;
    for (;;) {
      let page;
      try {
        page = await client.send(
          new ListPartsCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumberMarker: marker }),
        );
      } catch (err) {
        if (statusOf(err) === 404) return null;
        throw err;
      }
      for (const part of page.Parts ?? []) {
        bytes += part.Size ?? 0;
        if (part.LastModified && (!newest || part.LastModified > newest)) newest = part.LastModified;
      }
      // A page that does not move the marker on ends the listing rather than repeating it forever.
      const next = page.IsTruncated ? page.NextPartNumberMarker : undefined;
      if (next === undefined || next === marker) return { newest, bytes };
      marker = next;
    }
  }

  const fanout = (dir: string, key: string) => `${dir}${key.slice(0, 2)}/${key.slice(2, 4)}/${key}`;
  const objectsDir = `${prefix}lfs/objects/`;
  const objectKey = (oid: string) => {
    if (!OID_PATTERN.test(oid)) throw new Error(`Not an LFS object id: ${oid}`);
    return fanout(objectsDir, oid);
  };

  function namespace(name: string): NamespacedObjects {
    checkNamespace(name);
    const dir = `${prefix}lfs/${name}/`;
    const keyOf = (key: string) => {
      if (!NAMESPACED_KEY_PATTERN.test(key)) throw new Error(`Not a key of ${name}: ${key}`);
      return fanout(dir, key);
    };
    return {
      size: (key) => sizeOf(keyOf(key)),
      async put(key, bytes) {
        const target = keyOf(key);
        if ((await sizeOf(target)) !== null) return false;
        try {
          // If-None-Match: another put of the same key that won the race is kept, never replaced.
          await client.send(
            new PutObjectCommand({ Bucket: bucket, Key: target, Body: bytes, IfNoneMatch: "*" }),
          );
          return true;
        } catch (err) {
          if (statusOf(err) === 412 || statusOf(err) === 409) return false;
          throw err;
        }
      },
      read: (key, range) => readKey(keyOf(key), range),
      remove: (key) => removeKey(keyOf(key)),
      list: () => listUnder(dir, NAMESPACED_KEY_PATTERN),
    };
  }

  const store: ObjectStore = {
    size: (oid) => sizeOf(objectKey(oid)),

    // The bucket exists and these credentials may list it (s3:ListBucket), with no object read.
    async reachable(signal) {
      await client.send(new HeadBucketCommand({ Bucket: bucket }), { abortSignal: signal });
    },

    async write(oid, size, body) {
      const key = objectKey(oid);
      const verify = verifyingStream(oid, size, MIN_PART_BYTES);
      // The pipeline forwards a failing or vanishing body (a client that disconnects) as verify's error.
      pipeline(body, verify, () => {});
      const partSize = Math.max(MIN_PART_BYTES, Math.ceil(size / MAX_PARTS / MiB) * MiB);
      const upload = new Upload({
        client,
        params: { Bucket: bucket, Key: key, Body: verify },
        partSize,
        queueSize: PARTS_IN_FLIGHT,
        leavePartsOnError: false,
      });
      try {
        await upload.done();
      } finally {
        verify.destroy();
      }
    },

    read: (oid, range) => readKey(objectKey(oid), range),
    remove: (oid) => removeKey(objectKey(oid)),
    list: () => listUnder(objectsDir, OID_PATTERN),
    namespace,

    // The bucket's incomplete multipart uploads, listed without a prefix (MinIO lists those of one exact key
    // when given one) and kept to the hub's keys here.
    async removeLeftovers(before, signal) {
      const leftovers = { removed: 0, freedBytes: 0 };
      let keyMarker: string | undefined;
      let uploadIdMarker: string | undefined;
      for (;;) {
        const page = await client.send(
          new ListMultipartUploadsCommand({
            Bucket: bucket,
            KeyMarker: keyMarker,
            UploadIdMarker: uploadIdMarker,
          }),
        );
        for (const { Key: key, UploadId: uploadId, Initiated: initiated } of page.Uploads ?? []) {
          if (signal?.aborted) return leftovers;
          if (!key?.startsWith(`${prefix}lfs/`) || !uploadId || !initiated || initiated >= before) continue;
          const parts = await partsOf(key, uploadId);
          if (!parts || (parts.newest && parts.newest >= before)) continue;
          try {
            await client.send(
              new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }),
            );
          } catch (err) {
            // Completed or aborted meanwhile, by the process that started it.
            if (statusOf(err) === 404) continue;
            throw err;
          }
          leftovers.removed++;
          leftovers.freedBytes += parts.bytes;
        }
        // A page that does not move the markers on ends the listing rather than repeating it forever.
        const nextKey = page.IsTruncated ? page.NextKeyMarker : undefined;
        const nextUploadId = page.IsTruncated ? page.NextUploadIdMarker : undefined;
        if ((!nextKey && !nextUploadId) || (nextKey === keyMarker && nextUploadId === uploadIdMarker))
          return leftovers;
        keyMarker = nextKey;
        uploadIdMarker = nextUploadId;
      }
    },
  };
  if (options.presignedDownloads) {
    store.signedDownloadUrl = (oid: string, { expiresInSeconds, filename }: SignedDownload) =>
      getSignedUrl(
        presignClient,
        new GetObjectCommand({
          Bucket: bucket,
          Key: objectKey(oid),
          ...(filename ? { ResponseContentDisposition: contentDisposition(filename) } : {}),
        }),
        { expiresIn: expiresInSeconds },
      );
  }
  return store;
}
