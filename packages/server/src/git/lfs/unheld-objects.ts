import type { DbOrTx } from "../../db/database.js";
import { lfsObjectsRepository } from "./lfs-objects.repository.js";
import type { ObjectStore } from "./object-store.js";

/**
 * Removes from the store those of the objects no repository links any more
 * (after a repository, an account or a link went); returns the bytes freed
 * (of the objects whose size was given).
 */
export async function removeUnheldObjects(
  db: DbOrTx,
  store: ObjectStore,
  objects: Array<{ oid: string; size?: number }>,
): Promise<number> {
  const held = await lfsObjectsRepository.heldAnywhere(
    db,
    objects.map((object) => object.oid),
  );
  let freedBytes = 0;
  for (const object of objects) {
    if (held.has(object.oid)) continue;
    await store.remove(object.oid);
    freedBytes += object.size ?? 0;
  }
  return freedBytes;
}
