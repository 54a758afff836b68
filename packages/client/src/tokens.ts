import type {
  CreateTokenRequest,
  CreatedToken,
  ReauthenticateResponse,
  TokenList,
  TokenMetadata,
} from "@hub/api";
import { send, sendJson, type Connection } from "./connection.js";

export interface ReauthenticateParams {
  connection: Connection;
  /** The account password. */
  password: string;
  /**
   * When the account has two-factor authentication on: the code the
   * authenticator app shows, or a recovery code. Without it such an account
   * gets an AuthenticationError with code `mfa_required`.
   */
  otp?: string;
  signal?: AbortSignal;
}

/**
 * `POST /api/auth/reauthenticate`: proves the person is present, which listing
 * and creating tokens require (spec, Authentication 3). The credential in use
 * counts as recently reauthenticated until the returned time.
 */
export function reauthenticate({ connection, password, otp, signal }: ReauthenticateParams) {
  return sendJson<ReauthenticateResponse>(connection, {
    method: "POST",
    path: "/api/auth/reauthenticate",
    json: otp === undefined ? { password } : { password, otp },
    signal,
  });
}

export interface ListTokensParams {
  connection: Connection;
  signal?: AbortSignal;
}

/**
 * `GET /api/me/tokens`: the account's tokens, never with their secrets. Throws
 * an AuthenticationError with code `reauthentication_required` until
 * {@link reauthenticate} has been called recently.
 */
export async function listTokens({ connection, signal }: ListTokensParams): Promise<TokenMetadata[]> {
  return (await sendJson<TokenList>(connection, { path: "/api/me/tokens", signal })).tokens;
}

export interface CreateTokenParams {
  connection: Connection;
  /** The request as the spec defines it: a name, an expiry, and exactly one of `role` or `scopes`. */
  token: CreateTokenRequest;
  signal?: AbortSignal;
}

/** `POST /api/me/tokens`: mints a token; the answer holds its secret, the only time it is shown. Needs reauthentication. */
export function createToken({ connection, token, signal }: CreateTokenParams): Promise<CreatedToken> {
  return sendJson<CreatedToken>(connection, { method: "POST", path: "/api/me/tokens", json: token, signal });
}

export interface RevokeTokenParams {
  connection: Connection;
  tokenId: string;
  signal?: AbortSignal;
}

/** `DELETE /api/me/tokens/{tokenId}`: revokes a token; it stops working at once. */
export async function revokeToken({ connection, tokenId, signal }: RevokeTokenParams): Promise<void> {
  await send(connection, {
    method: "DELETE",
    path: `/api/me/tokens/${encodeURIComponent(tokenId)}`,
    signal,
  });
}
