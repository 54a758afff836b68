import { createPublicKey, verify, type JsonWebKey, type KeyObject } from "node:crypto";
import { digestsEqual, hashSecret } from "../../../auth/secrets.js";

/** Clock difference tolerated between the hub and the provider when checking `exp`, `iat` and `nbf`. */
const LEEWAY_SECONDS = 60;

/** Why an ID token was refused; `email_domain` when only the email's domain is wrong. */
export class IdTokenRejected extends Error {
  constructor(
    readonly reason: "invalid" | "email_domain",
    message: string,
  ) {
    super(message);
  }
}

/** What the hub expects of an ID token it asked for. */
export interface IdTokenExpectations {
  issuer: string;
  clientId: string;
  /** SHA-256 of the nonce the hub sent in the authorization request. */
  nonceHash: string;
  now: Date;
  /** When set, the `email` claim must be an address at this domain. */
  emailDomain: string | null;
}

/** The claims the hub keeps of a verified ID token. */
export interface IdTokenClaims {
  subject: string;
  email: string | null;
}

function decodeJson(part: string | undefined, what: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(Buffer.from(part ?? "", "base64url").toString("utf8"));
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Reported below.
  }
  throw new IdTokenRejected("invalid", `its ${what} is not a base64url JSON object`);
}

function publicKey(jwk: JsonWebKey): KeyObject | null {
  try {
    return createPublicKey({ key: jwk, format: "jwk" });
  } catch {
    return null;
  }
}

/** Whether one of the provider's RSA signing keys (the one `kid` names, if it names one) signed the token. */
function signedByProvider(token: string, kid: unknown, keys: readonly JsonWebKey[]): boolean {
  const [header = "", payload = "", signature = ""] = token.split(".");
  const candidates = keys.filter(
    (key) =>
      key.kty === "RSA" &&
      (key.use === undefined || key.use === "sig") &&
      (key.alg === undefined || key.alg === "RS256") &&
      (kid === undefined || key.kid === kid),
  );
  const signed = Buffer.from(`${header}.${payload}`);
  const bytes = Buffer.from(signature, "base64url");
  return candidates.some((jwk) => {
    const key = publicKey(jwk);
    return key !== null && verify("RSA-SHA256", signed, key, bytes);
  });
}

function seconds(claims: Record<string, unknown>, name: string, required: boolean): number | null {
  const value = claims[name];
  if (value === undefined && !required) return null;
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new IdTokenRejected("invalid", `its "${name}" claim is missing or not a number`);
  }
  return value;
}

/**
 * Verifies an ID token as OpenID Connect Core §3.1.3.7 asks: an RS256 JWS
 * signed by one of the provider's keys (its JWKS), issued by the configured
 * issuer for this client (`aud`, and `azp` when there are several audiences),
 * not expired, carrying the nonce of this sign-in, and for the allowed email
 * domain when one is set. Throws `IdTokenRejected` naming what is wrong.
 */
export function verifyIdToken(
  token: string,
  keys: readonly JsonWebKey[],
  expected: IdTokenExpectations,
): IdTokenClaims {
  const parts = token.split(".");
  if (parts.length !== 3) throw new IdTokenRejected("invalid", "it is not a signed JWT");
  const header = decodeJson(parts[0], "header");
  if (header.alg !== "RS256") {
    throw new IdTokenRejected("invalid", `it is signed with ${String(header.alg)}; the hub accepts RS256`);
  }
  if (!signedByProvider(token, header.kid, keys)) {
    throw new IdTokenRejected("invalid", "its signature does not verify with the provider's published keys");
  }
  const claims = decodeJson(parts[1], "payload");
  if (claims.iss !== expected.issuer) {
    throw new IdTokenRejected("invalid", `it was issued by ${String(claims.iss)}, not ${expected.issuer}`);
  }
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!audiences.includes(expected.clientId) || (audiences.length > 1 && claims.azp !== expected.clientId)) {
    throw new IdTokenRejected("invalid", "it was issued for another client (aud)");
  }
  const now = expected.now.getTime() / 1000;
  const exp = seconds(claims, "exp", true) ?? 0;
  seconds(claims, "iat", true);
  const nbf = seconds(claims, "nbf", false);
  if (exp + LEEWAY_SECONDS <= now) throw new IdTokenRejected("invalid", "it has expired (exp)");
  if (nbf !== null && nbf - LEEWAY_SECONDS > now)
    throw new IdTokenRejected("invalid", "it is not valid yet (nbf)");
  if (typeof claims.nonce !== "string" || !digestsEqual(hashSecret(claims.nonce), expected.nonceHash)) {
    throw new IdTokenRejected("invalid", "its nonce is not this sign-in's");
  }
  if (typeof claims.sub !== "string" || claims.sub.length === 0 || claims.sub.length > 255) {
    throw new IdTokenRejected("invalid", "its subject (sub) is missing");
  }
  const email = typeof claims.email === "string" ? claims.email : null;
  if (expected.emailDomain !== null) {
    const domain = email?.slice(email.lastIndexOf("@") + 1).toLowerCase();
    // Only an address the provider vouches for proves the domain: a missing email_verified claim does not.
    if (!email?.includes("@") || domain !== expected.emailDomain || claims.email_verified !== true) {
      throw new IdTokenRejected(
        "email_domain",
        `its email ${email ?? "(none)"} is not a verified address at ${expected.emailDomain}`,
      );
    }
  }
  return { subject: claims.sub, email };
}
