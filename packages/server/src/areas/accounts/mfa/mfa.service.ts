import { randomUUID } from "node:crypto";
import type { MfaRecoveryCodes, MfaStatus, TotpEnrollment } from "@hub/api";
import type { Principal } from "../../../auth/credential.js";
import type { RateLimiter } from "../../../auth/rate-limit/rate-limiter.js";
import type { Sealer } from "../../../auth/sealed-secret.js";
import { digestsEqual, hashSecret, randomString } from "../../../auth/secrets.js";
import {
  TOTP_DIGITS,
  TOTP_PERIOD_SECONDS,
  generateTotpSecret,
  matchTotp,
  otpauthUri,
} from "../../../auth/totp.js";
import type { MfaConfig } from "../../../config.js";
import type { Db } from "../../../db/database.js";
import type { UserMfaRow } from "../../../db/schema.js";
import { HubError, badRequest, conflict } from "../../../errors.js";
import { mfaRepository } from "./mfa.repository.js";

export interface MfaServiceDeps {
  db: Db;
  clock: () => Date;
  /** Seals TOTP secrets at rest; only the hub's server key opens them. */
  sealer: Sealer;
  /** Counts refused codes per account (see `MfaConfig.failures`). */
  failures: RateLimiter;
  config: MfaConfig;
}

const RECOVERY_CODE_COUNT = 10;
/** Base32's lower-case letters and digits: 16 of them carry 80 bits, and none look alike. */
const RECOVERY_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";
const RECOVERY_CODE_LENGTH = 16;

/** What checking one code came to: accepted (and now used up), wrong, or a code already used. */
type Outcome = "accepted" | "wrong" | "reused";

/** Codes are typed with or without the dashes and spaces they are shown with. */
const compact = (code: string) => code.replace(/[\s-]/g, "").toLowerCase();

function newRecoveryCode(): string {
  const raw = randomString(RECOVERY_ALPHABET, RECOVERY_CODE_LENGTH);
  return [0, 4, 8, 12].map((at) => raw.slice(at, at + 4)).join("-");
}

const notEnabled = () =>
  conflict(
    "mfa_not_enabled",
    "Two-factor authentication is off for this account; turn it on with POST /api/me/mfa/totp first.",
  );

/**
 * Two-factor authentication with TOTP (RFC 6238) and one-time recovery codes:
 * enrollment (start, then confirm with a first code), the check sign-in and
 * reauthentication make, recovery codes, turning it off, and the operator's reset.
 */
