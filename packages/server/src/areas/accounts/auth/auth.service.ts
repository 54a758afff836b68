import { randomUUID } from "node:crypto";
import {
  principalFor,
  type AccountColumns,
  type Principal,
  type SessionCredential,
} from "../../../auth/credential.js";
import type { SessionRow } from "../../../db/schema.js";
import { verifyPassword } from "../../../auth/passwords.js";
import { digestsEqual, hashSecret, randomBase62 } from "../../../auth/secrets.js";
import type { Db } from "../../../db/database.js";
import { HubError, badRequest, unauthenticated } from "../../../errors.js";
import { usersRepository } from "../account/users.repository.js";
import type { MfaService } from "../mfa/mfa.service.js";
import type { TokensService } from "../tokens/tokens.service.js";
import { sessionsRepository } from "./sessions.repository.js";

export interface AuthServiceDeps {
  db: Db;
  clock: () => Date;
  tokens: TokensService;
  /** Asks for the second factor after a right password, when the account has it on. */
  mfa: MfaService;
  sessionTtlSeconds: number;
  reauthWindowSeconds: number;
}

const SESSION_SECRET_LENGTH = 43;

/** Password sign-in, browser sessions and reauthentication ("sudo mode"). */
export function createAuthService({
  db,
  clock,
  tokens,
  mfa,
  sessionTtlSeconds,
  reauthWindowSeconds,
}: AuthServiceDeps) {
  function usableSession(row: SessionRow & AccountColumns): Principal | null {
    if (Date.parse(row.expires_at) <= clock().getTime()) return null;
    const credential: SessionCredential = {
      type: "session",
      sessionId: row.id,
      reauthenticatedAt: row.reauthenticated_at,
    };
    return principalFor(row, credential);
  }

  return {
    /**
     * Checks a handle-or-email and password, then the two-factor code when the
     * account has it on; on success opens a session and returns its secret once.
     */
    async login(login: string, password: string, otp?: string) {
      const user = await usersRepository.findByLogin(db, login.trim());
      const valid = await verifyPassword(password, user?.password_hash ?? null);
      if (!user || !valid) {
        throw new HubError(
          401,
          "invalid_credentials",
          "The user name or password is wrong; check both and try again.",
        );
      }
      await mfa.verify(user.id, otp);
      await sessionsRepository.deleteExpired(db, clock().toISOString());
      const secret = randomBase62(SESSION_SECRET_LENGTH);
      const now = clock();
      const expiresAt = new Date(now.getTime() + sessionTtlSeconds * 1000).toISOString();
      const id = randomUUID();
      await sessionsRepository.insert(db, {
        id,
        user_id: user.id,
        secret_hash: hashSecret(secret),
        created_at: now.toISOString(),
        expires_at: expiresAt,
        reauthenticated_at: now.toISOString(),
      });
      return { id, secret, handle: user.handle, expiresAt };
    },

    /**
     * Ends a browser session. Other credentials are refused rather than
     * answered as if signed out: a token stays valid until it is revoked.
     */
    async logout(principal: Principal): Promise<void> {
      if (principal.credential.type !== "session") {
        throw badRequest(
          "logout_needs_session",
          "Logout ends a browser session; this request sent an access token, which stays valid. To revoke it, DELETE /api/me/tokens/{tokenId} (GET /api/me/tokens lists them), or run `hub token revoke`.",
        );
      }
      await sessionsRepository.delete(db, principal.credential.sessionId);
    },

    /** The account behind a session cookie, or null when it is unknown or expired. */
    async resolveSession(secret: string): Promise<Principal | null> {
      const digest = hashSecret(secret);
      const row = await sessionsRepository.findBySecretHash(db, digest);
      if (!row || !digestsEqual(row.secret_hash, digest)) return null;
      return usableSession(row);
    },

    /** The same, by session id, for a signed transfer URL issued to that session. */
    async resolveSessionById(sessionId: string): Promise<Principal | null> {
      const row = await sessionsRepository.findById(db, sessionId);
      return row ? usableSession(row) : null;
    },

    /**
     * Marks the calling credential as recently reauthenticated once the
     * password (and the two-factor code, when it is on) checks out.
     */
    async reauthenticate(principal: Principal, password: string, otp?: string): Promise<string> {
      const user = await usersRepository.findById(db, principal.userId);
      if (!user || !(await verifyPassword(password, user.password_hash))) {
        throw unauthenticated(
          "invalid_credentials",
          "The password is wrong; reauthentication needs your account password.",
        );
      }
      await mfa.verify(user.id, otp);
      const { credential } = principal;
      if (credential.type === "access_token") await tokens.markReauthenticated(credential.tokenId);
      else if (credential.type === "session") {
        await sessionsRepository.markReauthenticated(db, credential.sessionId, clock().toISOString());
      } else throw unauthenticated("unauthenticated", "Reauthenticate with a token or a signed-in session.");
      return new Date(clock().getTime() + reauthWindowSeconds * 1000).toISOString();
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
