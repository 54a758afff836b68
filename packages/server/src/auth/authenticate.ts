import type { IncomingHttpHeaders } from "node:http";
import { isSshLfsToken, verifySshLfsToken } from "./ssh-lfs-token.js";
import { invalidCredentials } from "../errors.js";
import type { Principal } from "./credential.js";

/** The cookie that carries a browser session's secret. */
export const SESSION_COOKIE = "hub_session";

/** Resolves a presented secret, or the id a signed URL names, to its account and credential; null when unknown or expired. */
interface CredentialLookup {
  (secretOrId: string): Promise<Principal | null>;
}

/**
 * Where credentials are looked up: access tokens, browser sessions, SSH keys
 * (for LFS over SSH). The accounts areas implement these lookups; auth only
 * names what it needs of them.
 */
export interface CredentialSources {
  tokens: { resolve: CredentialLookup; resolveById: CredentialLookup };
  auth: { resolveSession: CredentialLookup; resolveSessionById: CredentialLookup };
  keys: { sshPrincipal(by: { id: string }): Promise<{ principal: Principal } | null> };
  serverKey: Buffer;
}

async function sshKeyPrincipal(
  keys: CredentialSources["keys"],
  keyId: string | null,
): Promise<Principal | null> {
  return keyId ? ((await keys.sshPrincipal({ id: keyId }))?.principal ?? null) : null;
}

/** The secret in `Authorization: Bearer <token>`, or the password of `Basic user:token` (what git sends). */
function presentedToken(authorization: string): string | null {
  const [scheme, value] = authorization.trim().split(/\s+/, 2);
  if (!value) return null;
  if (scheme?.toLowerCase() === "bearer") return value;
  if (scheme?.toLowerCase() === "basic") {
    const decoded = Buffer.from(value, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    return colon >= 0 ? decoded.slice(colon + 1) : null;
  }
  return null;
}

/** The value of one cookie in a Cookie header, or null when it is absent or empty. */
export function cookieValue(cookieHeader: string | undefined, cookie: string): string | null {
  for (const part of (cookieHeader ?? "").split(";")) {
    const [name, ...rest] = part.trim().split("=");
    if (name === cookie) return rest.join("=") || null;
  }
  return null;
}

/**
 * Resolves who is calling from the request headers: a token in Authorization,
 * else a session cookie, else nobody. A credential that is presented but
 * unknown, revoked or expired is a 401, never silently anonymous.
 */
export function createAuthenticator({ tokens, auth, keys, serverKey }: CredentialSources) {
  return async function authenticate(headers: IncomingHttpHeaders): Promise<Principal | null> {
    if (headers.authorization !== undefined) {
      const secret = presentedToken(headers.authorization);
      const principal = !secret
        ? null
        : isSshLfsToken(secret)
          ? await sshKeyPrincipal(keys, verifySshLfsToken(serverKey, secret, Math.floor(Date.now() / 1000)))
          : await tokens.resolve(secret);
      if (!principal) {
        throw invalidCredentials(
          "invalid_token",
          "The token is invalid, revoked or expired; create a new one and send it as Authorization: Bearer <token>.",
        );
      }
      return principal;
    }
    const secret = cookieValue(headers.cookie, SESSION_COOKIE);
    if (secret === null) return null;
    const principal = await auth.resolveSession(secret);
    if (!principal) throw invalidCredentials("invalid_session", "Your session has ended; sign in again.");
    return principal;
  };
}

export type Authenticate = ReturnType<typeof createAuthenticator>;

/** Names the credential of a principal without its secret, for URLs signed on its behalf. */
export function credentialKey(principal: Principal | null): string {
  if (!principal) return "anonymous";
  const { credential } = principal;
  if (credential.type === "access_token") return `token:${credential.tokenId}`;
  if (credential.type === "session") return `session:${credential.sessionId}`;
  return `ssh:${credential.keyId}`;
}

/**
 * The principal a credential key names, resolved afresh so a revoked token or
 * ended session stops a signed URL too. `undefined` when the credential is gone.
 */
export function createCredentialResolver({ tokens, auth, keys }: Omit<CredentialSources, "serverKey">) {
  return async function resolveCredentialKey(key: string): Promise<Principal | null | undefined> {
    if (key === "anonymous") return null;
    const [kind, id = ""] = key.split(":", 2);
    const principal =
      kind === "token"
        ? await tokens.resolveById(id)
        : kind === "session"
          ? await auth.resolveSessionById(id)
          : kind === "ssh"
            ? await sshKeyPrincipal(keys, id)
            : null;
    return principal ?? undefined;
  };
}

export type ResolveCredentialKey = ReturnType<typeof createCredentialResolver>;