export function createMfaService({ db, clock, sealer, failures, config }: MfaServiceDeps) {
  function statusOf(row: UserMfaRow | undefined, unusedCodes: number): MfaStatus {
    const enabled = Boolean(row?.totp_secret);
    return {
      enabled,
      methods: enabled ? ["totp"] : [],
      enrolledAt: row?.enrolled_at ?? null,
      recoveryCodesRemaining: enabled ? unusedCodes : 0,
      enrollmentPending: Boolean(row?.pending_secret),
    };
  }

  async function status(userId: string): Promise<MfaStatus> {
    const [row, codes] = await Promise.all([
      mfaRepository.find(db, userId),
      mfaRepository.unusedRecoveryCodes(db, userId),
    ]);
    return statusOf(row, codes.length);
  }

  /** Fresh recovery codes to show once, and the rows that keep only their digests. */
  function recoveryCodes(userId: string) {
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    const createdAt = clock().toISOString();
    const rows = codes.map((code) => ({
      id: randomUUID(),
      user_id: userId,
      code_hash: hashSecret(compact(code)),
      created_at: createdAt,
      used_at: null,
    }));
    return { codes, rows };
  }

  /**
   * Runs a code check under the account's failure limit: refused codes count,
   * and once they reach the limit every code is refused (even a right one)
   * until the window ends, so codes cannot be guessed by trying them all.
   * Every attempt counts before its check (concurrent guesses cannot all slip
   * under the limit); an accepted one is forgiven.
   */
  async function limited(userId: string, check: () => Promise<Outcome>): Promise<Outcome> {
    const bucket = `mfa-failures:${userId}`;
    const state = await failures.hit(bucket);
    if (!state.allowed) {
      throw new HubError(
        429,
        "too_many_otp_attempts",
        `Too many wrong two-factor codes for this account; wait ${state.resetSeconds} seconds, then try again.`,
        { headers: { "retry-after": String(state.resetSeconds) } },
      );
    }
    const outcome = await check();
    if (outcome === "accepted") await failures.forgive(bucket);
    return outcome;
  }

  /** Accepts a TOTP code of the active secret or an unused recovery code, using it up. */
  async function accept(userId: string, row: UserMfaRow & { totp_secret: string }, otp: string) {
    const code = compact(otp);
    if (/^[0-9]{6}$/.test(code)) {
      const match = matchTotp(sealer.open(row.totp_secret), code, clock().getTime(), row.last_used_step);
      if (typeof match === "string") return match;
      return (await mfaRepository.useStep(db, userId, match.step)) ? "accepted" : "reused";
    }
    const digest = hashSecret(code);
    const unused = await mfaRepository.unusedRecoveryCodes(db, userId);
    const [found] = unused.filter((candidate) => digestsEqual(candidate.code_hash, digest));
    if (!found) return "wrong";
    return (await mfaRepository.spendRecoveryCode(db, found.id, clock().toISOString()))
      ? "accepted"
      : "reused";
  }

  return {
    status,

    /**
     * Checks the second factor of a sign-in or reauthentication whose password
     * was right: nothing to check when MFA is off; otherwise a code is needed,
     * and a wrong or reused one is a 401.
     */
    async verify(userId: string, otp: string | undefined): Promise<void> {
      const row = await mfaRepository.find(db, userId);
      const secret = row?.totp_secret;
      if (!row || !secret) return;
      if (otp === undefined) {
        throw new HubError(
          401,
          "mfa_required",
          "This account uses two-factor authentication: send the 6-digit code your authenticator app shows (or a recovery code) as `otp` along with the password.",
        );
      }
      const outcome = await limited(userId, () => accept(userId, { ...row, totp_secret: secret }, otp));
      if (outcome === "reused") {
        throw new HubError(
          401,
          "otp_already_used",
          "This code was already used; wait for your authenticator app to show the next one and send that.",
        );
      }
      if (outcome === "wrong") {
        throw new HubError(
          401,
          "invalid_otp",
          "The two-factor code is wrong or expired; send the code your authenticator app shows now, or an unused recovery code.",
        );
      }
    },

    /** Starts an enrollment: a new secret, returned this once and kept sealed until a code confirms it. */
    async startTotp(principal: Principal): Promise<TotpEnrollment> {
      const row = await mfaRepository.find(db, principal.userId);
      if (row?.totp_secret) {
        throw conflict(
          "mfa_already_enabled",
          "Two-factor authentication is already on. To move to another app, turn it off (DELETE /api/me/mfa) and enroll again.",
        );
      }
      const secret = generateTotpSecret();
      await mfaRepository.savePending(db, principal.userId, sealer.seal(secret), clock().toISOString());
      return {
        secret,
        otpauthUri: otpauthUri({ secret, issuer: config.issuer, account: principal.handle }),
        issuer: config.issuer,
        accountName: principal.handle,
        algorithm: "SHA1",
        digits: TOTP_DIGITS,
        period: TOTP_PERIOD_SECONDS,
      };
    },

    /** Turns two-factor authentication on once a code of the pending secret checks out; returns the recovery codes once. */
    async confirmTotp(userId: string, otp: string): Promise<MfaRecoveryCodes> {
      const row = await mfaRepository.find(db, userId);
      if (row?.totp_secret) {
        throw conflict("mfa_already_enabled", "Two-factor authentication is already on; nothing to confirm.");
      }
      const pending = row?.pending_secret;
      if (!pending) {
        throw conflict(
          "mfa_enrollment_not_started",
          "No enrollment awaits a code; start one with POST /api/me/mfa/totp.",
        );
      }
      const fresh = recoveryCodes(userId);
      const outcome = await limited(userId, async () => {
        const match = matchTotp(sealer.open(pending), otp, clock().getTime(), null);
        if (typeof match === "string") return match;
        const activated = await db.transaction().execute(async (tx) => {
          if (!(await mfaRepository.activate(tx, userId, pending, clock().toISOString(), match.step))) {
            return false;
          }
          await mfaRepository.replaceRecoveryCodes(tx, userId, fresh.rows);
          return true;
        });
        if (!activated) {
          throw conflict(
            "mfa_enrollment_changed",
            "The enrollment changed while this code was checked (it was restarted or confirmed elsewhere); check GET /api/me/mfa.",
          );
        }
        return "accepted";
      });
      if (outcome !== "accepted") {
        throw badRequest(
          "invalid_otp",
          "The code does not match the new secret; check the app holds it and that this machine's clock is right, then send the code it shows now.",
          "otp",
        );
      }
      return { recoveryCodes: fresh.codes, mfa: await status(userId) };
    },

    /** Replaces every recovery code with new ones, returned this once. */
    async regenerateRecoveryCodes(userId: string): Promise<MfaRecoveryCodes> {
      const row = await mfaRepository.find(db, userId);
      if (!row?.totp_secret) throw notEnabled();
      const fresh = recoveryCodes(userId);
      await db.transaction().execute((tx) => mfaRepository.replaceRecoveryCodes(tx, userId, fresh.rows));
      return { recoveryCodes: fresh.codes, mfa: await status(userId) };
    },

    /** Turns two-factor authentication off (or drops an unconfirmed enrollment) with its recovery codes. */
    async disable(userId: string): Promise<void> {
      if (!(await this.reset(userId))) throw notEnabled();
    },

    /** The operator's reset for a lost device: like turning it off; false when there was nothing to remove. */
    reset: (userId: string): Promise<boolean> =>
      db.transaction().execute((tx) => mfaRepository.remove(tx, userId)),
  };
}

export type MfaService = ReturnType<typeof createMfaService>;
