import { SPACE_SDKS } from "@hub/api";
import type { Db } from "../../../db/database.js";
import type { FoundRepo } from "../../../domain/repositories.js";
import { lfsObjectsRepository } from "../../../git/lfs/lfs-objects.repository.js";
import { ZERO_OID } from "../../../git/repo-files.js";
import type { RepoStorage } from "../../../git/repo-storage.js";
import type { ReposService } from "./repos.service.js";

/**
 * Copies a repository, with its branches, tags and LFS objects, to a new one
 * (the caller was authorized on the target's namespace); the copy is not
 * gated and keeps a Space's SDK. A copy that fails half-way is removed.
 */
export function createRepoDuplication({
  db,
  repos,
  storage,
  clock,
}: {
  db: Db;
  repos: ReposService;
  storage: RepoStorage;
  clock: () => Date;
}) {
  return async function duplicate(
    source: FoundRepo,
    target: { owner: string; name: string; private: boolean },
    actor: string,
  ): Promise<FoundRepo> {
    const copy = await repos.create({
      ...target,
      type: source.type,
      spaceSdk: SPACE_SDKS.find((sdk) => sdk === source.row.space_sdk),
      actor,
    });
    const branch = `refs/heads/${copy.row.default_branch}`;
    const initial = await storage.resolveRef(copy.row.id, branch);
    try {
      const refs = await storage.copyRefs(source.row.id, copy.row.id);
      const at = clock().toISOString();
      for (const object of await lfsObjectsRepository.ofRepository(db, source.row.id))
        await lfsObjectsRepository.link(db, copy.row.id, object.oid, object.size, at);
      await repos.refsUpdated(
        copy,
        refs.map(({ ref, sha }) => ({
          ref,
          oldSha: ref === branch && initial ? initial : ZERO_OID,
          newSha: sha,
        })),
        actor,
      );
      return copy;
    } catch (err) {
      await repos.remove(copy, actor);
      throw err;
    }
  };
}

export type RepoDuplication = ReturnType<typeof createRepoDuplication>;
