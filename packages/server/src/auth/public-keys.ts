import { hash } from "node:crypto";
import { readKey, type Key, type KeyID } from "openpgp";
import { badRequest } from "../errors.js";

/** A public key as the hub stores it: its kind, algorithm, fingerprint and canonical text. */
export interface ParsedPublicKey {
  type: "ssh" | "gpg";
  algorithm: string;
  fingerprint: string;
  publicKey: string;
  /** For GPG keys, the email addresses of their user ids. */
  emails: string[];
  /** For GPG keys, the ids of the primary key and its subkeys. */
  keyIds: string[];
}

const MIN_RSA_BITS = 2048;
const SSH_ALGORITHMS = new Set([
  "ssh-ed25519",
  "ssh-rsa",
  "ecdsa-sha2-nistp256",
  "ecdsa-sha2-nistp384",
  "ecdsa-sha2-nistp521",
  "sk-ssh-ed25519@openssh.com",
  "sk-ecdsa-sha2-nistp256@openssh.com",
]);

const refuse = (message: string) => badRequest("invalid_key", message, "key");

/**
 * Reads the length-prefixed strings an SSH wire-format blob is made of (RFC 4253 §5, §6.6);
 * null when the blob is truncated.
 */
export function sshFields(blob: Buffer): Buffer[] | null {
  const fields: Buffer[] = [];
  let offset = 0;
  while (offset < blob.length) {
    if (offset + 4 > blob.length) return null;
    const length = blob.readUInt32BE(offset);
    offset += 4;
    if (offset + length > blob.length) return null;
    fields.push(blob.subarray(offset, offset + length));
    offset += length;
  }
  return fields;
}

/** An SSH key's fingerprint as `ssh-keygen -l` prints it: `SHA256:` and the unpadded base64 digest of its blob. */
export function sshFingerprint(blob: Buffer): string {
  return `SHA256:${hash("sha256", blob, "base64").replace(/=+$/, "")}`;
}

/** The bit length of an SSH mpint (a big-endian two's-complement integer). */
function bitLength(mpint: Buffer): number {
  let start = 0;
  while (start < mpint.length && mpint[start] === 0) start++;
  if (start === mpint.length) return 0;
  return (mpint.length - start - 1) * 8 + (mpint[start] ?? 0).toString(2).length;
}

function parseSshKey(text: string): ParsedPublicKey {
  const [algorithm = "", encoded = ""] = text.trim().split(/\s+/);
  if (algorithm === "ssh-dss")
    throw refuse("DSA keys are no longer safe; generate an ed25519 key with ssh-keygen -t ed25519.");
  if (algorithm.includes("-cert-v01@openssh.com"))
    throw refuse("SSH certificates are not accepted; add the plain public key.");
  if (!SSH_ALGORITHMS.has(algorithm)) {
    throw refuse(
      `"${algorithm.slice(0, 40)}" is not a supported SSH key type; use ed25519, ECDSA or RSA (2048 bits or more).`,
    );
  }
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded))
    throw refuse("The key's base64 part is damaged; paste the whole line of the .pub file.");
  const blob = Buffer.from(encoded, "base64");
  const fields = sshFields(blob);
  if (!fields) throw refuse("The key is truncated; paste the whole line of the .pub file.");
  if (fields[0]?.toString("latin1") !== algorithm)
    throw refuse("The key's type does not match its content; paste the whole line of the .pub file.");
  if (algorithm === "ssh-ed25519" && (fields.length !== 2 || fields[1]?.length !== 32)) {
    throw refuse("The ed25519 key is malformed; paste the whole line of the .pub file.");
  }
  if (algorithm === "ssh-rsa") {
    const bits = fields.length === 3 ? bitLength(fields[2] ?? Buffer.alloc(0)) : 0;
    if (bits < MIN_RSA_BITS)
      throw refuse(
        `RSA keys need at least ${MIN_RSA_BITS} bits (this one has ${bits}); generate one with ssh-keygen -t ed25519.`,
      );
  }
  if (algorithm.startsWith("ecdsa-") && fields.length !== 3)
    throw refuse("The ECDSA key is malformed; paste the whole line of the .pub file.");
  return {
    type: "ssh",
    algorithm,
    fingerprint: sshFingerprint(blob),
    publicKey: `${algorithm} ${encoded}`,
    emails: [],
    keyIds: [],
  };
}

/** An OpenPGP key id as the hub stores it: 16 upper-case hex digits. */
export const keyIdHex = (id: KeyID) => id.toHex().toUpperCase();

/** The ids of an OpenPGP key's primary key and subkeys, by which signatures name their signer. */
export function gpgKeyIds(key: Key): string[] {
  return [...new Set(key.getKeyIDs().map(keyIdHex))];
}

async function parseGpgKey(text: string): Promise<ParsedPublicKey> {
  let key;
  try {
    key = await readKey({ armoredKey: text });
  } catch {
    throw refuse("The OpenPGP key could not be read; export it with gpg --armor --export <your email>.");
  }
  if (key.isPrivate())
    throw refuse("That is a private key: never share it. Export the public key with gpg --armor --export.");
  const emails = key.users
    .map((user) => user.userID?.email?.toLowerCase() ?? "")
    .filter((email) => email.length > 0);
  return {
    type: "gpg",
    algorithm: String(key.getAlgorithmInfo().algorithm),
    fingerprint: key.getFingerprint().toUpperCase(),
    publicKey: key.armor(),
    emails,
    keyIds: gpgKeyIds(key),
  };
}

/**
 * Reads a public key pasted by a user: an OpenSSH public key line or an
 * armored OpenPGP public key. Anything holding private-key material is refused
 * before it is parsed any further, and is never stored or logged.
 */
export async function parsePublicKey(text: string): Promise<ParsedPublicKey> {
  if (/PRIVATE KEY/.test(text) || /-----BEGIN PGP PRIVATE KEY BLOCK-----/.test(text)) {
    throw refuse(
      "That is a private key: never share it. Add the public key (the .pub file, or gpg --armor --export).",
    );
  }
  if (text.includes("-----BEGIN PGP PUBLIC KEY BLOCK-----")) return parseGpgKey(text);
  if (text.trim().split("\n").length > 1) throw refuse("Add one SSH public key, on one line.");
  return parseSshKey(text);
}
