import { Type, type Static } from "@sinclair/typebox";

/** A public key registered on the account. */
export const AccountKey = Type.Object(
  {
    id: Type.String({ format: "uuid" }),
    title: Type.String(),
    type: Type.Union([Type.Literal("ssh"), Type.Literal("gpg")]),
    algorithm: Type.String(),
    fingerprint: Type.String({ description: "SHA256:… for SSH keys, the hex fingerprint for GPG keys." }),
    key: Type.String({ description: "The public key." }),
    created_at: Type.String({ format: "date-time" }),
    last_used_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
  },
  { title: "AccountKey" },
);
export type AccountKey = Static<typeof AccountKey>;

/** `POST /api/me/keys`: an OpenSSH public key line or an armored OpenPGP public key. */
export const CreateKeyRequest = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 65536 }),
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: true, title: "CreateKeyRequest" },
);
export type CreateKeyRequest = Static<typeof CreateKeyRequest>;
