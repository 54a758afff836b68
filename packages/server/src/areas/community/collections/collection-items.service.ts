import { randomBytes } from "node:crypto";
import type {
  AddCollectionItemRequest,
  Collection,
  CollectionItemType,
  RepoType,
  UpdateCollectionItemRequest,
} from "@hub/api";
import type { Principal } from "../../../auth/credential.js";
import type { Db } from "../../../db/database.js";
import { repoResource, type RepoLookup } from "../../../domain/repositories.js";
import { HubError, badRequest } from "../../../errors.js";
import { viewerAccess } from "../viewer-access.js";
import type { CollectionReader } from "./collection-reader.js";
import { itemNotFound, moved, note } from "./collection-rules.js";
import { collectionIdOf, collectionSlug } from "./collection-slug.js";
import { collectionResource } from "./collection-view.js";
import {
  collectionsRepository as repo,
  paperExists,
  type CollectionRecord,
  type ItemTarget,
} from "./collections.repository.js";

const newId = () => randomBytes(12).toString("hex");

export interface CollectionItemsServiceDeps {
  db: Db;
  clock: () => Date;
  publicUrl: string;
  repos: RepoLookup;
  reader: CollectionReader;
}

/**
 * A collection's items: added (when what they name exists and the caller may
 * read it), annotated, moved and removed by those `decide()` lets write the
 * collection. Each change takes the collection's row first, so the changes of
 * one collection happen one at a time and positions stay 0, 1, 2…
 */
export function createCollectionItemsService({
  db,
  clock,
  publicUrl,
  repos,
  reader,
}: CollectionItemsServiceDeps) {
  const now = () => clock().toISOString();
  const { one } = reader;

  /** What an item to add names, if it exists and the caller may read it. */
  async function target(
    viewer: Principal,
    self: CollectionRecord,
    item: { id: string; type: CollectionItemType },
  ): Promise<ItemTarget> {
    const unknown = () =>
      new HubError(
        404,
        "unknown_collection_item",
        `No ${item.type} called "${item.id}" exists, or you may not see it; check its id and type.`,
        { field: "item.id" },
      );
    const access = await viewerAccess(db, viewer, clock(), publicUrl);
    if (item.type === "paper") {
      if (!(await paperExists(db, item.id))) throw unknown();
      return { kind: "paper", id: item.id };
    }
    if (item.type === "collection") {
      const id = collectionIdOf(item.id.split("/").pop() ?? "");
      if (id === self.id)
        throw badRequest(
          "invalid_collection_item",
          "A collection cannot hold itself; add another collection.",
          "item.id",
        );
      const nested = id ? await repo.find(db, id) : undefined;
      if (!nested || !access.may("collection:read", collectionResource(nested))) throw unknown();
      return { kind: "collection", id: nested.id };
    }
    const [owner, name, ...rest] = item.id.split("/");
    const found =
      owner && name && rest.length === 0 ? await repos.find(item.type as RepoType, owner, name) : null;
    if (!found || !access.may("repo:read", repoResource(found))) throw unknown();
    return { kind: "repository", id: found.row.id };
  }

  return {
    /** Adds an item at the end; one already there is a 409. */
    async addItem(
      viewer: Principal,
      record: CollectionRecord,
      body: AddCollectionItemRequest,
    ): Promise<Collection> {
      const text = note(body.note) ?? null;
      const slug = collectionSlug(record.owner_handle, record.title, record.id);
      const what = await target(viewer, record, body.item);
      await db.transaction().execute(async (tx) => {
        // Touching the collection first takes its row lock: its item changes happen one at a time.
        await repo.update(tx, record.id, { updated_at: now() });
        if (await repo.findTarget(tx, record.id, what))
          throw new HubError(
            409,
            "collection_item_exists",
            `The ${body.item.type} ${body.item.id} is already in collection ${slug}; update its note or position instead.`,
            { field: "item.id" },
          );
        const order = await repo.itemOrder(tx, record.id);
        await repo.insertItem(tx, {
          id: newId(),
          collection_id: record.id,
          item_type: body.item.type,
          repository_id: what.kind === "repository" ? what.id : null,
          paper_id: what.kind === "paper" ? what.id : null,
          item_collection_id: what.kind === "collection" ? what.id : null,
          note: text,
          position: order.length,
          created_at: now(),
        });
      });
      return one(viewer, record.id);
    },

    /** Changes an item's note (an empty one removes it) or moves it. */
    async updateItem(
      viewer: Principal,
      record: CollectionRecord,
      itemId: string,
      body: UpdateCollectionItemRequest,
    ): Promise<Collection> {
      const text = note(body.note);
      await db.transaction().execute(async (tx) => {
        await repo.update(tx, record.id, { updated_at: now() });
        if (!(await repo.findItem(tx, record.id, itemId))) throw itemNotFound(record, itemId);
        if (text !== undefined) await repo.setNote(tx, itemId, text);
        if (body.position !== undefined) {
          const order = await repo.itemOrder(tx, record.id);
          await repo.renumber(
            tx,
            "collection_items",
            moved(order, itemId, body.position),
            await repo.positions(tx, "collection_items", order),
          );
        }
      });
      return one(viewer, record.id);
    },

    async deleteItem(record: CollectionRecord, itemId: string): Promise<void> {
      await db.transaction().execute(async (tx) => {
        await repo.update(tx, record.id, { updated_at: now() });
        if (!(await repo.findItem(tx, record.id, itemId))) throw itemNotFound(record, itemId);
        await repo.deleteItem(tx, itemId);
        const order = await repo.itemOrder(tx, record.id);
        await repo.renumber(
          tx,
          "collection_items",
          order,
          await repo.positions(tx, "collection_items", order),
        );
      });
    },
  };
}

export type CollectionItemsService = ReturnType<typeof createCollectionItemsService>;
