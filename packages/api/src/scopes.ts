import { Type, type Static } from "@sinclair/typebox";

/** Every scope a fine-grained token may hold, as the spec's scope table lists them. */
export const SCOPES = [
  "repo:read",
  "repo:write",
  "repo:delete",
  "community:write",
  "jobs:run",
  "inference:run",
  "account:keys",
  "webhooks:manage",
] as const;
export type Scope = (typeof SCOPES)[number];

/** Roles a token can carry; only `read` and `write` can be requested over the API. */
export const TOKEN_ROLES = ["read", "write", "admin"] as const;
export type TokenRole = (typeof TOKEN_ROLES)[number];

export const ScopeSchema = Type.Union(
  SCOPES.map((scope) => Type.Literal(scope)),
  { description: "A fine-grained token scope." },
);
export const TokenRoleSchema = Type.Union(
  TOKEN_ROLES.map((role) => Type.Literal(role)),
  { description: "The role of a token." },
);
export type ScopeSchema = Static<typeof ScopeSchema>;
