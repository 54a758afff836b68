import type { Db } from "../../../db/database.js";
import type { XetXorbRow } from "../../../db/schema.js";
import type { RepoLookup } from "../../../domain/repositories.js";
import type { CasCaller, XetAccessService } from "./xet-access.js";
import { unpackChunks, type StoredChunkLayout } from "./xet-packing.js";
import { xetRepository } from "./xet.repository.js";

/** A stored xorb a caller may use, with its chunk table unpacked. */
export interface UsableXorb {
  row: XetXorbRow;
  chunks: StoredChunkLayout[];
}

/**
 * Which stored xorbs a caller may use, in a shard or a deduplication answer: those uploaded for the repository
 * of the caller's token, and those uploaded for any repository the caller may read (`repo:download` through
 * `decide()`). A xorb of a private repository the caller may not read is, for them, not there.
 */
export function createXorbCatalog({
  db,
  repos,
  access,
}: {
  db: Db;
  repos: RepoLookup;
  access: Pick<XetAccessService, "mayRead">;
}) {
  return {
    async usable(caller: CasCaller, hashes: string[]): Promise<Map<string, UsableXorb>> {
      const unique = [...new Set(hashes)];
      const rows = await xetRepository.xorbs(db, unique);
      const links = await xetRepository.linksOf(
        db,
        rows.map((row) => row.hash),
      );
      const readable = new Map<string, Promise<boolean>>([[caller.repo.row.id, Promise.resolve(true)]]);
      const mayRead = (repositoryId: string) => {
        let answer = readable.get(repositoryId);
        if (!answer) {
          answer = repos
            .findById(repositoryId)
            .then((repo) => (repo ? access.mayRead(caller.principal, repo) : false));
          readable.set(repositoryId, answer);
        }
        return answer;
      };
      const usable = new Map<string, UsableXorb>();
      for (const row of rows) {
        for (const repositoryId of links.get(row.hash) ?? []) {
          if (await mayRead(repositoryId)) {
            usable.set(row.hash, { row, chunks: unpackChunks(row.chunks) });
            break;
          }
        }
      }
      return usable;
    },
  };
}

export type XorbCatalog = ReturnType<typeof createXorbCatalog>;
