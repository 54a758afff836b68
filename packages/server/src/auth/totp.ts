import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** The parameters every authenticator app assumes when the URI leaves them out (RFC 6238 §4, §5.2). */
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
const SECRET_BYTES = 20;
/** Steps either side of now a code may come from, for clocks that drift and codes typed slowly. */
const DRIFT_STEPS = 1;

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** Base32 (RFC 4648 §6) without padding, as authenticator apps take secrets. */
export function base32Encode(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** Reads base32 in either case, ignoring spaces and padding; throws on any other character. */
export function base32Decode(text: string): Buffer {
  const clean = text.replace(/[\s=]/g, "").toUpperCase();
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of clean) {
    const index = BASE32.indexOf(char);
    if (index < 0) throw new Error(`"${char}" is not a base32 character.`);
    value = ((value << 5) | index) & 0xfff;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(bytes);
}

/** A new shared secret: 20 random bytes (the HMAC-SHA1 block RFC 4226 §4 recommends), in base32. */
export function generateTotpSecret(): string {
  return base32Encode(randomBytes(SECRET_BYTES));
}

/** HOTP (RFC 4226 §5.3): HMAC-SHA1 of the 8-byte counter, dynamically truncated to `digits` decimal digits. */
export function hotp(key: Buffer, counter: number, digits = TOTP_DIGITS): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac("sha1", key).update(message).digest();
  const offset = (mac[mac.length - 1] ?? 0) & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, "0");
}

/** The time step (RFC 6238 §4.2, T0 = 0) a moment falls in. */
export function totpStep(timeMs: number): number {
  return Math.floor(timeMs / 1000 / TOTP_PERIOD_SECONDS);
}

/** TOTP (RFC 6238): HOTP of the time step. */
export function totp(key: Buffer, timeMs: number, digits = TOTP_DIGITS): string {
  return hotp(key, totpStep(timeMs), digits);
}

/**
 * The step a 6-digit code belongs to, if it is the code of the current step
 * or one either side, and that step is later than `lastUsedStep` (RFC 6238
 * §5.2: an accepted code must not be accepted again). Every candidate is
 * compared in constant time. `reused` tells a replayed code from a wrong one.
 */
export function matchTotp(
  secret: string,
  code: string,
  timeMs: number,
  lastUsedStep: number | null,
): { step: number } | "reused" | "wrong" {
  if (!/^[0-9]{6}$/.test(code)) return "wrong";
  const key = base32Decode(secret);
  const given = Buffer.from(code);
  const now = totpStep(timeMs);
  let matched: number | null = null;
  for (let step = now - DRIFT_STEPS; step <= now + DRIFT_STEPS; step++) {
    if (timingSafeEqual(Buffer.from(hotp(key, step)), given)) matched = step;
  }
  if (matched === null) return "wrong";
  if (lastUsedStep !== null && matched <= lastUsedStep) return "reused";
  return { step: matched };
}

/**
 * The Key URI an authenticator app scans (Google Authenticator's key URI
 * format): `otpauth://totp/ISSUER:ACCOUNT?secret=…&issuer=…`, with the
 * algorithm, digits and period spelled out.
 */
export function otpauthUri({
  secret,
  issuer,
  account,
}: {
  secret: string;
  issuer: string;
  account: string;
}): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const query = new URLSearchParams({
    secret,
    issuer,
    algorithm: "SHA1",
    digits: String(TOTP_DIGITS),
    period: String(TOTP_PERIOD_SECONDS),
  });
  return `otpauth://totp/${label}?${query.toString().replace(/\+/g, "%20")}`;
}
