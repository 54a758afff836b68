import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type { NamespacedObjects, StoredObject } from "../../../git/lfs/object-store.js";

/** The object store's namespace avatars are kept in, with an S3-compatible store. */
export const AVATAR_NAMESPACE = "avatars";
const SHA256_PATTERN = /^[0-9a-f]{64}$/;

/** An avatar's name, refused unless it is a SHA-256 in hex. */
function checked(sha256: string): string {
  if (!SHA256_PATTERN.test(sha256)) throw new Error("An avatar is named by its SHA-256.");
  return sha256;
}

/** Where the data dir keeps an avatar: `<dataDir>/avatars/ab/<sha256>`. */
function avatarPath(dataDir: string, sha256: string): string {
  return path.join(dataDir, "avatars", sha256.slice(0, 2), checked(sha256));
}

/** The avatars stored in the data dir, as `hubd storage migrate` reads them. */
export function localAvatars(dataDir: string): Pick<NamespacedObjects, "list" | "read"> {
  const root = path.join(dataDir, "avatars");
  const pathOf = (sha256: string) => avatarPath(dataDir, sha256);
  return {
    async *list(): AsyncIterable<StoredObject> {
      for (const fanout of (await readdir(root).catch(() => [] as string[])).sort()) {
        for (const key of (await readdir(path.join(root, fanout)).catch(() => [] as string[])).sort()) {
          // Temporary files (`<sha256>.<random>.tmp`) and anything else are not avatars.
          if (!SHA256_PATTERN.test(key) || key.slice(0, 2) !== fanout) continue;
          const info = await stat(pathOf(key)).catch(() => null);
          if (info?.isFile()) yield { key, size: info.size };
        }
      }
    },
    read: (sha256) => createReadStream(pathOf(sha256)),
  };
}

/**
 * Avatar images, stored once by content: two accounts with the same image
 * share one, and its name (its SHA-256) is its ETag. On local disk under
 * `<dataDir>/avatars/<sha256[0:2]>/<sha256>`; with an S3-compatible object
 * store, in its `avatars` namespace (`PREFIX/lfs/avatars/…`, docs/storage.md),
 * so every process of a deployment reads them there. An avatar stored in the
 * data dir before the hub moved to the store is still read from the data dir.
 */
export function createAvatarStore(dataDir: string, objects: NamespacedObjects | null = null) {
  const pathOf = (sha256: string) => avatarPath(dataDir, sha256);

  async function readLocal(sha256: string): Promise<Buffer | null> {
    try {
      return await readFile(pathOf(sha256));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
  }

  return {
    /** Stores the image (whole or not at all: a temporary name renamed in, or one PUT), answers its SHA-256. */
    async put(content: Buffer): Promise<string> {
      const sha256 = createHash("sha256").update(content).digest("hex");
      if (objects) {
        // An image already there (another account's) is the same bytes: put keeps the one stored.
        await objects.put(sha256, content);
        return sha256;
      }
      const file = pathOf(sha256);
      await mkdir(path.dirname(file), { recursive: true });
      const temporary = `${file}.${randomBytes(6).toString("hex")}.tmp`;
      await writeFile(temporary, content);
      await rename(temporary, file);
      return sha256;
    },
    /** The image, or null when it is gone. */
    async read(sha256: string): Promise<Buffer | null> {
      if (!objects || (await objects.size(checked(sha256))) === null) return readLocal(sha256);
      const chunks: Buffer[] = [];
      for await (const chunk of objects.read(sha256)) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    },
    async remove(sha256: string): Promise<void> {
      if (objects) await objects.remove(checked(sha256));
      await rm(pathOf(sha256), { force: true });
    },
  };
}

export type AvatarStore = ReturnType<typeof createAvatarStore>;
