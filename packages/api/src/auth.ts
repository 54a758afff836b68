import { Type, type Static } from "@sinclair/typebox";
import { SecondFactorCode } from "./mfa.js";

/** `POST /api/auth/login`: a handle or an email address, and the password. */
export const LoginRequest = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 320, description: "Handle or email." }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
    otp: Type.Optional(SecondFactorCode),
  },
  { additionalProperties: false, title: "LoginRequest" },
);
export type LoginRequest = Static<typeof LoginRequest>;

export const LoginResponse = Type.Object(
  {
    name: Type.String(),
    expiresAt: Type.String({ format: "date-time", description: "When the session ends." }),
  },
  { title: "LoginResponse" },
);
export type LoginResponse = Static<typeof LoginResponse>;

/** `POST /api/auth/reauthenticate`: proves the person is present before sensitive operations. */
export const ReauthenticateRequest = Type.Object(
  { password: Type.String({ minLength: 1, maxLength: 1024 }), otp: Type.Optional(SecondFactorCode) },
  { additionalProperties: false, title: "ReauthenticateRequest" },
);
export type ReauthenticateRequest = Static<typeof ReauthenticateRequest>;

export const ReauthenticateResponse = Type.Object(
  { reauthenticatedUntil: Type.String({ format: "date-time" }) },
  { title: "ReauthenticateResponse" },
);
export type ReauthenticateResponse = Static<typeof ReauthenticateResponse>;

/** One dependency a deep health check reached, or failed to. */
export const HealthCheck = Type.Object(
  {
    ok: Type.Boolean(),
    /** How long the call took, in milliseconds. */
    ms: Type.Integer({ minimum: 0 }),
    error: Type.Optional(Type.String({ description: "Why it failed (a timeout, or the error's message)." })),
  },
  { title: "HealthCheck" },
);
export type HealthCheck = Static<typeof HealthCheck>;

/**
 * `GET /api/health`: the process is up and reads its database. With `?deep=1`, `checks` names each dependency
 * (the database, Redis when configured, the object store) with whether one cheap call to it answered in time;
 * a load balancer takes a process whose dependency fails (503, `status: "unavailable"`) out of rotation.
 */
export const Health = Type.Object(
  {
    status: Type.Union([Type.Literal("ok"), Type.Literal("unavailable")]),
    version: Type.String(),
    checks: Type.Optional(
      Type.Object({
        database: HealthCheck,
        redis: Type.Optional(HealthCheck),
        objectStore: HealthCheck,
      }),
    ),
  },
  { title: "Health" },
);
export type Health = Static<typeof Health>;

export const HealthQuery = Type.Object({
  deep: Type.Optional(
    Type.Union([Type.Literal("1"), Type.Literal("0")], {
      description:
        "1: also reach Redis and the object store, each within a timeout, and answer 503 if one fails.",
    }),
  ),
});
export type HealthQuery = Static<typeof HealthQuery>;

/**
 * `POST /api/auth/session-inference-token`: a Router credential for the signed-in browser (the web's
 * playground). It holds only `inference:run`, lives a few minutes and ends with the session.
 */
export const SessionInferenceToken = Type.Object(
  {
    token: Type.String({ description: "Send it to the Router as Authorization: Bearer <token>." }),
    expiresAt: Type.String({
      format: "date-time",
      description: "When it stops working: a few minutes from now, or the session's end if sooner.",
    }),
  },
  { title: "SessionInferenceToken" },
);
export type SessionInferenceToken = Static<typeof SessionInferenceToken>;
