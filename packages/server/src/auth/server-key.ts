import { randomBytes } from "node:crypto";
import { link, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
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
  const existing = await readFile(file, "utf8").catch(() => "");
  const key = Buffer.from(existing.trim(), "hex");
  if (key.length >= KEY_BYTES) return key;
  // Written whole beside the file and linked into place: a crash never leaves an empty or partial key,
  // and when several processes start at once, the first link wins and everyone reads that one.
  const temporary = `${file}.${randomBytes(6).toString("hex")}`;
  await writeFile(temporary, randomBytes(KEY_BYTES).toString("hex"), { mode: 0o600 });
  try {
    if (existing) await rename(temporary, file);
    else
      await link(temporary, file).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== "EEXIST") throw err;
      });
  } finally {
    await rm(temporary, { force: true });
  }
  const stored = Buffer.from((await readFile(file, "utf8")).trim(), "hex");
  if (stored.length < KEY_BYTES)
    throw new Error(`${file} does not hold a usable key; remove it and restart.`);
  return stored;
}
