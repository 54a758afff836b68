import { Type, type Static } from "@sinclair/typebox";

const DateTime = Type.String({ format: "date-time" });
const Seconds = Type.Integer({ minimum: 60, maximum: 31_536_000 });

/**
 * `PUT /api/organizations/{handle}/sso`: an organization's single sign-on, an
 * OpenID Connect provider (authorization code flow with PKCE) and whether its
 * members must sign in with it. Closed: a misspelt field is a 400.
 */
export const UpdateOrganizationSso = Type.Object(
  {
    issuer: Type.String({
      minLength: 1,
      maxLength: 2048,
      description:
        "The provider's issuer URL, exactly as its discovery document (`/.well-known/openid-configuration`) names it: https, no query, no fragment.",
    }),
    clientId: Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: "^[\\x21-\\x7e]+$",
      description: "The client id the provider gave the hub.",
    }),
    clientSecret: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        pattern: "^[\\x21-\\x7e]+$",
        description:
          "The client secret; stored sealed and never shown again. Required the first time; leave it out to keep the stored one.",
      }),
    ),
    emailDomain: Type.Optional(
      Type.Union(
        [
          Type.String({
            maxLength: 253,
            pattern:
              "^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$",
          }),
          Type.Null(),
        ],
        { description: "When set, only ID tokens whose `email` is at this domain are accepted." },
      ),
    ),
    required: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          "Members (admins too) must hold a valid SSO sign-in to use the organization's private resources.",
      }),
    ),
    sessionSeconds: Type.Optional(
      Type.Union([Seconds, Type.Null()], {
        description: "How long an SSO sign-in lasts (60 s to 365 days); null for the hub's default.",
      }),
    ),
  },
  { title: "UpdateOrganizationSso", additionalProperties: false },
);
export type UpdateOrganizationSso = Static<typeof UpdateOrganizationSso>;

/** `GET /api/organizations/{handle}/sso`: the configuration as admins see it; the client secret never leaves the hub. */
export const OrganizationSso = Type.Object(
  {
    organization: Type.String({ description: "The organization's handle." }),
    configured: Type.Boolean({
      description: "Whether a provider is set; the fields below are null until it is.",
    }),
    issuer: Type.Union([Type.String(), Type.Null()]),
    clientId: Type.Union([Type.String(), Type.Null()]),
    clientSecretSet: Type.Boolean({
      description: "Whether a client secret is stored (it is never returned).",
    }),
    emailDomain: Type.Union([Type.String(), Type.Null()]),
    required: Type.Boolean(),
    sessionSeconds: Type.Union([Type.Integer(), Type.Null()], {
      description: "The organization's own SSO sign-in length; null when it uses the hub's default.",
    }),
    effectiveSessionSeconds: Type.Integer({ description: "How long a sign-in made now lasts." }),
    redirectUri: Type.String({ description: "The redirect URI to register at the provider." }),
    signInUrl: Type.String({
      description: "Where members start an SSO sign-in, in a browser signed in to the hub.",
    }),
    updatedAt: Type.Union([DateTime, Type.Null()]),
  },
  { title: "OrganizationSso" },
);
export type OrganizationSso = Static<typeof OrganizationSso>;

/** The query the provider sends the browser back with (OpenID Connect Core §3.1.2.5-6, RFC 9207). */
export const SsoCallbackQuery = Type.Object(
  {
    state: Type.String({ minLength: 1, maxLength: 512 }),
    code: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    error: Type.Optional(Type.String({ maxLength: 256 })),
    error_description: Type.Optional(Type.String({ maxLength: 2048 })),
    iss: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { title: "SsoCallbackQuery" },
);
export type SsoCallbackQuery = Static<typeof SsoCallbackQuery>;

/** A recorded SSO sign-in of the caller with an organization's provider. */
export const SsoAuthorization = Type.Object(
  {
    organization: Type.String(),
    subject: Type.String({ description: "The provider's `sub` for the caller." }),
    email: Type.Union([Type.String(), Type.Null()]),
    signedInAt: DateTime,
    expiresAt: DateTime,
  },
  { title: "SsoAuthorization" },
);
export type SsoAuthorization = Static<typeof SsoAuthorization>;

/** One organization of the caller that needs an SSO sign-in before its resources can be used. */
export const OrganizationSsoPrompt = Type.Object(
  {
    name: Type.String({ description: "The organization's handle." }),
    fullname: Type.String(),
    reason: Type.Union([Type.Literal("missing"), Type.Literal("expired")], {
      description:
        "`missing`: never signed in (or the configuration changed since); `expired`: the last sign-in ended.",
    }),
    expiredAt: Type.Union([DateTime, Type.Null()], {
      description: "When the last sign-in ended; null when missing.",
    }),
    signInUrl: Type.String({ description: "Open in a browser signed in to the hub to sign in." }),
  },
  { title: "OrganizationSsoPrompt" },
);
export type OrganizationSsoPrompt = Static<typeof OrganizationSsoPrompt>;

/** `GET /api/me/organization-sso`: the caller's organizations that require an SSO sign-in the caller lacks. */
export const OrganizationSsoPrompts = Type.Object(
  { organizations: Type.Array(OrganizationSsoPrompt) },
  { title: "OrganizationSsoPrompts" },
);
export type OrganizationSsoPrompts = Static<typeof OrganizationSsoPrompts>;
