import { Type, type Static } from "@sinclair/typebox";

const RepoEntry = Type.Object({
  type: Type.String({ description: "`model`, `dataset`, `space` or `mcp`." }),
  id: Type.String({ description: "`owner/name`." }),
  private: Type.Boolean(),
});

/** Something that stops the deletion until the account deals with it. */
export const AccountDeletionBlocker = Type.Object(
  {
    code: Type.Literal("sole_admin"),
    organization: Type.String(),
    message: Type.String({ description: "What to do about it." }),
  },
  { title: "AccountDeletionBlocker" },
);
export type AccountDeletionBlocker = Static<typeof AccountDeletionBlocker>;

/** `GET /api/me/account-deletion`: what deleting the account would remove, and what stops it. */
export const AccountDeletionPreview = Type.Object(
  {
    name: Type.String(),
    deletable: Type.Boolean({ description: "True when there are no blockers." }),
    blockers: Type.Array(AccountDeletionBlocker),
    confirm: Type.String({ description: 'The value to send as `{"confirm": …}`: the username.' }),
    reauthenticationRequired: Type.Boolean({
      description: "Whether this credential must reauthenticate (POST /api/auth/reauthenticate) first.",
    }),
    usernameReservedUntil: Type.String({
      format: "date-time",
      description: "Nobody may take the username (or the names of deleted organizations) before then.",
    }),
    repositories: Type.Array(RepoEntry, {
      description: "The account's repositories: git data, LFS objects no other repository holds, settings.",
    }),
    organizations: Type.Array(
      Type.Object({
        name: Type.String(),
        role: Type.String(),
        outcome: Type.Union([Type.Literal("deleted"), Type.Literal("left"), Type.Literal("blocked")], {
          description:
            "`deleted`: the account is its only member, so it goes too, with its repositories, webhooks and inference data; `left`: the membership ends; `blocked`: see blockers.",
        }),
        members: Type.Integer(),
        repositories: Type.Array(RepoEntry, { description: "Deleted with it (only for `deleted`)." }),
      }),
    ),
    credentials: Type.Object({
      tokens: Type.Integer(),
      sessions: Type.Integer(),
      sshKeys: Type.Integer(),
      gpgKeys: Type.Integer(),
    }),
    webhooks: Type.Integer({ description: "The account's webhook routes, with their deliveries." }),
    inference: Type.Object({
      usageRecords: Type.Integer({ description: "Ledger rows billed to the account; deleted." }),
      providerKeys: Type.Integer(),
      creditBalanceUsd: Type.Number({ description: "Forfeited." }),
      organizationUsageRecords: Type.Integer({
        description:
          "Requests the account billed to organizations that stay: kept for their accounting, no longer linked to the account.",
      }),
    }),
    records: Type.Array(Type.Object({ table: Type.String(), rows: Type.Integer() }), {
      description:
        "Every row that belongs to the account through a foreign key and goes with it, counted per table (profile, preferences, tokens, keys, memberships, …).",
    }),
  },
  { title: "AccountDeletionPreview" },
);
export type AccountDeletionPreview = Static<typeof AccountDeletionPreview>;

/** `DELETE /api/me/account`: (F) body; `confirm` must be the username. */
export const DeleteAccountRequest = Type.Object(
  {
    confirm: Type.String({
      minLength: 1,
      maxLength: 100,
      description: "The account's username, to confirm the deletion.",
    }),
  },
  { title: "DeleteAccountRequest", additionalProperties: true },
);
export type DeleteAccountRequest = Static<typeof DeleteAccountRequest>;

/** What the deletion removed. */
export const AccountDeletion = Type.Object(
  {
    deleted: Type.Literal(true),
    name: Type.String(),
    repositories: Type.Array(Type.String({ description: "`type/owner/name` of each deleted repository." })),
    organizationsDeleted: Type.Array(Type.String()),
    organizationsLeft: Type.Array(Type.String()),
    usernameReservedUntil: Type.String({ format: "date-time" }),
  },
  { title: "AccountDeletion" },
);
export type AccountDeletion = Static<typeof AccountDeletion>;
