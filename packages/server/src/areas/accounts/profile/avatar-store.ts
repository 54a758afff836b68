import { createHash, randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { NamespacedObjects } from "../../../git/lfs/object-store.js";

/**
 * Avatar images, stored once by content: two accounts with the same image
 * share one, and its name (its SHA-256) is its ETag. On local disk under
 * `<dataDir>/avatars/<sha256[0:2]>/<sha256>`; with an S3-compatible object
 * store, in its `avatars` namespace (`PREFIX/lfs/avatars/…`, docs/storage.md),
 * so every process of a deployment reads them there. An avatar stored in the
 * data dir before the hub moved to the store is still read from the data dir.
 */
export function createAvatarStore(dataDir: string, objects: NamespacedObjects | null = null) {
  const root = path.join(dataDir, "avatars");
  const checked = (sha256: string) => {
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error("An avatar is named by its SHA-256.");
    return sha256;
  };
  const pathOf = (sha256: string) => path.join(root, sha256.slice(0, 2), checked(sha256));

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
