import type { Scope, TokenRole } from "@hub/api";

/** An access token, resolved and checked for expiry, as the request carries it. */
export interface TokenCredential {
  type: "access_token";
  tokenId: string;
  name: string;
  role: TokenRole | null;
  /** The scopes of a fine-grained token; null for a role token. */
  scopes: Scope[] | null;
  organizationId: string | null;
  repositories: string[] | null;
  createdAt: string;
  reauthenticatedAt: string | null;
}

/** A browser session started by `POST /api/auth/login`. */
export interface SessionCredential {
  type: "session";
  sessionId: string;
  reauthenticatedAt: string | null;
}

/** A registered SSH public key that signed the SSH connection; it acts as the person, like a session. */
export interface SshKeyCredential {
  type: "ssh_key";
  keyId: string;
  reauthenticatedAt: null;
}

export type Credential = TokenCredential | SessionCredential | SshKeyCredential;

/** Who is calling: the account and the credential it presented. */
export interface Principal {
  userId: string;
  handle: string;
  fullname: string;
  isAdmin: boolean;
  credential: Credential;
}

/** The account columns every credential lookup joins in. */
export interface AccountColumns {
  user_id: string;
  handle: string;
  fullname: string;
  is_admin: number;
}

/** Who is calling, from the account row a credential lookup returned. */
export function principalFor(account: AccountColumns, credential: Credential): Principal {
  return {
    userId: account.user_id,
    handle: account.handle,
    fullname: account.fullname,
    isAdmin: account.is_admin === 1,
    credential,
  };
}
