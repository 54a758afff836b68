import { Type, type Static } from "@sinclair/typebox";
import { PaperSummary } from "./papers.js";

/** Text on one line: no control characters. */
const LINE = "^[^\\u0000-\\u001f\\u007f]*$";
/** Text that may span lines: tabs and line breaks, no other control characters. */
const TEXT = "^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]*$";

/** The social networks a profile can name a handle on, and the form each network gives handles. */
export const SOCIAL_NETWORKS = ["github", "twitter", "linkedin", "bluesky"] as const;
export type SocialNetwork = (typeof SOCIAL_NETWORKS)[number];

const handleOn = (pattern: string, description: string) =>
  Type.String({ maxLength: 253, pattern: `^$|${pattern}`, description });

/** Handles on other networks, without `@` or URL; an empty string means none. */
export const SocialHandles = Type.Object(
  {
    github: handleOn(
      "^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$",
      "GitHub user name, e.g. `octocat`.",
    ),
    twitter: handleOn("^[A-Za-z0-9_]{1,15}$", "X (Twitter) handle without `@`."),
    linkedin: handleOn("^[A-Za-z0-9-]{3,100}$", "The part after `linkedin.com/in/`."),
    bluesky: handleOn(
      "^(?=.{3,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$",
      "Bluesky handle, a domain name such as `alice.bsky.social`.",
    ),
  },
  { title: "SocialHandles" },
);
export type SocialHandles = Static<typeof SocialHandles>;

/** The editable profile as the owner sees it and as PUT and PATCH return it. */
export const Profile = Type.Object(
  {
    fullname: Type.String({ description: "Display name." }),
    bio: Type.String({ description: "A few lines about the account; `details` on the public overview." }),
    website: Type.String({ description: "An http or https URL, or empty." }),
    location: Type.String(),
    social: SocialHandles,
    avatarUrl: Type.String({ description: "Where the avatar is served (the default one until one is set)." }),
  },
  { title: "Profile" },
);
export type Profile = Static<typeof Profile>;

const nullable = <T extends ReturnType<typeof Type.String>>(schema: T) =>
  Type.Optional(Type.Union([schema, Type.Null()]));

const profileFields = {
  fullname: nullable(
    Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: LINE,
      description: "Display name, 1 to 100 characters; null sets it back to the handle.",
    }),
  ),
  bio: nullable(Type.String({ maxLength: 500, pattern: TEXT, description: "Up to 500 characters." })),
  website: nullable(
    Type.String({
      maxLength: 2048,
      pattern: LINE,
      description: "An http or https URL without credentials; empty or null for none.",
    }),
  ),
  location: nullable(Type.String({ maxLength: 100, pattern: LINE })),
};

/**
 * `PUT /api/me/profile`: the whole editable profile; fields left out (or null)
 * take their defaults (the handle as display name, empty text, no handles). The
 * body is open, as the spec marks it (F): fields it does not name are ignored.
 */
export const PutProfile = Type.Object(
  {
    ...profileFields,
    social: Type.Optional(
      Type.Partial(SocialHandles, {
        additionalProperties: false,
        description: `Handles by network (${SOCIAL_NETWORKS.join(", ")}); networks left out are cleared.`,
      }),
    ),
  },
  { title: "PutProfile", additionalProperties: true },
);
export type PutProfile = Static<typeof PutProfile>;

/**
 * `PATCH /api/me/profile`: a JSON merge patch (RFC 7396) of the editable
 * profile: fields given replace the stored ones, null clears one, `social`
 * merges network by network. Open like PUT.
 */
export const PatchProfile = Type.Object(
  {
    ...profileFields,
    social: Type.Optional(
      Type.Object(
        Object.fromEntries(
          SOCIAL_NETWORKS.map((network) => [
            network,
            Type.Optional(Type.Union([SocialHandles.properties[network], Type.Null()])),
          ]),
        ),
        {
          additionalProperties: false,
          description: "Networks given replace their handle; null or empty clears one.",
        },
      ),
    ),
  },
  { title: "PatchProfile", additionalProperties: true },
);
export type PatchProfile = Static<typeof PatchProfile>;

/** A social identity linked to the account, as its owner sees it. */
export const SocialIdentity = Type.Object(
  {
    provider: Type.String({ description: "The identity provider, e.g. `github`." }),
    name: Type.String({ description: "The account's name at the provider." }),
    url: Type.Union([Type.String(), Type.Null()], { description: "The profile page at the provider." }),
    visible: Type.Boolean({ description: "Whether the public profile shows it." }),
    linkedAt: Type.String({ format: "date-time" }),
  },
  { title: "SocialIdentity" },
);
export type SocialIdentity = Static<typeof SocialIdentity>;

/** `PATCH /api/me/social-identities/{provider}`; open (F). */
export const UpdateSocialIdentity = Type.Object(
  { visible: Type.Boolean({ description: "Show the identity on the public profile." }) },
  { title: "UpdateSocialIdentity", additionalProperties: true },
);
export type UpdateSocialIdentity = Static<typeof UpdateSocialIdentity>;

/**
 * `GET /api/users/{name}/overview`: the public profile. `user`, `fullname`,
 * `avatarUrl`, `isPro`, `details`, the `num*` counts and `orgs` are the fields
 * the Hugging Face Python client's `get_user_overview` reads.
 */
