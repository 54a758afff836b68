import { createHmac, timingSafeEqual } from "node:crypto";

/** Marks the tokens `git-lfs-authenticate` hands out, so they are never looked up as access tokens. */
const PREFIX = "hubssh1.";

function mac(key: Buffer, payload: string): Buffer {
  return createHmac("sha256", key).update(`ssh-lfs\n${payload}`).digest();
}

/**
 * A short-lived credential for Git LFS over SSH: `git-lfs-authenticate` gives it
 * to a client whose SSH key just authenticated, and the LFS API accepts it as
 * that key until it expires. It names the key, so removing the key ends it.
 */
export function mintSshLfsToken(key: Buffer, keyId: string, expires: number): string {
  const payload = Buffer.from(JSON.stringify({ k: keyId, e: expires })).toString("base64url");
  return `${PREFIX}${payload}.${mac(key, payload).toString("base64url")}`;
}

/** The key id a token stands for, or null when it is not one of ours, is forged, or has expired. */
export function verifySshLfsToken(key: Buffer, token: string, nowSeconds: number): string | null {
  if (!token.startsWith(PREFIX)) return null;
  const [payload = "", signature = ""] = token.slice(PREFIX.length).split(".");
  const presented = Buffer.from(signature, "base64url");
  const expected = mac(key, payload);
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return null;
  try {
    const { k, e } = JSON.parse(Buffer.from(payload, "base64url").toString()) as { k?: unknown; e?: unknown };
    return typeof k === "string" && typeof e === "number" && e >= nowSeconds ? k : null;
  } catch {
    return null;
  }
}

export const isSshLfsToken = (token: string) => token.startsWith(PREFIX);
