import { Type, type Static } from "@sinclair/typebox";
import { ScopeSchema, TokenRoleSchema } from "./scopes.js";

/** The repository identifier pattern a fine-grained token may be bound to. */
export const REPOSITORY_GRANT_PATTERN = "^[a-z0-9][a-z0-9._-]{0,62}/[a-z0-9][a-z0-9._-]{0,95}$";

export const TOKEN_KINDS = ["role", "fine-grained"] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

const tokenMetadataProperties = {
  token_id: Type.String({ format: "uuid" }),
  token_prefix: Type.String({ description: "The first characters of the secret, to recognise it." }),
  name: Type.String(),
  role: TokenRoleSchema,
  scopes: Type.Array(ScopeSchema, {
    uniqueItems: true,
    description: "The scopes the token holds; for role tokens, the scopes its role implies.",
  }),
  kind: Type.Union(
    TOKEN_KINDS.map((kind) => Type.Literal(kind)),
    { description: "`role` for read/write/admin tokens, `fine-grained` for scoped tokens." },
  ),
  created_at: Type.String({ format: "date-time" }),
  expires_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
  last_used_at: Type.Optional(Type.Union([Type.String({ format: "date-time" }), Type.Null()])),
  organization_id: Type.Optional(Type.Union([Type.String({ format: "uuid" }), Type.Null()])),
  organization_handle: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  repositories: Type.Union([Type.Array(Type.String(), { uniqueItems: true }), Type.Null()]),
};

/** Access token metadata, as list and create return it (never with the secret in a list). */
export const TokenMetadata = Type.Object(tokenMetadataProperties, { title: "TokenMetadata" });
export type TokenMetadata = Static<typeof TokenMetadata>;

/** The create response: the metadata plus the secret, returned this once only. */
export const CreatedToken = Type.Object(
  {
    ...tokenMetadataProperties,
    token: Type.String({ description: "The secret. Returned once, never again." }),
  },
  { title: "CreatedToken" },
);
export type CreatedToken = Static<typeof CreatedToken>;

export const TokenList = Type.Object({ tokens: Type.Array(TokenMetadata) }, { title: "TokenList" });
export type TokenList = Static<typeof TokenList>;

/**
 * The create-token request. Cross-field rules the schema cannot say clearly are
 * checked by the tokens service: exactly one of `scopes` or `role`; `repositories`
 * only with `scopes`; `expires_at` in the future; `organization` one the caller belongs to.
 */
export const CreateTokenRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128 }),
    expires_at: Type.String({ format: "date-time", description: "Must be in the future." }),
    organization: Type.Optional(
      Type.String({ minLength: 1, description: "Bound the token to this organization." }),
    ),
    scopes: Type.Optional(
      Type.Array(ScopeSchema, {
        minItems: 1,
        uniqueItems: true,
        description: "Makes a fine-grained token. Exactly one of `scopes` or `role`.",
      }),
    ),
    role: Type.Optional(
      Type.Union([Type.Literal("read"), Type.Literal("write")], {
        description: "Makes a role token. Exactly one of `scopes` or `role`.",
      }),
    ),
    repositories: Type.Optional(
      Type.Array(Type.String({ pattern: REPOSITORY_GRANT_PATTERN }), {
        minItems: 1,
        maxItems: 100,
        uniqueItems: true,
        description: "Exact repository grants; only for fine-grained tokens.",
      }),
    ),
  },
  { additionalProperties: false, title: "CreateTokenRequest" },
);
export type CreateTokenRequest = Static<typeof CreateTokenRequest>;

export const TokenIdParams = Type.Object({ tokenId: Type.String() });
export type TokenIdParams = Static<typeof TokenIdParams>;
