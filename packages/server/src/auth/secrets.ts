import { hash, randomBytes, timingSafeEqual } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/**
 * A random string of `length` characters from `alphabet`, each equally likely:
 * bytes past the last whole multiple of the alphabet's size are rejected.
 */
export function randomString(alphabet: string, length: number): string {
  const limit = 256 - (256 % alphabet.length);
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < limit && out.length < length) out += alphabet[byte % alphabet.length];
    }
  }
  return out;
}

/** A random base62 string; each character carries 5.95 bits, so 34 characters carry 202 bits. */
export function randomBase62(length: number): string {
  return randomString(BASE62, length);
}

/**
 * Secrets are high-entropy, so one SHA-256 is the right hash: lookups stay indexable. Every authenticated
 * request hashes its token, so this is the one-shot `hash`, which keeps the digest's algorithm looked up
 * (a `createHash` looks it up in OpenSSL each time: a third of a microsecond warm, tens after an idle spell).
 */
export function hashSecret(secret: string): string {
  return hash("sha256", secret, "hex");
}

/** Compares two hex digests without leaking where they differ. */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, "hex");
  const right = Buffer.from(b, "hex");
  return left.length === right.length && timingSafeEqual(left, right);
}
