import { randomUUID } from "node:crypto";
import type { SessionInferenceToken } from "@hub/api";
import { principalFor, type Principal, type TokenCredential } from "../../../auth/credential.js";
import { digestsEqual, hashSecret, randomBase62 } from "../../../auth/secrets.js";
import type { Db } from "../../../db/database.js";
import { forbidden, unauthenticated } from "../../../errors.js";
import { sessionsRepository } from "./sessions.repository.js";
import { sessionInferenceRepository } from "./session-inference.repository.js";

/** Marks these credentials, so the Router looks them up here and never as access tokens. */
const PREFIX = "hubsi_";
/** 43 base62 characters carry 256 bits. */
const SECRET_LENGTH = 43;

/** Whether a presented secret is a session's Router credential (by its prefix alone). */
export function isSessionInferenceToken(secret: string): boolean {
  return secret.startsWith(PREFIX);
}

export interface SessionInferenceDeps {
  db: Db;
  clock: () => Date;
  /** How long a credential lives at most; never past its session's own end. */
  ttlSeconds: number;
}

/**
 * Short-lived Router credentials for a signed-in browser (the web's playground): each holds only
 * `inference:run`, lives a few minutes at most, and belongs to the session that minted it, so it stops
 * working when that session ends. The Hub API never accepts them; only the Router looks them up.
 */
export function createSessionInferenceService({ db, clock, ttlSeconds }: SessionInferenceDeps) {
  return {
    /** Mints a credential for the calling browser session and returns its secret, once. */
    async mint(principal: Principal): Promise<SessionInferenceToken> {
      const { credential } = principal;
      if (credential.type !== "session") {
        throw forbidden(
          "session_required",
          "Only a browser session signed in to the hub can get a playground credential; call the Router with your access token instead.",
        );
      }
      const session = await sessionsRepository.findById(db, credential.sessionId);
      const now = clock();
      if (!session || Date.parse(session.expires_at) <= now.getTime()) {
        throw unauthenticated("invalid_session", "Your session has ended; sign in again.");
      }
      const expiresAt = new Date(
        Math.min(now.getTime() + ttlSeconds * 1000, Date.parse(session.expires_at)),
      ).toISOString();
      await sessionInferenceRepository.deleteExpired(db, now.toISOString());
      const token = `${PREFIX}${randomBase62(SECRET_LENGTH)}`;
      await sessionInferenceRepository.insert(db, {
        id: randomUUID(),
        session_id: credential.sessionId,
        secret_hash: hashSecret(token),
        created_at: now.toISOString(),
        expires_at: expiresAt,
      });
      return { token, expiresAt };
    },

    /**
     * The account behind a presented credential, as a fine-grained token holding only `inference:run`;
     * null when it is unknown, expired, or its session has ended or expired.
     */
    async resolve(secret: string): Promise<Principal | null> {
      if (!isSessionInferenceToken(secret)) return null;
      const digest = hashSecret(secret);
      const row = await sessionInferenceRepository.findBySecretHash(db, digest);
      if (!row || !digestsEqual(row.secret_hash, digest)) return null;
      const now = clock().getTime();
      if (Date.parse(row.expires_at) <= now || Date.parse(row.session_expires_at) <= now) return null;
      const credential: TokenCredential = {
        type: "access_token",
        tokenId: row.id,
        name: "browser session",
        role: null,
        scopes: ["inference:run"],
        organizationId: null,
        repositories: null,
        createdAt: row.created_at,
        reauthenticatedAt: null,
      };
      return principalFor(row, credential);
    },
  };
}

export type SessionInferenceService = ReturnType<typeof createSessionInferenceService>;
