import { randomUUID } from "node:crypto";
import type { LfsLock, LfsLockList, LfsLockVerifyList } from "@hub/api";
import type { Authorize } from "../../auth/authorizer.js";
import type { Principal } from "../../auth/credential.js";
import type { Db } from "../../db/database.js";
import { repoResource, type FoundRepo } from "../../domain/repositories.js";
import { HubError } from "../../errors.js";
import { lfsLocksRepository, type LfsLockWithOwner } from "./lfs-locks.repository.js";

const DEFAULT_PAGE = 100;
const MAX_PAGE = 1000;

/** A lock as the git-lfs locking API shows it. */
function toLfsLock(lock: LfsLockWithOwner): LfsLock {
  return { id: lock.id, path: lock.path, locked_at: lock.created_at, owner: { name: lock.owner_handle } };
}

/** The offset a `cursor` names (a previous `next_cursor`) and the page size, clamped to 1–1000. */
function pageOf(page: { cursor?: string; limit?: string | number }) {
  return {
    offset: page.cursor !== undefined && /^\d+$/.test(page.cursor) ? Number(page.cursor) : 0,
    limit:
      page.limit === undefined
        ? DEFAULT_PAGE
        : Math.min(Math.max(Number(page.limit) || DEFAULT_PAGE, 1), MAX_PAGE),
  };
}

/** What creating a lock did: `created` one, or found the file `held` by another. */
export type LockOutcome = { created: LfsLock } | { held: LfsLock; message: string };

export interface LfsLocksServiceDeps {
  db: Db;
  authorize: Authorize;
  clock: () => Date;
}

/**
 * Git LFS file locks (https://github.com/git-lfs/git-lfs/blob/main/docs/api/locking.md):
 * a member locks a file so the others' pushes of it are refused until it is unlocked.
 * Callers come admitted to the repository (read to list, write for the rest).
 */
export function createLfsLocksService({ db, authorize, clock }: LfsLocksServiceDeps) {
  /** Locks a file for the caller, unless a lock (perhaps one created a moment ago) already holds it. */
  async function createLock(principal: Principal, repo: FoundRepo, path: string): Promise<LockOutcome> {
    const held = async () => {
      const [existing] = await lfsLocksRepository.list(db, repo.row.id, { path }, 0, 1);
      return (
        existing && {
          held: toLfsLock(existing),
          message: `${path} is already locked by ${existing.owner_handle}.`,
        }
      );
    };
    const existing = await held();
    if (existing) return existing;
    const row = {
      id: randomUUID(),
      repository_id: repo.row.id,
      path,
      owner_id: principal.userId,
      created_at: clock().toISOString(),
    };
    try {
      await lfsLocksRepository.insert(db, row);
    } catch (err) {
      const winner = await held();
      if (winner) return winner;
      throw new Error(`Could not lock ${path}.`, { cause: err });
    }
    return { created: toLfsLock({ ...row, owner_handle: principal.handle }) };
  }

  /** A page of a repository's locks, filtered by path or id. */
  async function listLocks(
    repo: FoundRepo,
    filter: { path?: string; id?: string },
    page: { cursor?: string; limit?: string },
  ): Promise<LfsLockList> {
    const { offset, limit } = pageOf(page);
    const rows = await lfsLocksRepository.list(db, repo.row.id, filter, offset, limit + 1);
    const next = rows.length > limit ? { next_cursor: String(offset + limit) } : {};
    return { locks: rows.slice(0, limit).map(toLfsLock), ...next };
  }

  /** A page of a repository's locks, split into the caller's and everyone else's, as a push checks them. */
  async function verifyLocks(
    principal: Principal,
    repo: FoundRepo,
    page: { cursor?: string; limit?: number },
  ): Promise<LfsLockVerifyList> {
    const { offset, limit } = pageOf(page);
    const rows = await lfsLocksRepository.list(db, repo.row.id, {}, offset, limit + 1);
    const locks = rows.slice(0, limit);
    return {
      ours: locks.filter((lock) => lock.owner_id === principal.userId).map(toLfsLock),
      theirs: locks.filter((lock) => lock.owner_id !== principal.userId).map(toLfsLock),
      ...(rows.length > limit ? { next_cursor: String(offset + limit) } : {}),
    };
  }

  /** Removes a lock: the caller's own, or with `force` another member's when the caller administers the repository. */
  async function unlock(principal: Principal, repo: FoundRepo, id: string, force: boolean): Promise<LfsLock> {
    const [lock] = await lfsLocksRepository.list(db, repo.row.id, { id }, 0, 1);
    if (!lock) throw new HubError(404, "lfs_lock_not_found", "No such lock in this repository.");
    if (lock.owner_id !== principal.userId) {
      if (!force) {
        throw new HubError(
          403,
          "lfs_locked",
          `${lock.path} is locked by ${lock.owner_handle}; unlock with --force if you administer the repository.`,
        );
      }
      // Breaking someone else's lock is an administrator's act, like deleting the repository.
      await authorize(principal, "repo:delete", repoResource(repo));
    }
    await lfsLocksRepository.delete(db, repo.row.id, lock.id);
    return toLfsLock(lock);
  }

  return { createLock, listLocks, verifyLocks, unlock };
}

export type LfsLocksService = ReturnType<typeof createLfsLocksService>;
