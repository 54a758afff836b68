import { randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { access, constants, link, mkdir, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { verifyingStream } from "./verifying-stream.js";
import {
  checkNamespace,
  NAMESPACED_KEY_PATTERN,
  OID_PATTERN,
  type NamespacedObjects,
  type ObjectStore,
  type StoredObject,
} from "./object-store.js";

const READ_CHUNK_BYTES = 1024 * 1024;
/**
 * How much of an upload may wait for the disk. With Node's default 16 KiB
 * every 64 KiB the socket delivers pauses it until the file write comes back
 * from the thread pool; with room for a few MiB the socket keeps flowing and
 * the writes that pile up meanwhile go out together (writev).
 */
const WRITE_BUFFER_BYTES = 4 * 1024 * 1024;

/** Size of a file, or null when there is none. */
async function sizeOf(file: string): Promise<number | null> {
  try {
    return (await stat(file)).size;
  } catch {
    return null;
  }
}

/** The files under `dir/ab/cd/<key>` whose names are keys, with their sizes; nothing when `dir` does not exist. */
async function* listFanout(dir: string, pattern: RegExp): AsyncIterable<StoredObject> {
  const names = async (at: string) => (await readdir(at).catch(() => [] as string[])).sort();
  for (const first of await names(dir)) {
    for (const second of await names(path.join(dir, first))) {
      for (const key of await names(path.join(dir, first, second))) {
        if (!pattern.test(key)) continue;
        const size = await sizeOf(path.join(dir, first, second, key));
        if (size !== null) yield { key, size };
      }
    }
  }
}

/**
 * A namespace's objects as files under `lfs/<namespace>/ab/cd/<key>`. A new object is written whole to a
 * temporary file and hard-linked into place: the link fails when the object is already there (another upload
 * of the same content won the race), which is fine, and never replaces it.
 */
function localNamespace(root: string, name: string, accelRedirect: string | null): NamespacedObjects {
  checkNamespace(name);
  const relativePath = (key: string) => {
    if (!NAMESPACED_KEY_PATTERN.test(key)) throw new Error(`Not a key of ${name}: ${key}`);
    return `${name}/${key.slice(0, 2)}/${key.slice(2, 4)}/${key}`;
  };
  const pathOf = (key: string) => path.join(root, ...relativePath(key).split("/"));
  return {
    ...(accelRedirect ? { internalRedirect: (key: string) => `${accelRedirect}${relativePath(key)}` } : {}),
    size: (key) => sizeOf(pathOf(key)),
    async put(key, bytes) {
      const target = pathOf(key);
      if ((await sizeOf(target)) !== null) return false;
      const temporary = path.join(root, "tmp", `${key}.${randomBytes(6).toString("hex")}`);
      await mkdir(path.dirname(temporary), { recursive: true });
      try {
        await writeFile(temporary, bytes, { flag: "wx" });
        await mkdir(path.dirname(target), { recursive: true });
        return await link(temporary, target).then(
          () => true,
          (err: NodeJS.ErrnoException) => {
            if (err.code === "EEXIST") return false;
            throw err;
          },
        );
      } finally {
        await rm(temporary, { force: true });
      }
    },
    read(key, range) {
      return createReadStream(pathOf(key), {
        highWaterMark: READ_CHUNK_BYTES,
        ...(range ? { start: range.start, end: range.end } : {}),
      });
    },
    remove: (key) => rm(pathOf(key), { force: true }),
    list: () => listFanout(path.join(root, ...name.split("/")), NAMESPACED_KEY_PATTERN),
  };
}

/**
 * LFS objects as files under `lfs/objects/ab/cd/<oid>`, written to a temporary file and renamed in once
 * verified. With `accelRedirect`, the URI prefix of a front nginx's internal location for `lfs/`, downloads
 * can be handed to that nginx (`internalRedirect`).
 */
export function createLocalObjectStore(
  dataDir: string,
  { accelRedirect = null }: { accelRedirect?: string | null } = {},
): ObjectStore {
  const root = path.join(dataDir, "lfs");
  const relativePath = (oid: string) => {
    if (!OID_PATTERN.test(oid)) throw new Error(`Not an LFS object id: ${oid}`);
    return `objects/${oid.slice(0, 2)}/${oid.slice(2, 4)}/${oid}`;
  };
  const pathOf = (oid: string) => path.join(root, ...relativePath(oid).split("/"));

  return {
    ...(accelRedirect ? { internalRedirect: (oid: string) => `${accelRedirect}${relativePath(oid)}` } : {}),

    // The data dir is where objects are written: it must be there, readable and writable (a mounted volume).
    async reachable() {
      await access(dataDir, constants.R_OK | constants.W_OK);
    },

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
      try {
        // The file is renamed into place only after the stream ended verified.
        await pipeline(
          body,
          verifyingStream(oid, size, WRITE_BUFFER_BYTES),
          createWriteStream(temporary, { flags: "wx", highWaterMark: WRITE_BUFFER_BYTES }),
        );
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

    list: () => listFanout(path.join(root, "objects"), OID_PATTERN),

    namespace: (name) => localNamespace(root, name, accelRedirect),

    // Every write, of an object or a namespace's key, goes through a temporary file in `lfs/tmp/`; one that is
    // being written has a fresh modification time.
    async removeLeftovers(before, signal) {
      const dir = path.join(root, "tmp");
      const leftovers = { removed: 0, freedBytes: 0 };
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        if (signal?.aborted) break;
        const file = path.join(dir, name);
        const info = await stat(file).catch(() => null);
        if (!info || info.mtimeMs >= before.getTime()) continue;
        await rm(file, { recursive: true, force: true });
        leftovers.removed++;
        leftovers.freedBytes += info.size;
      }
      return leftovers;
    },
  };
}
