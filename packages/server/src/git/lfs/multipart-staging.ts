import { createHash, randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, rmdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { ObjectMismatchError, type Leftovers } from "./object-store.js";

/**
 * A Transform that counts a part's bytes and takes their MD5 (the part's ETag, as S3 gives it) on their
 * way to where the part waits, and fails, before its end, when they are more or fewer than `size`: a
 * part is only stored from a stream that ended cleanly. Both stagings write through it.
 */
export function measuringPart(part: number, size: number): { stream: Transform; etag: () => string } {
  const md5 = createHash("md5");
  let received = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      received += chunk.length;
      if (received > size)
        return done(new ObjectMismatchError(`Part ${part} is larger than its ${size} bytes.`));
      md5.update(chunk);
      done(null, chunk);
    },
    flush(done) {
      done(
        received === size
          ? null
          : new ObjectMismatchError(`Part ${part} has ${received} bytes, not ${size}.`),
      );
    },
  });
  return { stream, etag: () => `"${md5.digest("hex")}"` };
}

/**
 * The file a completion writes into an upload before it reads each part, so an upload being completed is
 * never taken for a leftover however long the store takes.
 */
export const COMPLETING = "completing";

/**
 * Parts of multipart LFS uploads (the Hugging Face extension), kept on local
 * disk until the client completes the upload; then they are read back in
 * order and streamed into the object store, which verifies the whole object.
 */
export function createMultipartStaging(dataDir: string): MultipartStaging {
  const root = path.join(dataDir, "lfs", "multipart");
  const dirOf = (repositoryId: string, oid: string, session: string) =>
    path.join(root, repositoryId, oid, session);

  return {
    /** Stores one part of exactly `size` bytes and returns its ETag (the MD5 of the part, as S3 gives it). */
    async writePart(
      repositoryId: string,
      oid: string,
      session: string,
      part: number,
      size: number,
      body: Readable,
    ): Promise<string> {
      const dir = dirOf(repositoryId, oid, session);
      await mkdir(dir, { recursive: true });
      const temporary = path.join(dir, `${part}.${randomBytes(4).toString("hex")}.tmp`);
      const measure = measuringPart(part, size);
      try {
        await pipeline(body, measure.stream, createWriteStream(temporary, { flags: "wx" }));
        const etag = measure.etag();
        await rename(temporary, path.join(dir, String(part)));
        await writeFile(path.join(dir, `${part}.etag`), etag);
        return etag;
      } finally {
        await rm(temporary, { force: true });
      }
    },

    /** Whether every part is stored, each with the ETag the client reports for it. */
    async complete(
      repositoryId: string,
      oid: string,
      session: string,
      parts: Array<{ partNumber: number; etag: string }>,
      count: number,
    ): Promise<boolean> {
      if (parts.length !== count) return false;
      const dir = dirOf(repositoryId, oid, session);
      for (let part = 1; part <= count; part++) {
        const reported = parts.find((p) => p.partNumber === part)?.etag;
        const stored = await readFile(path.join(dir, `${part}.etag`), "utf8").catch(() => null);
        if (!stored || !(await stat(path.join(dir, String(part))).catch(() => null))) return false;
        if (reported === undefined || reported.replace(/"/g, "") !== stored.replace(/"/g, "")) return false;
      }
      return true;
    },

    /** The parts in order, as one stream. */
    read(repositoryId: string, oid: string, session: string, count: number): Readable {
      const dir = dirOf(repositoryId, oid, session);
      return Readable.from(
        (async function* () {
          for (let part = 1; part <= count; part++) {
            await writeFile(path.join(dir, COMPLETING), "");
            yield* createReadStream(path.join(dir, String(part)));
          }
        })(),
      );
    },

    async discard(repositoryId: string, oid: string, session: string): Promise<void> {
      await rm(dirOf(repositoryId, oid, session), { recursive: true, force: true });
    },

    async removeLeftovers(before: Date, signal?: AbortSignal): Promise<Leftovers> {
      const leftovers = { removed: 0, freedBytes: 0 };
      const entries = async (dir: string) =>
        (await readdir(dir).catch(() => [] as string[])).map((name) => path.join(dir, name));
      // Every upload: `<repository>/<oid>/<session>`.
      const repositories = await entries(root);
      const objects = (await Promise.all(repositories.map(entries))).flat();
      const uploads = (await Promise.all(objects.map(entries))).flat();
      for (const upload of uploads) {
        if (signal?.aborted) break;
        // The upload's newest write: a part being written is a temporary file in it, fresh.
        const infos = await Promise.all(
          [upload, ...(await entries(upload))].map((at) => stat(at).catch(() => null)),
        );
        const newest = Math.max(0, ...infos.map((info) => info?.mtimeMs ?? 0));
        if (newest >= before.getTime()) continue;
        await rm(upload, { recursive: true, force: true });
        leftovers.removed++;
        leftovers.freedBytes += infos.slice(1).reduce((sum, info) => sum + (info?.size ?? 0), 0);
        // The directories above it go too once empty (rmdir keeps one a new upload has written to meanwhile).
        const object = path.dirname(upload);
        await rmdir(object)
          .then(() => rmdir(path.dirname(object)))
          .catch(() => {});
      }
      return leftovers;
    },
  };
}

/** Where parts wait until their upload completes: the data dir (here) or the bucket (`s3-multipart-staging.ts`). */
export interface MultipartStaging {
  /** Stores one part of exactly `size` bytes and returns its ETag (the MD5 of the part, as S3 gives it). */
  writePart(
    repositoryId: string,
    oid: string,
    session: string,
    part: number,
    size: number,
    body: Readable,
  ): Promise<string>;
  /** Whether every part is stored, each with the ETag the client reports for it. */
  complete(
    repositoryId: string,
    oid: string,
    session: string,
    parts: Array<{ partNumber: number; etag: string }>,
    count: number,
  ): Promise<boolean>;
  /** The parts in order, as one stream. */
  read(repositoryId: string, oid: string, session: string, count: number): Readable;
  /** Removes the upload's parts. */
  discard(repositoryId: string, oid: string, session: string): Promise<void>;
  /**
   * Removes the parts of every upload nothing was written to since `before`: one the client never completed
   * (its signed URLs live an hour) or whose completing process was killed. A completion writes to the upload
   * before each part it reads. Stops early, with what it removed so far, once `signal` is aborted.
   */
  removeLeftovers(before: Date, signal?: AbortSignal): Promise<Leftovers>;
}
