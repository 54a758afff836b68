import type { DbOrTx } from "../../../db/database.js";
import { cachedRead } from "../../../db/cached-read.js";
import { preparedQuery } from "../../../db/prepared-query.js";
import type { AccessTokenRow } from "../../../db/schema.js";

const findBySecretHash = preparedQuery(
  (db: DbOrTx, secretHash: string) =>
    db
      .selectFrom("access_tokens")
      .innerJoin("users", "users.id", "access_tokens.user_id")
      .selectAll("access_tokens")
      .select(["users.handle", "users.fullname", "users.is_admin"])
      .where("access_tokens.secret_hash", "=", secretHash),
  1,
);

const findById = preparedQuery(
  (db: DbOrTx, tokenId: string) =>
    db
      .selectFrom("access_tokens")
      .innerJoin("users", "users.id", "access_tokens.user_id")
      .selectAll("access_tokens")
      .select(["users.handle", "users.fullname", "users.is_admin"])
      .where("access_tokens.id", "=", tokenId),
  1,
);

/** SQL for access tokens. Secrets are never stored, only their SHA-256 digest. */
export const tokensRepository = {
  insert: (db: DbOrTx, row: AccessTokenRow) => db.insertInto("access_tokens").values(row).execute(),

  /** A token with the handle of the organization it is bounded to, if any. */
  listForUser: (db: DbOrTx, userId: string) =>
    db
      .selectFrom("access_tokens")
      .leftJoin("organizations", "organizations.id", "access_tokens.organization_id")
      .selectAll("access_tokens")
      .select("organizations.handle as organization_handle")
      .where("access_tokens.user_id", "=", userId)
      .orderBy("access_tokens.created_at", "desc")
      .orderBy("access_tokens.id")
      .execute(),

  /**
   * The token and its account, by the digest of the presented secret: every
   * authenticated request runs it, so it is cached until tokens or accounts change.
   */
  findBySecretHash: cachedRead(
    "token by secret",
    async (db: DbOrTx, secretHash: string) => (await findBySecretHash(db, secretHash))[0],
  ),

  /** The token and its account by id, for credentials a signed transfer URL names. */
  findById: cachedRead(
    "token by id",
    async (db: DbOrTx, tokenId: string) => (await findById(db, tokenId))[0],
  ),

  delete: async (db: DbOrTx, userId: string, tokenId: string) =>
    (
      await db
        .deleteFrom("access_tokens")
        .where("id", "=", tokenId)
        .where("user_id", "=", userId)
        .executeTakeFirst()
    ).numDeletedRows > 0n,

  touch: (db: DbOrTx, tokenId: string, at: string) =>
    db.updateTable("access_tokens").set({ last_used_at: at }).where("id", "=", tokenId).execute(),

  markReauthenticated: (db: DbOrTx, tokenId: string, at: string) =>
    db.updateTable("access_tokens").set({ reauthenticated_at: at }).where("id", "=", tokenId).execute(),
};

export type TokenWithOrg = AccessTokenRow & { organization_handle: string | null };

export type TokenWithAccount = NonNullable<Awaited<ReturnType<typeof tokensRepository.findById>>>;
