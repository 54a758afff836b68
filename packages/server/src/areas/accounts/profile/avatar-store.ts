import { createHash, randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * Avatar images on local disk, stored once by content under
 * `<dataDir>/avatars/<sha256[0:2]>/<sha256>`: two accounts with the same image
 * share a file, and a file's name is its ETag.
 */
export function createAvatarStore(dataDir: string) {
  const root = path.join(dataDir, "avatars");
  const pathOf = (sha256: string) => {
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error("An avatar is named by its SHA-256.");
    return path.join(root, sha256.slice(0, 2), sha256);
  };
  return {
    /** Stores the image (written to a temporary name, then renamed, so a reader never sees half of it). */
    async put(content: Buffer): Promise<string> {
      const sha256 = createHash("sha256").update(content).digest("hex");
      const file = pathOf(sha256);
      await mkdir(path.dirname(file), { recursive: true });
      const temporary = `${file}.${randomBytes(6).toString("hex")}.tmp`;
      await writeFile(temporary, content);
      await rename(temporary, file);
      return sha256;
    },
    /** The image, or null when the file is gone. */
    async read(sha256: string): Promise<Buffer | null> {
      try {
        return await readFile(pathOf(sha256));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
        throw err;
      }
    },
    remove: (sha256: string) => rm(pathOf(sha256), { force: true }),
  };
}

export type AvatarStore = ReturnType<typeof createAvatarStore>;
