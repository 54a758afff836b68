import { randomUUID } from "node:crypto";
import { SCOPES, type CreatedToken, type Scope, type TokenMetadata, type TokenRole } from "@hub/api";
import { principalFor, type TokenCredential } from "../../../auth/credential.js";
import { ROLE_SCOPES, roleOfScopes } from "../../../auth/scopes.js";
import { digestsEqual, hashSecret, randomBase62 } from "../../../auth/secrets.js";
import type { Db } from "../../../db/database.js";
import type { AccessTokenRow } from "../../../db/schema.js";
import { badRequest, notFound } from "../../../errors.js";
import { orgsRepository } from "../../organizations/orgs/orgs.repository.js";
import { tokensRepository, type TokenWithAccount, type TokenWithOrg } from "./tokens.repository.js";

/** Random characters after the prefix: 34 base62 characters carry 202 bits. */
const SECRET_LENGTH = 34;
/** How many secret characters the owner sees later to recognise a token. */
const VISIBLE_CHARACTERS = 4;
/** last_used_at is written at most this often per token, to keep the hot path read-only. */
const TOUCH_INTERVAL_MS = 60_000;

/** What a token is asked to be; the API gives role read|write, the admin CLI may give admin. */
export interface TokenRequest {
  name: string;
  expiresAt: string | null;
  role?: TokenRole;
  scopes?: string[];
  organization?: string;
  repositories?: string[];
}

/** Turns a stored token into its API shape; role tokens list the scopes their role implies. */
export function toTokenMetadata(row: TokenWithOrg): TokenMetadata {
  const scopes = parseList<Scope>(row.scopes);
  return {
    token_id: row.id,
    token_prefix: row.token_prefix,
    name: row.name,
    role: (row.role as TokenRole | null) ?? roleOfScopes(scopes ?? []),
    scopes: scopes ?? [...ROLE_SCOPES[(row.role as TokenRole | null) ?? "read"]],
    kind: scopes ? "fine-grained" : "role",
    created_at: row.created_at,
    expires_at: row.expires_at,
    last_used_at: row.last_used_at,
    organization_id: row.organization_id,
    organization_handle: row.organization_handle,
    repositories: parseList<string>(row.repositories),
  };
}

function parseList<T extends string>(json: string | null): T[] | null {
  return json === null ? null : (JSON.parse(json) as T[]);
}

export interface TokensServiceDeps {
  db: Db;
  clock: () => Date;
  secretPrefix: string;
}

