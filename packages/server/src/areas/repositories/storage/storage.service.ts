import type { LfsFileEntry, RepoStorageEntry } from "@hub/api";
import type { Principal } from "../../../auth/credential.js";
import type { Db } from "../../../db/database.js";
import { HubError, badRequest, conflict, revisionNotFound } from "../../../errors.js";
import { lfsObjectsRepository } from "../../../git/lfs/lfs-objects.repository.js";
import type { ObjectStore } from "../../../git/lfs/object-store.js";
import { removeUnheldObjects } from "../../../git/lfs/unheld-objects.js";
import { HistoryMovedError, type RepoMaintenance } from "../../../git/repo-maintenance.js";
import type { RepoStorage } from "../../../git/repo-storage.js";
import type { FoundRepo } from "../../../domain/repositories.js";
import { usersRepository } from "../../accounts/account/users.repository.js";
import type { ReposService } from "../repos/repos.service.js";
import { storageRepository } from "./storage.repository.js";

const OID = /^[0-9a-f]{64}$/;

/** What a permanent deletion of LFS files did. */
export interface LfsDeletion {
  /** The objects unlinked from the repository. */
  deleted: Array<{ oid: string; size: number }>;
  /** Bytes removed from storage: objects no other repository links. */
  freedBytes: number;
  /** Refs whose history was rewritten without the pointers. */
  rewrittenRefs: string[];
}

/** What one collection pass freed. */
export interface Collection {
  unlinked: number;
  freedBytes: number;
}

export interface StorageServiceDeps {
  db: Db;
  repos: ReposService;
  storage: RepoStorage;
  maintenance: RepoMaintenance;
  store: ObjectStore;
  clock: () => Date;
  /** What each repository stores through Xet (the Xet area counts it). */
  xetStorageOf: (
    repositoryIds: string[],
  ) => Promise<Map<string, { xorbBytes: number; xetOids: ReadonlySet<string> }>>;
  /** How long an LFS object may stay linked to a repository without a pointer to it (an upload awaiting its commit). */
  lfsGraceSeconds: number;
}

/**
 * What repositories store and how it is reclaimed: the storage each
 * repository of a namespace uses, its LFS objects, their permanent deletion,
 * squashing a branch's history, and the collector that frees LFS objects no
 * history points to any more.
 */
