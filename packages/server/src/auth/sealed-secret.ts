import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

const VERSION = "v1";

/**
 * Encrypts secrets the hub must use again later (provider API keys) with
 * AES-256-GCM under a key derived from the server key for one purpose, so a
 * database dump alone reveals nothing and a sealed value cannot be moved to
 * another purpose.
 */
export function createSealer(serverKey: Buffer, purpose: string) {
  const key = Buffer.from(hkdfSync("sha256", serverKey, Buffer.alloc(0), `hub:${purpose}`, 32));
  return {
    seal(plaintext: string): string {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const sealed = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString("base64")}`;
    },
    open(value: string): string {
      const [version, payload] = value.split(":", 2);
      if (version !== VERSION || !payload) throw new Error("Unknown sealed secret format.");
      const raw = Buffer.from(payload, "base64");
      const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
    },
  };
}

export type Sealer = ReturnType<typeof createSealer>;
