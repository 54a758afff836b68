import type { FollowEntry } from "@hub/api";
import type { Principal } from "../../../auth/credential.js";
import type { Db } from "../../../db/database.js";
import { badRequest, notFound } from "../../../errors.js";
import { orgsRepository } from "../../organizations/orgs/orgs.repository.js";
import { usersRepository } from "../account/users.repository.js";
import { avatarUrlOf } from "../profile/avatar-url.js";
import { followsRepository, type FollowRow } from "./follows.repository.js";

/** One page of a followers or following list; `next` is the offset of the following page, if any. */
export interface FollowPage {
  items: FollowEntry[];
  next: number | null;
}

export interface FollowsServiceDeps {
  db: Db;
  clock: () => Date;
  publicUrl: string;
}

/** Following accounts and organizations, and the lists of who follows whom, which anyone may read. */
export function createFollowsService({ db, clock, publicUrl }: FollowsServiceDeps) {
  async function user(handle: string) {
    const row = await usersRepository.findByHandle(db, handle);
    if (!row) throw notFound(`No user is called "${handle}".`);
    return row;
  }
  async function organization(handle: string) {
    const row = await orgsRepository.findByHandle(db, handle);
    if (!row) throw notFound(`No organization is called "${handle}".`);
    return row;
  }
  async function page(
    read: (offset: number, limit: number) => Promise<FollowRow[]>,
    offset: number,
    limit: number,
  ): Promise<FollowPage> {
    const rows = await read(offset, limit + 1);
    return {
      items: rows.slice(0, limit).map((row) => ({
        type: "user" as const,
        user: row.handle,
        fullname: row.fullname,
        avatarUrl: avatarUrlOf(publicUrl, row.handle, row.avatar_sha256),
      })),
      next: rows.length > limit ? offset + limit : null,
    };
  }
  const now = () => clock().toISOString();

  return {
    /** Follows an account; following it again changes nothing. */
    async followUser(principal: Principal, handle: string): Promise<void> {
      const followed = await user(handle);
      if (followed.id === principal.userId)
        throw badRequest("invalid_value", "You cannot follow yourself; follow another account.", "handle");
      await followsRepository.followUser(db, principal.userId, followed.id, now());
    },

    /** Stops following an account; not following it already is no error. */
    async unfollowUser(principal: Principal, handle: string): Promise<void> {
      await followsRepository.unfollowUser(db, principal.userId, (await user(handle)).id);
    },

    async followOrganization(principal: Principal, handle: string): Promise<void> {
      await followsRepository.followOrganization(
        db,
        principal.userId,
        (await organization(handle)).id,
        now(),
      );
    },

    async unfollowOrganization(principal: Principal, handle: string): Promise<void> {
      await followsRepository.unfollowOrganization(db, principal.userId, (await organization(handle)).id);
    },

    async followersOfUser(handle: string, offset: number, limit: number): Promise<FollowPage> {
      const { id } = await user(handle);
      return page((o, l) => followsRepository.followersOfUser(db, id, o, l), offset, limit);
    },

    async followedBy(handle: string, offset: number, limit: number): Promise<FollowPage> {
      const { id } = await user(handle);
      return page((o, l) => followsRepository.followedBy(db, id, o, l), offset, limit);
    },

    async followersOfOrganization(handle: string, offset: number, limit: number): Promise<FollowPage> {
      const { id } = await organization(handle);
      return page((o, l) => followsRepository.followersOfOrganization(db, id, o, l), offset, limit);
    },
  };
}

export type FollowsService = ReturnType<typeof createFollowsService>;
