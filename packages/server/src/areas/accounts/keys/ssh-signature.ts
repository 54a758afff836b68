import { createHash, createPublicKey, verify, type JsonWebKey, type KeyObject } from "node:crypto";
import { sshFields, sshFingerprint } from "../../../auth/public-keys.js";

/**
 * An SSH signature as `ssh-keygen -Y sign` writes it (git's `gpg.format=ssh`).
 * https://github.com/openssh/openssh-portable/blob/master/PROTOCOL.sshsig
 */
export interface SshSignature {
  /** The signer's public key blob, and its fingerprint to look it up by. */
  publicKey: Buffer;
  fingerprint: string;
  namespace: string;
  reserved: Buffer;
  hashAlgorithm: string;
  /** The signature blob: its format name and the signature bytes. */
  signature: Buffer;
}

const MAGIC = Buffer.from("SSHSIG");
const ARMOR = /^-----BEGIN SSH SIGNATURE-----\r?\n([A-Za-z0-9+/=\r\n]+)-----END SSH SIGNATURE-----\s*$/;
const CURVES: Record<string, { crv: string; hash: string; size: number }> = {
  "ecdsa-sha2-nistp256": { crv: "P-256", hash: "sha256", size: 32 },
  "ecdsa-sha2-nistp384": { crv: "P-384", hash: "sha384", size: 48 },
  "ecdsa-sha2-nistp521": { crv: "P-521", hash: "sha512", size: 66 },
};
const RSA_HASHES: Record<string, string> = { "rsa-sha2-256": "sha256", "rsa-sha2-512": "sha512" };

/** Reads an armored SSH signature; null when it is not one. */
export function readSshSignature(armored: string): SshSignature | null {
  const body = ARMOR.exec(armored)?.[1];
  if (!body) return null;
  const blob = Buffer.from(body.replace(/\s+/g, ""), "base64");
  if (blob.length < 10 || !blob.subarray(0, 6).equals(MAGIC) || blob.readUInt32BE(6) !== 1) return null;
  const fields = sshFields(blob.subarray(10)) ?? [];
  const [publicKey, namespace, reserved, hashAlgorithm, signature] = fields;
  if (fields.length !== 5 || !publicKey || !namespace || !reserved || !hashAlgorithm || !signature)
    return null;
  return {
    publicKey,
    fingerprint: sshFingerprint(publicKey),
    namespace: namespace.toString("latin1"),
    reserved,
    hashAlgorithm: hashAlgorithm.toString("latin1"),
    signature,
  };
}

const sshString = (value: Buffer | string) => {
  const bytes = Buffer.from(value);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
};

/** An mpint without its sign byte, left-padded to `size` bytes. */
const unsigned = (mpint: Buffer, size?: number) => {
  let start = 0;
  while (start < mpint.length - 1 && mpint[start] === 0) start++;
  const bytes = mpint.subarray(start);
  return size === undefined || bytes.length >= size
    ? bytes
    : Buffer.concat([Buffer.alloc(size - bytes.length), bytes]);
};

/** A public key blob of a plain (not security-key) type as a node:crypto key; null for other types. */
function keyObject(fields: Buffer[]): KeyObject | null {
  const [type = Buffer.alloc(0), a = Buffer.alloc(0), b = Buffer.alloc(0)] = fields;
  const name = type.toString("latin1");
  let jwk: JsonWebKey;
  if (name === "ssh-ed25519") jwk = { kty: "OKP", crv: "Ed25519", x: a.toString("base64url") };
  else if (name === "ssh-rsa")
    jwk = { kty: "RSA", e: unsigned(a).toString("base64url"), n: unsigned(b).toString("base64url") };
  else {
    const curve = CURVES[name];
    // b is the uncompressed point: 0x04, then x and y.
    if (!curve || b[0] !== 4 || b.length !== 1 + 2 * curve.size) return null;
    jwk = {
      kty: "EC",
      crv: curve.crv,
      x: b.subarray(1, 1 + curve.size).toString("base64url"),
      y: b.subarray(1 + curve.size).toString("base64url"),
    };
  }
  return createPublicKey({ key: jwk, format: "jwk" });
}

/**
 * Checks an SSH signature over a commit payload, as `ssh-keygen -Y verify -n git`
 * would: the namespace must be `git`, and the signature must be by the key the
 * signature names. "unsupported" for security-key (`sk-`) signatures, which
 * the hub cannot check yet.
 */
export function verifySshSignature(sig: SshSignature, payload: Buffer): "valid" | "invalid" | "unsupported" {
  if (sig.namespace !== "git" || (sig.hashAlgorithm !== "sha256" && sig.hashAlgorithm !== "sha512"))
    return "invalid";
  const keyFields = sshFields(sig.publicKey);
  const [format, bytes] = sshFields(sig.signature) ?? [];
  if (!keyFields || !format || !bytes) return "invalid";
  const keyType = keyFields[0]?.toString("latin1") ?? "";
  if (keyType.startsWith("sk-")) return "unsupported";
  const signed = Buffer.concat([
    MAGIC,
    sshString(sig.namespace),
    sshString(sig.reserved),
    sshString(sig.hashAlgorithm),
    sshString(createHash(sig.hashAlgorithm).update(payload).digest()),
  ]);
  const formatName = format.toString("latin1");
  try {
    const key = keyObject(keyFields);
    if (!key) return "invalid";
    if (keyType === "ssh-ed25519")
      return formatName === keyType && verify(null, signed, key, bytes) ? "valid" : "invalid";
    if (keyType === "ssh-rsa") {
      // SSHSIG never accepts SHA-1 ("ssh-rsa") signatures.
      const hash = RSA_HASHES[formatName];
      return hash && verify(hash, signed, key, bytes) ? "valid" : "invalid";
    }
    const curve = CURVES[keyType];
    const [r, s] = sshFields(bytes) ?? [];
    if (!curve || formatName !== keyType || !r || !s) return "invalid";
    const raw = Buffer.concat([unsigned(r, curve.size), unsigned(s, curve.size)]);
    return verify(curve.hash, signed, { key, dsaEncoding: "ieee-p1363" }, raw) ? "valid" : "invalid";
  } catch {
    return "invalid";
  }
}
