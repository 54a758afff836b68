import type { AccountKey } from "@hub/api";
import { send, sendJson, type Connection } from "./connection.js";

export interface ListKeysParams {
  connection: Connection;
  signal?: AbortSignal;
}

/** `GET /api/me/keys`: the account's public SSH and GPG keys. */
export function listKeys({ connection, signal }: ListKeysParams): Promise<AccountKey[]> {
  return sendJson<AccountKey[]>(connection, { path: "/api/me/keys", signal });
}

export interface AddKeyParams {
  connection: Connection;
  /** An OpenSSH public key line or an armored OpenPGP public key; private keys are refused. */
  key: string;
  title?: string;
  signal?: AbortSignal;
}

/** `POST /api/me/keys`: registers a public key for git over SSH and commit signature checks. */
export function addKey({ connection, key, title, signal }: AddKeyParams): Promise<AccountKey> {
  return sendJson<AccountKey>(connection, {
    method: "POST",
    path: "/api/me/keys",
    json: title === undefined ? { key } : { key, title },
    signal,
  });
}

export interface RemoveKeyParams {
  connection: Connection;
  keyId: string;
  signal?: AbortSignal;
}

/** `DELETE /api/me/keys/{keyId}`: removes a key; SSH connections with it stop at once. */
export async function removeKey({ connection, keyId, signal }: RemoveKeyParams): Promise<void> {
  await send(connection, { method: "DELETE", path: `/api/me/keys/${encodeURIComponent(keyId)}`, signal });
}