export function createStorageService(deps: StorageServiceDeps) {
  const { db, repos, storage, maintenance, store, clock } = deps;

  async function refuseIfHistoryProtected(repo: FoundRepo, what: string): Promise<void> {
    if (await maintenance.forcePushDenied(repo.row.id)) {
      throw conflict(
        "history_protected",
        `${what} rewrites history, which ${repo.fullName} protects (denyForcePush); turn that setting off first if you mean it. Nothing was changed.`,
      );
    }
  }

  /** Unlinks objects from a repository and removes from storage those no repository links any more. */
  async function release(repositoryId: string, objects: Array<{ oid: string; size: number }>) {
    await storageRepository.unlink(
      db,
      repositoryId,
      objects.map((o) => o.oid),
    );
    return removeUnheldObjects(db, store, objects);
  }

  /**
   * The bytes each repository uses: its git objects, its LFS objects, and for its Xet files their xorbs (a chunk
   * shared by two of its files once) instead of the LFS copies.
   */
  async function bytesOf(ids: string[]): Promise<Map<string, number>> {
    const [objects, xet] = await Promise.all([
      storageRepository.lfsObjectsOf(db, ids),
      deps.xetStorageOf(ids),
    ]);
    const lfs = new Map<string, number>();
    for (const object of objects) {
      if (xet.get(object.repository_id)?.xetOids.has(object.oid)) continue;
      lfs.set(object.repository_id, (lfs.get(object.repository_id) ?? 0) + object.size);
    }
    const sizes = await Promise.all(
      ids.map(
        async (id) => (await maintenance.diskUsage(id)) + (lfs.get(id) ?? 0) + (xet.get(id)?.xorbBytes ?? 0),
      ),
    );
    return new Map(ids.map((id, i) => [id, sizes[i] ?? 0]));
  }

  return {
    /** What a repository stores, in bytes (`usedStorage` of its info), counted as `repositoriesOf` counts it. */
    async usedStorage(repo: FoundRepo): Promise<number> {
      return (await bytesOf([repo.row.id])).get(repo.row.id) ?? 0;
    },

    /** Each repository of an account or organization with the bytes it uses (git, LFS and Xet xorbs) and its share of the total. */
    async repositoriesOf(ownerId: string, ownerHandle: string): Promise<RepoStorageEntry[]> {
      const rows = await storageRepository.reposOfOwner(db, ownerId);
      const bytes = await bytesOf(rows.map((row) => row.id));
      const sized = rows.map((row) => ({ row, bytes: bytes.get(row.id) ?? 0 }));
      const total = sized.reduce((sum, entry) => sum + entry.bytes, 0);
      return sized.map(({ row, bytes }) => ({
        id: `${ownerHandle}/${row.name}`,
        type: row.type as RepoStorageEntry["type"],
        updatedAt: row.updated_at || row.created_at,
        visibility: row.private === 1 ? ("private" as const) : ("public" as const),
        storage: bytes,
        storagePercent: total === 0 ? 0 : Math.round((bytes / total) * 10000) / 100,
      }));
    },

    /** The LFS objects of a repository, each with a path that points to it somewhere in the history (empty when none does). */
    async lfsFiles(repo: FoundRepo): Promise<LfsFileEntry[]> {
      const [objects, uses] = await Promise.all([
        lfsObjectsRepository.ofRepository(db, repo.row.id),
        maintenance.lfsUses(repo.row.id, "reachable"),
      ]);
      return objects.map((object) => ({
        fileOid: object.oid,
        oid: object.oid,
        filename: uses.get(object.oid)?.path ?? "",
        pushedAt: object.created_at,
        ref: null,
        size: object.size,
      }));
    },

    /**
     * Permanently deletes LFS objects from a repository. An object a ref's
     * files still use is refused (delete or replace the file first); with
     * `rewriteHistory`, the pointers to them leave every commit of the
     * history; the objects leave storage once no repository links them.
     */
    async deleteLfsFiles(
      repo: FoundRepo,
      oids: string[],
      rewriteHistory: boolean,
      actor: string,
    ): Promise<LfsDeletion> {
      const wanted = [...new Set(oids)];
      const bad = wanted.find((oid) => !OID.test(oid));
      if (bad !== undefined)
        throw badRequest(
          "invalid_value",
          `${bad} is not an LFS object id (64 lower-case hex characters).`,
          "sha",
        );
      const linked = new Map(
        (await lfsObjectsRepository.ofRepository(db, repo.row.id)).map((object) => [object.oid, object.size]),
      );
      const unknown = wanted.find((oid) => !linked.has(oid));
      if (unknown !== undefined) {
        throw new HubError(
          404,
          "not_found",
          `${unknown} is not an LFS object of ${repo.fullName} (list_lfs_files lists them); nothing was deleted.`,
        );
      }
      const inUse = await maintenance.lfsUses(repo.row.id, "tips");
      const used = wanted.find((oid) => inUse.has(oid));
      if (used !== undefined) {
        throw conflict(
          "lfs_object_in_use",
          `${used} is the content of ${inUse.get(used)?.path ?? "a file"} on a branch, tag or pull request of ${repo.fullName}: delete or replace that file first. Nothing was deleted.`,
        );
      }
      let rewrittenRefs: string[] = [];
      if (rewriteHistory) {
        const reachable = await maintenance.lfsUses(repo.row.id, "reachable");
        const blobs = new Set(
          wanted.map((oid) => reachable.get(oid)?.blob).filter((blob): blob is string => blob !== undefined),
        );
        if (blobs.size > 0) await refuseIfHistoryProtected(repo, "Deleting LFS files with rewriteHistory");
        try {
          const moves = await maintenance.rewriteWithout(repo.row.id, blobs);
          await repos.refsUpdated(repo, moves, actor);
          rewrittenRefs = moves.map((move) => move.ref);
        } catch (err) {
          if (err instanceof HistoryMovedError)
            throw conflict(
              "ref_changed",
              "A ref moved while the history was rewritten; nothing was deleted. Retry.",
            );
          throw err;
        }
      }
      const deleted = wanted.map((oid) => ({ oid, size: linked.get(oid) ?? 0 }));
      return { deleted, freedBytes: await release(repo.row.id, deleted), rewrittenRefs };
    },

    /** Replaces a branch's history by one commit with its files; the old commits stay reachable only from other refs. */
    async superSquash(
      repo: FoundRepo,
      principal: Principal,
      branch: string,
      message: string,
    ): Promise<{ commitOid: string }> {
      const head = await storage.resolveRef(repo.row.id, `refs/heads/${branch}`);
      if (!head) throw revisionNotFound(branch, repo.fullName);
      await refuseIfHistoryProtected(repo, "Squashing a branch");
      const user = await usersRepository.findById(db, principal.userId);
      try {
        const commitOid = await maintenance.squash(repo.row.id, {
          branch,
          head,
          message,
          author: {
            name: user?.fullname || principal.handle,
            email: user?.email ?? `${principal.handle}@users.noreply`,
          },
        });
        await repos.refsUpdated(
          repo,
          [{ ref: `refs/heads/${branch}`, oldSha: head, newSha: commitOid }],
          principal.handle,
        );
        return { commitOid };
      } catch (err) {
        if (err instanceof HistoryMovedError)
          throw conflict(
            "branch_moved",
            `${branch} moved while it was squashed; nothing was changed. Retry.`,
          );
        throw err;
      }
    },

    /**
     * One pass of the collector: in each repository, the LFS objects linked
     * longer than the grace period that no commit of any kept ref points to
     * are unlinked, and removed from storage when no repository links them.
     * An object linked within the grace period (an upload whose commit has
     * not come yet) is never touched.
     */
    async collect(): Promise<Collection> {
      const cutoff = new Date(clock().getTime() - deps.lfsGraceSeconds * 1000).toISOString();
      let unlinked = 0;
      let freedBytes = 0;
      for (const repositoryId of await storageRepository.reposWithLinksBefore(db, cutoff)) {
        const [objects, uses] = await Promise.all([
          lfsObjectsRepository.ofRepository(db, repositoryId),
          maintenance.lfsUses(repositoryId, "reachable"),
        ]);
        const unused = objects.filter((object) => object.created_at < cutoff && !uses.has(object.oid));
        if (unused.length === 0) continue;
        await storageRepository.unlink(
          db,
          repositoryId,
          unused.map((object) => object.oid),
        );
        // A commit may have pointed to one of them meanwhile: it keeps its object.
        const now = await maintenance.lfsUses(repositoryId, "reachable");
        const relinked = unused.filter((object) => now.has(object.oid));
        for (const object of relinked)
          await lfsObjectsRepository.link(db, repositoryId, object.oid, object.size, object.created_at);
        const freed = unused.filter((object) => !now.has(object.oid));
        freedBytes += await removeUnheldObjects(db, store, freed);
        unlinked += freed.length;
      }
      return { unlinked, freedBytes };
    },
  };
}

export type StorageService = ReturnType<typeof createStorageService>;
