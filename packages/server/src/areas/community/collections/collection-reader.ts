import type { Collection } from "@hub/api";
import type { Principal } from "../../../auth/credential.js";
import type { Db } from "../../../db/database.js";
import { likesRepository } from "../likes/likes.repository.js";
import { viewerAccess } from "../viewer-access.js";
import { collectionView } from "./collection-view.js";
import { collectionsRepository as repo, type CollectionRecord } from "./collections.repository.js";

/** How many items beyond those it shows a listing reads of each collection, in case the viewer may not see some. */
const LISTING_SLACK = 28;

export interface CollectionReaderDeps {
  db: Db;
  clock: () => Date;
  publicUrl: string;
}

/**
 * Collections as a viewer sees them: their items, each shown only to a viewer
 * who may read what it names, read in one query for a whole page.
 */
export function createCollectionReader({ db, clock, publicUrl }: CollectionReaderDeps) {
  /** The collections as the viewer sees them, their items loaded in one query. */
  async function present(
    viewer: Principal | null,
    records: CollectionRecord[],
    options: { withPosition: boolean; maxItems?: number },
  ): Promise<Collection[]> {
    // A listing shows a few items of each collection: it reads that many, and some more for the hidden ones.
    const items = await repo.items(
      db,
      records.map((record) => record.id),
      options.maxItems === undefined ? undefined : options.maxItems + LISTING_SLACK,
    );
    const nested = [...new Set(items.flatMap((item) => item.item_collection_id ?? []))];
    const repositories = items.flatMap((item) => item.repository_id ?? []);
    const [access, itemCounts, liked] = await Promise.all([
      viewerAccess(db, viewer, clock(), publicUrl),
      repo.itemCounts(db, nested),
      viewer ? likesRepository.likedAmong(db, viewer.userId, repositories) : new Set<string>(),
    ]);
    const context = { access, itemCounts, liked, publicUrl };
    return records.map((record) =>
      collectionView(
        record,
        items.filter((item) => item.collection_id === record.id),
        context,
        options,
      ),
    );
  }

  /** One collection, whole, as the viewer sees it. */
  async function one(viewer: Principal | null, id: string): Promise<Collection> {
    const record = await repo.find(db, id);
    if (!record) throw new Error(`Collection ${id} vanished while being answered.`);
    const [view] = await present(viewer, [record], { withPosition: true });
    if (!view) throw new Error(`Collection ${id} has no view.`);
    return view;
  }

  return { present, one };
}

export type CollectionReader = ReturnType<typeof createCollectionReader>;
