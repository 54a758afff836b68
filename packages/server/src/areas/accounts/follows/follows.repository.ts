import type { SelectQueryBuilder } from "kysely";
import type { DbOrTx } from "../../../db/database.js";
import type { Database } from "../../../db/schema.js";

/** An account in a followers or following list: what its entry shows. */
export interface FollowRow {
  handle: string;
  fullname: string;
  avatar_sha256: string | null;
}

/** A page of the accounts `u` a follows query `f` joins, with what their entries show, oldest follow first. */
function page(
  query: SelectQueryBuilder<
    Database & { f: { created_at: string } } & { u: Database["users"] },
    "f" | "u",
    object
  >,
  offset: number,
  limit: number,
): Promise<FollowRow[]> {
  return query
    .leftJoin("user_profiles as p", "p.user_id", "u.id")
    .select(["u.handle", "u.fullname", "p.avatar_sha256"])
    .orderBy("f.created_at")
    .orderBy("u.handle")
    .offset(offset)
    .limit(limit)
    .execute();
}

/** SQL for who follows whom: accounts following accounts and organizations. */
export const followsRepository = {
  followUser: (db: DbOrTx, followerId: string, userId: string, at: string) =>
    db
      .insertInto("user_follows")
      .values({ follower_id: followerId, user_id: userId, created_at: at })
      .onConflict((oc) => oc.columns(["follower_id", "user_id"]).doNothing())
      .execute(),

  unfollowUser: (db: DbOrTx, followerId: string, userId: string) =>
    db
      .deleteFrom("user_follows")
      .where("follower_id", "=", followerId)
      .where("user_id", "=", userId)
      .execute(),

  followOrganization: (db: DbOrTx, followerId: string, organizationId: string, at: string) =>
    db
      .insertInto("organization_follows")
      .values({ follower_id: followerId, organization_id: organizationId, created_at: at })
      .onConflict((oc) => oc.columns(["follower_id", "organization_id"]).doNothing())
      .execute(),

  unfollowOrganization: (db: DbOrTx, followerId: string, organizationId: string) =>
    db
      .deleteFrom("organization_follows")
      .where("follower_id", "=", followerId)
      .where("organization_id", "=", organizationId)
      .execute(),

  /** The accounts following an account, oldest follow first. */
  followersOfUser: (db: DbOrTx, userId: string, offset: number, limit: number): Promise<FollowRow[]> =>
    page(
      db
        .selectFrom("user_follows as f")
        .innerJoin("users as u", "u.id", "f.follower_id")
        .where("f.user_id", "=", userId),
      offset,
      limit,
    ),

  /** The accounts an account follows, oldest follow first. */
  followedBy: (db: DbOrTx, followerId: string, offset: number, limit: number): Promise<FollowRow[]> =>
    page(
      db
        .selectFrom("user_follows as f")
        .innerJoin("users as u", "u.id", "f.user_id")
        .where("f.follower_id", "=", followerId),
      offset,
      limit,
    ),

  /** The accounts following an organization, oldest follow first. */
  followersOfOrganization: (
    db: DbOrTx,
    organizationId: string,
    offset: number,
    limit: number,
  ): Promise<FollowRow[]> =>
    page(
      db
        .selectFrom("organization_follows as f")
        .innerJoin("users as u", "u.id", "f.follower_id")
        .where("f.organization_id", "=", organizationId),
      offset,
      limit,
    ),

  /** How many follow an account, and how many accounts it follows. */
  async userCounts(db: DbOrTx, userId: string): Promise<{ followers: number; following: number }> {
    const [followers, following] = await Promise.all([
      db
        .selectFrom("user_follows")
        .select((eb) => eb.fn.countAll().as("count"))
        .where("user_id", "=", userId)
        .executeTakeFirstOrThrow(),
      db
        .selectFrom("user_follows")
        .select((eb) => eb.fn.countAll().as("count"))
        .where("follower_id", "=", userId)
        .executeTakeFirstOrThrow(),
    ]);
    return { followers: Number(followers.count), following: Number(following.count) };
  },

  async organizationFollowers(db: DbOrTx, organizationId: string): Promise<number> {
    const row = await db
      .selectFrom("organization_follows")
      .select((eb) => eb.fn.countAll().as("count"))
      .where("organization_id", "=", organizationId)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  },
};
