import type { DbOrTx } from "../../../db/database.js";
import type { UserProfileRow } from "../../../db/schema.js";

/** SQL for account profiles and their avatars; every function takes the database or a transaction first. */
export const profileRepository = {
  find: (db: DbOrTx, userId: string) =>
    db.selectFrom("user_profiles").selectAll().where("user_id", "=", userId).executeTakeFirst(),

  /** Writes the profile's text fields, making the row on first edit; the avatar stays as it is. */
  async saveText(db: DbOrTx, row: Omit<UserProfileRow, "avatar_sha256" | "avatar_type">) {
    const { user_id: _key, ...text } = row;
    await db
      .insertInto("user_profiles")
      .values({ ...row, avatar_sha256: null, avatar_type: null })
      .onConflict((oc) => oc.column("user_id").doUpdateSet(text))
      .execute();
  },

  /** Sets (or with nulls, clears) the avatar, making the row on first edit. */
  async saveAvatar(db: DbOrTx, userId: string, avatar: { sha256: string; type: string } | null, at: string) {
    const values = {
      avatar_sha256: avatar?.sha256 ?? null,
      avatar_type: avatar?.type ?? null,
      updated_at: at,
    };
    await db
      .insertInto("user_profiles")
      .values({ user_id: userId, bio: "", website: "", location: "", social: "{}", ...values })
      .onConflict((oc) => oc.column("user_id").doUpdateSet(values))
      .execute();
  },

  /** Whether any account still shows this image. */
  avatarInUse: async (db: DbOrTx, sha256: string) =>
    (await db
      .selectFrom("user_profiles")
      .select("user_id")
      .where("avatar_sha256", "=", sha256)
      .executeTakeFirst()) !== undefined,

  /** Public repositories per kind, for the public profile. */
  publicRepositoryCounts: (db: DbOrTx, ownerId: string) =>
    db
      .selectFrom("repositories")
      .select(["type", (eb) => eb.fn.countAll<string | number>().as("count")])
      .where("owner_id", "=", ownerId)
      .where("private", "=", 0)
      .groupBy("type")
      .execute(),
};