/** Access tokens: minting, listing, revoking, and resolving a presented secret. */
export function createTokensService({ db, clock, secretPrefix }: TokensServiceDeps) {
  /** The rules the schema cannot state; each failure names its field. */
  async function validate(userId: string, request: TokenRequest) {
    if ((request.role === undefined) === (request.scopes === undefined)) {
      throw badRequest(
        "invalid_token_request",
        "Give exactly one of `scopes` (a fine-grained token) or `role` (read or write).",
        request.role === undefined ? "scopes" : "role",
      );
    }
    if (request.scopes) {
      const unknown = request.scopes.find((scope) => !SCOPES.some((known) => known === scope));
      if (unknown !== undefined)
        throw badRequest("invalid_scope", `Unknown scope "${unknown}"; use ${SCOPES.join(", ")}.`, "scopes");
    }
    if (request.repositories && !request.scopes) {
      throw badRequest(
        "invalid_token_request",
        "`repositories` can only bound a fine-grained token: give `scopes` instead of `role`.",
        "repositories",
      );
    }
    if (request.expiresAt !== null && Date.parse(request.expiresAt) <= clock().getTime()) {
      throw badRequest("invalid_expiry", "`expires_at` must be in the future.", "expires_at");
    }
    if (request.organization === undefined) return null;
    const org = await orgsRepository.findByHandle(db, request.organization);
    const role = org ? await orgsRepository.membershipRole(db, org.id, userId) : null;
    if (!org || role === null) {
      throw badRequest(
        "invalid_organization",
        `You are not a member of an organization called "${request.organization}".`,
        "organization",
      );
    }
    const outside = request.repositories?.find((repo) => !repo.startsWith(`${org.handle}/`));
    if (outside !== undefined) {
      throw badRequest(
        "invalid_token_request",
        `Repository ${outside} is outside the organization ${org.handle} the token is bounded to.`,
        "repositories",
      );
    }
    return org;
  }

  /**
   * When each token was last noted as used by this process; the row itself
   * may come from the read cache, which a touch (rightly) does not retire.
   */
  const touchedAt = new Map<string, number>();

  /** The principal of a stored token, or null once it has expired; notes its use at most once a minute. */
  async function usable(row: TokenWithAccount) {
    const now = clock();
    if (row.expires_at !== null && Date.parse(row.expires_at) <= now.getTime()) return null;
    const lastUsed = touchedAt.get(row.id) ?? (row.last_used_at === null ? 0 : Date.parse(row.last_used_at));
    if (now.getTime() - lastUsed > TOUCH_INTERVAL_MS) {
      if (touchedAt.size >= 10_000) touchedAt.clear();
      touchedAt.set(row.id, now.getTime());
      await tokensRepository.touch(db, row.id, now.toISOString());
    }
    const credential: TokenCredential = {
      type: "access_token",
      tokenId: row.id,
      name: row.name,
      role: row.role as TokenRole | null,
      scopes: parseList<Scope>(row.scopes),
      organizationId: row.organization_id,
      repositories: parseList<string>(row.repositories),
      createdAt: row.created_at,
      reauthenticatedAt: row.reauthenticated_at,
    };
    return principalFor(row, credential);
  }

  return {
    /** Mints a token and returns its secret, the only time the secret leaves the hub. */
    async create(userId: string, request: TokenRequest): Promise<CreatedToken> {
      const org = await validate(userId, request);
      const secret = `${secretPrefix}${randomBase62(SECRET_LENGTH)}`;
      const row: AccessTokenRow = {
        id: randomUUID(),
        user_id: userId,
        name: request.name,
        secret_hash: hashSecret(secret),
        token_prefix: secret.slice(0, secretPrefix.length + VISIBLE_CHARACTERS),
        role: request.role ?? null,
        scopes: request.scopes ? JSON.stringify(request.scopes) : null,
        organization_id: org?.id ?? null,
        repositories: request.repositories ? JSON.stringify(request.repositories) : null,
        created_at: clock().toISOString(),
        expires_at: request.expiresAt === null ? null : new Date(request.expiresAt).toISOString(),
        last_used_at: null,
        reauthenticated_at: null,
      };
      await tokensRepository.insert(db, row);
      return { ...toTokenMetadata({ ...row, organization_handle: org?.handle ?? null }), token: secret };
    },

    async list(userId: string): Promise<TokenMetadata[]> {
      return (await tokensRepository.listForUser(db, userId)).map(toTokenMetadata);
    },

    /** Deletes the token; it fails on every surface from the next request on. */
    async revoke(userId: string, tokenId: string): Promise<void> {
      if (!(await tokensRepository.delete(db, userId, tokenId))) {
        throw notFound("No token with that id belongs to your account; list them with GET /api/me/tokens.");
      }
    },

    /** The account and credential behind a presented secret, or null when it is unknown or expired. */
    async resolve(secret: string) {
      const digest = hashSecret(secret);
      const row = await tokensRepository.findBySecretHash(db, digest);
      if (!row || !digestsEqual(row.secret_hash, digest)) return null;
      return usable(row);
    },

    /** The same, by token id: a signed transfer URL names the token it was issued to, which must still be valid. */
    async resolveById(tokenId: string) {
      const row = await tokensRepository.findById(db, tokenId);
      return row ? usable(row) : null;
    },

    markReauthenticated: (tokenId: string) =>
      tokensRepository.markReauthenticated(db, tokenId, clock().toISOString()),
  };
}

export type TokensService = ReturnType<typeof createTokensService>;
