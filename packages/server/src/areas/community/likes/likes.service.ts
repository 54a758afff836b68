import type { LikedRepo, LikeState, RepoLiker, RepoType } from "@hub/api";
import type { Principal } from "../../../auth/credential.js";
import type { Db } from "../../../db/database.js";
import { repoResource, type FoundRepo } from "../../../domain/repositories.js";
import { notFound } from "../../../errors.js";
import { usersRepository } from "../../accounts/account/users.repository.js";
import { avatarUrlOf } from "../../accounts/profile/avatar-url.js";
import { viewerAccess } from "../viewer-access.js";
import { likesRepository } from "./likes.repository.js";

/** One page of a list; `next` is the offset of the following page, if any. */
export interface LikesPage<T> {
  items: T[];
  next: number | null;
}

export interface LikesServiceDeps {
  db: Db;
  clock: () => Date;
  publicUrl: string;
}

/**
 * Likes: an account marks a repository it may read, once; the repository's
 * count in `repo_stats` moves in the same transaction as the mark, so it is
 * exact however many like at once. Anyone who may read a repository sees who
 * liked it; an account's likes show each viewer only what it may read.
 */
export function createLikesService({ db, clock, publicUrl }: LikesServiceDeps) {
  async function state(repo: FoundRepo, liked: boolean): Promise<LikeState> {
    return { liked, likes: await likesRepository.count(db, repo.row.id) };
  }

  return {
    /** Likes the repository; liking it again changes nothing. */
    async like(repo: FoundRepo, principal: Principal): Promise<LikeState> {
      const at = clock().toISOString();
      await db.transaction().execute(async (tx) => {
        if (await likesRepository.add(tx, repo.row.id, principal.userId, at))
          await likesRepository.addToCount(tx, repo.row.id, 1);
      });
      return state(repo, true);
    },

    /** Whether the caller likes the repository (never, for the anonymous), and how many do. */
    async likeState(repo: FoundRepo, principal: Principal | null): Promise<LikeState> {
      const liked = principal ? await likesRepository.has(db, repo.row.id, principal.userId) : false;
      return state(repo, liked);
    },

    /** Takes the like back; not liking the repository already is no error. */
    async unlike(repo: FoundRepo, principal: Principal): Promise<LikeState> {
      await db.transaction().execute(async (tx) => {
        if (await likesRepository.remove(tx, repo.row.id, principal.userId))
          await likesRepository.addToCount(tx, repo.row.id, -1);
      });
      return state(repo, false);
    },

    /** The accounts that liked the repository, first like first. */
    async likers(repo: FoundRepo, offset: number, limit: number): Promise<LikesPage<RepoLiker>> {
      const rows = await likesRepository.likers(db, repo.row.id, offset, limit + 1);
      return {
        items: rows.slice(0, limit).map((row) => ({
          type: "user" as const,
          user: row.handle,
          fullname: row.fullname,
          avatarUrl: avatarUrlOf(publicUrl, row.handle, row.avatar_sha256),
        })),
        next: rows.length > limit ? offset + limit : null,
      };
    },

    /** Likes given since a day (`YYYY-MM-DD`), by repository and day: what trending weighs. */
    recentByDay: (since: string) => likesRepository.recentByDay(db, since),

    /** What an account liked, newest first: of private repositories, only those the viewer may read. */
    async likedBy(
      viewer: Principal | null,
      handle: string,
      offset: number,
      limit: number,
    ): Promise<LikesPage<LikedRepo>> {
      const user = await usersRepository.findByHandle(db, handle);
      if (!user) throw notFound(`No user is called "${handle}".`);
      const access = await viewerAccess(db, viewer, clock(), publicUrl);
      const rows = await likesRepository.likedBy(db, user.id, access.ownerIds, offset, limit + 1);
      const items = rows
        .slice(0, limit)
        .filter((row) => {
          const owner =
            row.owner_type === "org"
              ? { type: "org" as const, id: row.owner_id, handle: row.owner_handle }
              : { type: "user" as const, id: row.owner_id, handle: row.owner_handle };
          const found = {
            row,
            owner,
            fullName: `${row.owner_handle}/${row.name}`,
            type: row.type as RepoType,
          };
          return access.may("repo:read", repoResource(found));
        })
        .map((row) => ({
          createdAt: row.liked_at,
          repo: { name: `${row.owner_handle}/${row.name}`, type: row.type as RepoType },
        }));
      return { items, next: rows.length > limit ? offset + limit : null };
    },
  };
}

export type LikesService = ReturnType<typeof createLikesService>;
