import { Type, type Static, type TProperties } from "@sinclair/typebox";
import { ScopeSchema, TokenRoleSchema } from "./scopes.js";
import { TOKEN_KINDS } from "./tokens.js";
import { MfaStatus } from "./mfa.js";
import { Profile, ReservedUsername, SocialIdentity } from "./profile.js";

const OrgSummary = Type.Object({
  type: Type.Literal("org"),
  name: Type.String({ description: "Organization handle." }),
  fullname: Type.String(),
  roleInOrg: Type.String({ description: "The caller's membership role in the organization." }),
});

const accessTokenProperties = {
  displayName: Type.String({ description: "The token's name." }),
  role: TokenRoleSchema,
  scopes: Type.Array(ScopeSchema),
  kind: Type.Union(TOKEN_KINDS.map((kind) => Type.Literal(kind))),
};

const AuthType = Type.Union([Type.Literal("access_token"), Type.Literal("session"), Type.Literal("ssh_key")]);

/** The identity record's shape, given what its access-token summary holds. */
function identityRecord<T extends TProperties>(accessToken: T, title: string) {
  return Type.Object(
    {
      type: Type.Literal("user"),
      name: Type.String(),
      fullname: Type.String(),
      orgs: Type.Array(OrgSummary),
      auth: Type.Object({
        type: AuthType,
        accessToken: Type.Optional(Type.Object(accessToken)),
      }),
    },
    { title },
  );
}

/** The identity record of `GET /api/whoami`: namespace identity, org summaries and the active credential. */
export const Whoami = identityRecord(accessTokenProperties, "Whoami");
export type Whoami = Static<typeof Whoami>;

/**
 * `GET /api/whoami-v2`: the same record plus `auth.accessToken.createdAt`, which the
 * Hugging Face JavaScript client always reads.
 */
export const WhoamiV2 = identityRecord(
  { ...accessTokenProperties, createdAt: Type.String({ format: "date-time" }) },
  "WhoamiV2",
);
export type WhoamiV2 = Static<typeof WhoamiV2>;

const RepositoryCounts = Type.Object({
  models: Type.Integer({ minimum: 0 }),
  datasets: Type.Integer({ minimum: 0 }),
  spaces: Type.Integer({ minimum: 0 }),
  mcps: Type.Integer({ minimum: 0 }),
});

/** `GET /api/me`: the private account context, richer than the identity record. */
export const Me = Type.Object(
  {
    id: Type.String({ format: "uuid" }),
    type: Type.Literal("user"),
    name: Type.String(),
    fullname: Type.String(),
    email: Type.String(),
    emailVerified: Type.Boolean(),
    isAdmin: Type.Boolean({ description: "Whether the account administers this hub." }),
    createdAt: Type.String({ format: "date-time" }),
    mfa: MfaStatus,
    orgs: Type.Array(
      Type.Object({
        id: Type.String({ format: "uuid" }),
        type: Type.Literal("org"),
        name: Type.String(),
        fullname: Type.String(),
        plan: Type.String({ description: "`free`, `team` or `enterprise`." }),
        roleInOrg: Type.String(),
        joinedAt: Type.String({ format: "date-time" }),
      }),
    ),
    repositoryCounts: RepositoryCounts,
    profile: Profile,
    socialIdentities: Type.Array(SocialIdentity, {
      description: "Identities linked to the account; `visible` ones show on the public profile.",
    }),
    reservedUsernames: Type.Array(ReservedUsername, {
      description: "Usernames the account renamed away from, which only it may take back until then.",
    }),
    avatarUrl: Type.String({
      description: "The same as `profile.avatarUrl`, where Hugging Face clients read it.",
    }),
    auth: Type.Object({
      type: AuthType,
      tokenId: Type.Union([Type.String({ format: "uuid" }), Type.Null()], {
        description: "The id of the token in use; null for a browser session.",
      }),
      reauthenticatedUntil: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
        description: "Until when the credential counts as recently reauthenticated.",
      }),
    }),
  },
  { title: "Me" },
);
export type Me = Static<typeof Me>;
