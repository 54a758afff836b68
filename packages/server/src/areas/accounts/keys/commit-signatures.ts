import type { CommitSignature } from "@hub/api";
import { createMessage, readKey, readSignature, verify, type Key, type Signature } from "openpgp";
import type { Db } from "../../../db/database.js";
import type { SignedCommit } from "../../../git/commit-object.js";
import { keysRepository } from "./keys.repository.js";
import { keyIdHex } from "../../../auth/public-keys.js";
import { readSshSignature, verifySshSignature } from "./ssh-signature.js";

type SigningKey = NonNullable<Awaited<ReturnType<typeof keysRepository.findSshSigningKey>>>;
type Check =
  | { result: "valid"; key: SigningKey }
  | { result: "bad_signature" | "unknown_key" | "unsupported_signature"; key?: SigningKey };

/** Loads each value once; nothing outlives the verifier, so a removed key counts on the next request. */
function memo<T>(load: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const loaded = new Map<string, Promise<T>>();
  return (key) => {
    let value = loaded.get(key);
    if (!value) loaded.set(key, (value = load(key)));
    return value;
  };
}

/** Whether a signature packet validates over the payload with the key (its primary key or a subkey). */
async function validOpenPgp(signature: Signature, key: Key, payload: Buffer): Promise<boolean> {
  try {
    const message = await createMessage({ binary: new Uint8Array(payload) });
    const { signatures } = await verify({ message, signature, verificationKeys: key, format: "binary" });
    const results = await Promise.allSettled(signatures.map((s) => s.verified));
    return results.some((result) => result.status === "fulfilled");
  } catch {
    return false;
  }
}

/**
 * The signature state of commits (https://git-scm.com/docs/signature-format).
 * OpenPGP and SSH signatures are checked against the accounts' registered keys;
 * a valid one is `verified` only when the commit's author email (the author's,
 * as the Hub spec says, where most forges take the committer's) is the
 * verified email of the key's account.
 */
export function createCommitSignatures({ db }: { db: Db }) {
  return {
    /**
     * A function that checks one commit's signature. Keys it looks up are
     * remembered for as long as the function is kept: one page, one request.
     */
    verifier() {
      const sshKey = memo((fingerprint) => keysRepository.findSshSigningKey(db, fingerprint));
      const gpgKeys = memo((ids) => keysRepository.findGpgSigningKeys(db, ids.split(",")));
      const openpgpKey = memo((armored) => readKey({ armoredKey: armored }));

      async function checkSsh(armored: string, payload: Buffer): Promise<Check> {
        const signature = readSshSignature(armored);
        if (!signature) return { result: "bad_signature" };
        const key = await sshKey(signature.fingerprint);
        if (!key) return { result: "unknown_key" };
        const outcome = verifySshSignature(signature, payload);
        if (outcome === "valid") return { result: "valid", key };
        return { result: outcome === "invalid" ? "bad_signature" : "unsupported_signature", key };
      }

      async function checkOpenPgp(armored: string, payload: Buffer): Promise<Check> {
        let signature: Signature;
        try {
          signature = await readSignature({ armoredSignature: armored });
        } catch {
          return { result: "bad_signature" };
        }
        const ids = [...new Set(signature.getSigningKeyIDs().map(keyIdHex))].sort();
        const candidates = ids.length > 0 ? await gpgKeys(ids.join(",")) : [];
        for (const key of candidates) {
          if (await validOpenPgp(signature, await openpgpKey(key.public_key), payload))
            return { result: "valid", key };
        }
        const [first] = candidates;
        return first ? { result: "bad_signature", key: first } : { result: "unknown_key" };
      }

      /** X.509 (gpgsm) signatures are the kind git makes that the hub does not check. */
      function checkSignature(armored: string, payload: Buffer): Promise<Check> {
        if (armored.startsWith("-----BEGIN SSH SIGNATURE-----")) return checkSsh(armored, payload);
        if (armored.startsWith("-----BEGIN PGP SIGNATURE-----")) return checkOpenPgp(armored, payload);
        return Promise.resolve({ result: "unsupported_signature" });
      }

      return async ({ signature, payload, authorEmail }: SignedCommit): Promise<CommitSignature> => {
        if (signature === null) return { state: "unsigned" };
        const check = await checkSignature(signature, payload);
        const key = check.key && {
          key: {
            id: check.key.id,
            type: check.key.type === "gpg" ? ("gpg" as const) : ("ssh" as const),
            fingerprint: check.key.fingerprint,
            user: check.key.handle,
          },
        };
        if (check.result !== "valid") return { state: "unverified", reason: check.result, ...key };
        const owner = check.key;
        return owner.email_verified === 1 && owner.email.toLowerCase() === authorEmail.toLowerCase()
          ? { state: "verified", ...key }
          : { state: "unverified", reason: "email_mismatch", ...key };
      };
    },
  };
}

export type CommitSignatures = ReturnType<typeof createCommitSignatures>;
