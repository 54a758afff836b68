import { createHash, randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { OID_PATTERN, ObjectMismatchError, type ObjectStore } from "./object-store.js";

const READ_CHUNK_BYTES = 1024 * 1024;

/** LFS objects as files under `lfs/objects/ab/cd/<oid>`, written to a temporary file and renamed in once verified. */
export function createLocalObjectStore(dataDir: string): ObjectStore {
  const root = path.join(dataDir, "lfs");
  const pathOf = (oid: string) => {
    if (!OID_PATTERN.test(oid)) throw new Error(`Not an LFS object id: ${oid}`);
    return path.join(root, "objects", oid.slice(0, 2), oid.slice(2, 4), oid);
  };

  return {
    async size(oid) {
      try {
        return (await stat(pathOf(oid))).size;
      } catch {
        return null;
      }
    },

    async write(oid, size, body) {
      const target = pathOf(oid);
      const temporary = path.join(root, "tmp", `${oid}.${randomBytes(6).toString("hex")}`);
      await mkdir(path.dirname(temporary), { recursive: true });
      const hash = createHash("sha256");
      let received = 0;
      const measure = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          received += chunk.length;
          if (received > size)
            return done(new ObjectMismatchError(`More than the announced ${size} bytes were sent.`));
          hash.update(chunk);
          done(null, chunk);
        },
      });
      try {
        await pipeline(body, measure, createWriteStream(temporary, { flags: "wx" }));
        if (received !== size)
          throw new ObjectMismatchError(`${received} bytes arrived, ${size} were announced.`);
        if (hash.digest("hex") !== oid)
          throw new ObjectMismatchError("The content does not hash to the object id.");
        await mkdir(path.dirname(target), { recursive: true });
        await rename(temporary, target);
      } finally {
        await rm(temporary, { force: true });
      }
    },

    read(oid, range) {
      // 1 MiB reads: with Node's default 64 KiB, downloads spend their time in per-chunk overhead.
      return createReadStream(pathOf(oid), {
        highWaterMark: READ_CHUNK_BYTES,
        ...(range ? { start: range.start, end: range.end } : {}),
      });
    },

    remove: (oid) => rm(pathOf(oid), { force: true }),
  };
}
