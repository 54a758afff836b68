import { SCOPES, type Scope, type TokenRole } from "@hub/api";

/** Scopes a role token carries; read tokens can read and call models, write tokens do the rest. */
export const ROLE_SCOPES: Readonly<Record<TokenRole, readonly Scope[]>> = {
  read: ["repo:read", "inference:run"],
  write: SCOPES,
  admin: SCOPES,
};

const READ_SCOPES = new Set<Scope>(ROLE_SCOPES.read);

/**
 * The role shown for a fine-grained token, which the spec requires on every token:
 * `read` when every scope is a read scope, `write` otherwise.
 */
export function roleOfScopes(scopes: readonly Scope[]): TokenRole {
  return scopes.every((scope) => READ_SCOPES.has(scope)) ? "read" : "write";
}
