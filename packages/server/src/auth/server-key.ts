import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";

const KEY_BYTES = 32;

/**
 * The hub's own secret, for signing short-lived transfer URLs: `HUB_SECRET_KEY`
 * when set (processes on different machines must share it), otherwise a random
 * key made on first start and kept in the data dir, readable by the hub alone.
 */
export async function loadServerKey(dataDir: string, configured: string | null): Promise<Buffer> {
  if (configured) return Buffer.from(configured, "utf8");
  const file = path.join(dataDir, "secrets", "server.key");
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  try {
    await writeFile(file, randomBytes(KEY_BYTES).toString("hex"), { flag: "wx", mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  return Buffer.from((await readFile(file, "utf8")).trim(), "hex");
}