export const UserOverview = Type.Object(
  {
    _id: Type.String({ format: "uuid" }),
    type: Type.Literal("user"),
    user: Type.String({ description: "The handle." }),
    fullname: Type.String(),
    avatarUrl: Type.String(),
    isPro: Type.Boolean({ description: "Whether the account is on the `pro` plan." }),
    details: Type.String({ description: "The bio." }),
    website: Type.String(),
    location: Type.String(),
    social: SocialHandles,
    socialIdentities: Type.Array(
      Type.Object({
        provider: Type.String(),
        name: Type.String(),
        url: Type.Union([Type.String(), Type.Null()]),
      }),
      { description: "Linked identities the owner chose to show." },
    ),
    numModels: Type.Integer({ minimum: 0, description: "Public models." }),
    numDatasets: Type.Integer({ minimum: 0 }),
    numSpaces: Type.Integer({ minimum: 0 }),
    numMcps: Type.Integer({ minimum: 0 }),
    numFollowers: Type.Integer({ minimum: 0, description: "Accounts following this one." }),
    numFollowing: Type.Integer({ minimum: 0, description: "Accounts this one follows." }),
    numLikes: Type.Integer({ minimum: 0, description: "Public repositories this account liked." }),
    orgs: Type.Array(Type.Object({ name: Type.String(), fullname: Type.String() })),
    numPapers: Type.Integer({ minimum: 0, description: "Papers whose authorship the user shows." }),
    papers: Type.Array(PaperSummary, {
      description: "The papers the user claimed authorship of and chose to show, newest claim first.",
    }),
    createdAt: Type.String({ format: "date-time" }),
  },
  { title: "UserOverview" },
);
export type UserOverview = Static<typeof UserOverview>;

const Moved = Type.Object({ from: Type.String(), to: Type.String() });

/** `GET /api/me/profile/username?username=`: the name to preview. */
export const UsernamePreviewQuery = Type.Object(
  {
    username: Type.String({
      minLength: 1,
      maxLength: 100,
      description: "The new username; whether it is valid and free is the preview's answer.",
    }),
  },
  { title: "UsernamePreviewQuery" },
);
export type UsernamePreviewQuery = Static<typeof UsernamePreviewQuery>;

/** What renaming the account to `username` would do, without doing it. */
export const UsernamePreview = Type.Object(
  {
    current: Type.String({ description: "The account's username now." }),
    username: Type.String({ description: "The username previewed." }),
    valid: Type.Boolean({ description: "Well formed and not reserved by the hub." }),
    available: Type.Boolean({
      description: "Valid, different, and neither taken nor reserved for another account.",
    }),
    problem: Type.Union(
      [
        Type.Object({
          code: Type.String({
            description:
              "`invalid_handle`, `reserved_handle`, `username_unchanged`, `handle_taken` or `handle_reserved`.",
          }),
          message: Type.String(),
        }),
        Type.Null(),
      ],
      { description: "Why the rename would be refused; null when it would go through." },
    ),
    repositories: Type.Array(Type.Object({ type: Type.String(), from: Type.String(), to: Type.String() }), {
      description: "Every repository of the account, with its id now and after the rename.",
    }),
    redirects: Type.Array(Moved, {
      description: "Old URLs (profile, repository pages and API paths) that will redirect to the new ones.",
    }),
    gitRemotes: Type.Array(Moved, {
      description:
        "HTTPS and SSH clone URLs; the old ones keep working (HTTPS by redirect, SSH by following).",
    }),
    oldUsernameReservedUntil: Type.String({
      format: "date-time",
      description: "Until when only this account could take the old username back, if renamed now.",
    }),
    reauthenticationRequired: Type.Boolean({
      description:
        "Whether this credential must reauthenticate before the rename (POST /api/auth/reauthenticate).",
    }),
  },
  { title: "UsernamePreview" },
);
export type UsernamePreview = Static<typeof UsernamePreview>;

/** `POST /api/me/profile/username`; open (F). */
export const MigrateUsername = Type.Object(
  { username: Type.String({ minLength: 1, maxLength: 100, description: "The new username." }) },
  { title: "MigrateUsername", additionalProperties: true },
);
export type MigrateUsername = Static<typeof MigrateUsername>;

/** The outcome of a rename. */
export const UsernameMigration = Type.Object(
  {
    name: Type.String({ description: "The new username." }),
    previousName: Type.String(),
    oldUsernameReservedUntil: Type.String({ format: "date-time" }),
    repositories: Type.Array(Type.Object({ type: Type.String(), from: Type.String(), to: Type.String() })),
  },
  { title: "UsernameMigration" },
);
export type UsernameMigration = Static<typeof UsernameMigration>;

/** A username the account gave up, kept for it until `reservedUntil`. */
export const ReservedUsername = Type.Object(
  { name: Type.String(), reservedUntil: Type.String({ format: "date-time" }) },
  { title: "ReservedUsername" },
);

/**
 * The identity providers an account can be linked to, with where each shows
 * the account's profile (`{name}` stands for the name there); null when it has
 * no public page.
 */
export const SOCIAL_PROVIDERS = {
  github: "https://github.com/{name}",
  gitlab: "https://gitlab.com/{name}",
  huggingface: "https://huggingface.co/{name}",
  google: null,
  orcid: "https://orcid.org/{name}",
  linkedin: "https://www.linkedin.com/in/{name}",
  twitter: "https://x.com/{name}",
} as const satisfies Record<string, string | null>;
export type SocialProvider = keyof typeof SOCIAL_PROVIDERS;

/** An account in a followers or following list, as `huggingface_hub`'s `User` reads it. */
export const FollowEntry = Type.Object(
  {
    type: Type.Literal("user"),
    user: Type.String({ description: "The handle." }),
    fullname: Type.String(),
    avatarUrl: Type.String(),
  },
  { title: "FollowEntry" },
);
export type FollowEntry = Static<typeof FollowEntry>;
