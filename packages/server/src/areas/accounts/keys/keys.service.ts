import { randomUUID } from "node:crypto";
import type { AccountKey } from "@hub/api";
import { principalFor, type SshKeyCredential } from "../../../auth/credential.js";
import type { Db } from "../../../db/database.js";
import type { AccountKeyRow } from "../../../db/schema.js";
import { badRequest, conflict, notFound } from "../../../errors.js";
import { usersRepository } from "../account/users.repository.js";
import { keysRepository } from "./keys.repository.js";
import { parsePublicKey } from "../../../auth/public-keys.js";

function toAccountKey(row: AccountKeyRow): AccountKey {
  return {
    id: row.id,
    title: row.title,
    type: row.type === "gpg" ? "gpg" : "ssh",
    algorithm: row.algorithm,
    fingerprint: row.fingerprint,
    key: row.public_key,
    created_at: row.created_at,
    last_used_at: row.last_used_at,
  };
}

/** The public SSH and GPG keys of accounts: what git over SSH and signature verification trust. */
export function createKeysService({ db, clock }: { db: Db; clock: () => Date }) {
  return {
    async list(userId: string): Promise<AccountKey[]> {
      return (await keysRepository.listForUser(db, userId)).map(toAccountKey);
    },

    /** Registers a public key; a GPG key must name the account's verified email. */
    async add(userId: string, input: { key: string; title?: string }): Promise<AccountKey> {
      const parsed = await parsePublicKey(input.key);
      if (parsed.type === "gpg") {
        const user = await usersRepository.findById(db, userId);
        if (!user || user.email_verified !== 1 || !parsed.emails.includes(user.email)) {
          throw badRequest(
            "key_email_mismatch",
            "A GPG key must carry your account's verified email address; add that address to the key (gpg --edit-key, adduid) or verify your email first.",
            "key",
          );
        }
      }
      if (await keysRepository.findByFingerprint(db, parsed.fingerprint)) {
        throw conflict(
          "key_exists",
          `The key ${parsed.fingerprint} is already registered; each key belongs to one account.`,
          "key",
        );
      }
      const comment =
        parsed.type === "ssh" ? input.key.trim().split(/\s+/).slice(2).join(" ") : parsed.emails[0];
      const row: AccountKeyRow = {
        id: randomUUID(),
        user_id: userId,
        title: (input.title ?? comment ?? "").slice(0, 200) || parsed.fingerprint,
        type: parsed.type,
        algorithm: parsed.algorithm,
        fingerprint: parsed.fingerprint,
        public_key: parsed.publicKey,
        created_at: clock().toISOString(),
        last_used_at: null,
      };
      try {
        await db.transaction().execute(async (tx) => {
          await keysRepository.insert(tx, row);
          if (parsed.keyIds.length > 0) await keysRepository.insertGpgKeyIds(tx, row.id, parsed.keyIds);
        });
      } catch (err) {
        if (await keysRepository.findByFingerprint(db, parsed.fingerprint)) {
          throw conflict(
            "key_exists",
            `The key ${parsed.fingerprint} is already registered; each key belongs to one account.`,
            "key",
          );
        }
        throw err;
      }
      return toAccountKey(row);
    },

    /**
     * The account an SSH key stands for, looked up afresh each time (a removed key
     * stops working at once); by fingerprint when a client offers a key, by id when a
     * session it opened runs a command.
     */
    async sshPrincipal(by: { fingerprint: string } | { id: string }) {
      const row = await keysRepository.findSshKey(db, by);
      if (!row) return null;
      const credential: SshKeyCredential = { type: "ssh_key", keyId: row.id, reauthenticatedAt: null };
      return { publicKey: row.public_key, principal: principalFor(row, credential) };
    },

    /** Notes that a key was used. */
    touch: (keyId: string) => keysRepository.touch(db, keyId, clock().toISOString()),

    /** Removes a key; SSH stops accepting it on the next connection. */
    async remove(userId: string, keyId: string): Promise<void> {
      if (!(await keysRepository.delete(db, userId, keyId))) {
        throw notFound("No key with that id belongs to your account; list them with GET /api/me/keys.");
      }
    },
  };
}

export type KeysService = ReturnType<typeof createKeysService>;
