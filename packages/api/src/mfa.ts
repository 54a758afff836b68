import { Type, type Static } from "@sinclair/typebox";

/** Two-factor authentication of the account, as `GET /api/me` and `GET /api/me/mfa` show it. */
export const MfaStatus = Type.Object(
  {
    enabled: Type.Boolean({ description: "Whether sign-in and reauthentication ask for a code." }),
    methods: Type.Array(Type.Literal("totp"), {
      description: "The second factors in use: `totp` (an authenticator app, RFC 6238).",
    }),
    enrolledAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
      description: "When two-factor authentication was turned on; null while off.",
    }),
    recoveryCodesRemaining: Type.Integer({
      minimum: 0,
      description: "Unused recovery codes; each replaces a code once.",
    }),
    enrollmentPending: Type.Boolean({
      description: "An enrollment was started and awaits its confirming code.",
    }),
  },
  { title: "MfaStatus" },
);
export type MfaStatus = Static<typeof MfaStatus>;

/**
 * The second factor sent with a password (`otp` of sign-in and
 * reauthentication): the 6-digit code the authenticator app shows, or one
 * unused recovery code (dashes and spaces are ignored).
 */
export const SecondFactorCode = Type.String({
  minLength: 6,
  maxLength: 64,
  pattern: "^[0-9A-Za-z -]+$",
  description:
    "When two-factor authentication is on: the 6-digit code your authenticator app shows, or one unused recovery code.",
});

/** `POST /api/me/mfa/totp`: the new secret, shown this once, to put into an authenticator app. */
export const TotpEnrollment = Type.Object(
  {
    secret: Type.String({
      description: "The shared secret in base32 (20 random bytes), to type in by hand.",
    }),
    otpauthUri: Type.String({
      description: "The same as an `otpauth://totp/ISSUER:ACCOUNT?secret=…` URI, to show as a QR code.",
    }),
    issuer: Type.String(),
    accountName: Type.String({ description: "The account's handle." }),
    algorithm: Type.Literal("SHA1"),
    digits: Type.Literal(6),
    period: Type.Literal(30, { description: "Seconds each code lasts." }),
  },
  { title: "TotpEnrollment" },
);
export type TotpEnrollment = Static<typeof TotpEnrollment>;

/** `POST /api/me/mfa/totp/confirm`: a code from the app, proving it holds the new secret. */
export const ConfirmTotp = Type.Object(
  {
    otp: Type.String({
      pattern: "^[0-9]{6}$",
      description: "The 6-digit code the authenticator app shows for the new secret.",
    }),
  },
  { additionalProperties: false, title: "ConfirmTotp" },
);
export type ConfirmTotp = Static<typeof ConfirmTotp>;

/** New recovery codes, shown this once (after confirming, and after regenerating them). */
export const MfaRecoveryCodes = Type.Object(
  {
    recoveryCodes: Type.Array(Type.String(), {
      description:
        "One-time codes to use instead of a code when the app is out of reach; only their digests are kept.",
    }),
    mfa: MfaStatus,
  },
  { title: "MfaRecoveryCodes" },
);
export type MfaRecoveryCodes = Static<typeof MfaRecoveryCodes>;
