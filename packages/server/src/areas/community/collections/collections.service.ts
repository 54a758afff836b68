import { randomBytes } from "node:crypto";
import type {
  Collection,
  CollectionListQuery,
  CreateCollectionRequest,
  UpdateCollectionRequest,
} from "@hub/api";
import type { Owner } from "../../../auth/authorize.js";
import type { Principal } from "../../../auth/credential.js";
import type { Db } from "../../../db/database.js";
import type { RepoLookup } from "../../../domain/repositories.js";
import { HubError, badRequest, collectionNotFound, notFound } from "../../../errors.js";
import { usersRepository } from "../../accounts/account/users.repository.js";
import { orgsRepository } from "../../organizations/orgs/orgs.repository.js";
import { viewerAccess } from "../viewer-access.js";
import type { CollectionReader } from "./collection-reader.js";
import { description, moved, title } from "./collection-rules.js";
import { collectionIdOf } from "./collection-slug.js";
import { collectionResource } from "./collection-view.js";
import {
  collectionsRepository as repo,
  type CollectionRecord,
  type ItemTarget,
} from "./collections.repository.js";

/** A listing shows at most this many collections a page, and this many items of each. */
export const MAX_COLLECTIONS_PAGE = 100;
const LISTED_ITEMS = 4;

const newId = () => randomBytes(12).toString("hex");

/** Who may own a collection: an account or an organization, by handle. */
export interface CollectionOwnerRef {
  owner: Owner & { handle: string };
  key: { user: string | null; org: string | null };
}

export interface CollectionsServiceDeps {
  db: Db;
  clock: () => Date;
  publicUrl: string;
  repos: RepoLookup;
  reader: CollectionReader;
}

/**
 * Collections: made, changed and deleted by their owner (or an organization's
 * writers, as `decide()` says before these run), read and listed by whoever
 * may read them (their items: `collection-items.service.ts`).
 */
export function createCollectionsService({ db, clock, publicUrl, repos, reader }: CollectionsServiceDeps) {
  const now = () => clock().toISOString();
  const ownerKey = (record: CollectionRecord) => ({
    user: record.owner_user_id,
    org: record.owner_organization_id,
  });
  const { present, one } = reader;

  return {
    /** The collection a slug names (its trailing id), whoever may see it: the access check comes after. */
    async find(slugTail: string): Promise<CollectionRecord> {
      const id = collectionIdOf(slugTail);
      const record = id ? await repo.find(db, id) : undefined;
      if (!record) throw collectionNotFound(slugTail);
      return record;
    },

    /** The account or organization a new collection would belong to. */
    async namespace(handle: string): Promise<CollectionOwnerRef> {
      const user = await usersRepository.findByHandle(db, handle);
      if (user) return { owner: { type: "user", id: user.id, handle }, key: { user: user.id, org: null } };
      const org = await orgsRepository.findByHandle(db, handle);
      if (org) return { owner: { type: "org", id: org.id, handle }, key: { user: null, org: org.id } };
      throw notFound(`No user or organization is called "${handle}"; check the namespace.`);
    },

    /**
     * Makes a collection at the end of its owner's list. A title the owner
     * already uses makes nothing: `created` is false and the answer is that collection.
     */
    async create(
      viewer: Principal,
      namespace: CollectionOwnerRef,
      body: CreateCollectionRequest,
    ): Promise<{ collection: Collection; created: boolean }> {
      if (body.resourceGroupId !== undefined)
        throw badRequest(
          "unsupported_parameter",
          "This hub has no resource groups; leave resourceGroupId out.",
          "resourceGroupId",
        );
      const text = title(body.title);
      const about = description(body.description) ?? null;
      const at = now();
      const id = newId();
      const make = () =>
        db.transaction().execute(async (tx) => {
          const same = await repo.findByTitle(tx, namespace.key, text);
          if (same) return same.id;
          const order = await repo.ownerOrder(tx, namespace.key);
          await repo.insert(tx, {
            id,
            owner_user_id: namespace.key.user,
            owner_organization_id: namespace.key.org,
            title: text,
            description: about,
            private: body.private ? 1 : 0,
            theme: "orange",
            position: order.length,
            created_at: at,
            updated_at: at,
          });
          return null;
        });
      // A collection of this title made meanwhile fails the insert on the unique index; that one is the answer.
      const existing = await make().catch(async (err: unknown) => {
        const same = await repo.findByTitle(db, namespace.key, text);
        if (!same) throw err;
        return same.id;
      });
      return { collection: await one(viewer, existing ?? id), created: existing === null };
    },

    async get(viewer: Principal | null, record: CollectionRecord): Promise<Collection> {
      return one(viewer, record.id);
    },

    /** A page of the collections the viewer may read, newest change first, 4 items of each. */
    async list(
      viewer: Principal | null,
      query: CollectionListQuery & { offset: number },
    ): Promise<{ items: Collection[]; next: number | null }> {
      const access = await viewerAccess(db, viewer, clock(), publicUrl);
      const list = (value: string | string[] | undefined) =>
        value === undefined ? undefined : Array.isArray(value) ? value : [value];
      const limit = Math.min(query.limit ?? MAX_COLLECTIONS_PAGE, MAX_COLLECTIONS_PAGE);
      const items = list(query.item);
      const targets = items
        ? (await Promise.all(items.map((item) => itemFilter(item)))).flatMap((t) => t ?? [])
        : undefined;
      // Items that name nothing this hub holds are in no collection.
      if (targets?.length === 0) return { items: [], next: null };
      const rows = await repo.list(db, {
        viewerIds: access.ownerIds,
        ownerHandles: list(query.owner),
        items: targets,
        q: query.q,
        offset: query.offset,
        limit: limit + 1,
      });
      const visible = rows
        .slice(0, limit)
        .filter((row) => access.may("collection:read", collectionResource(row)));
      return {
        items: await present(viewer, visible, { withPosition: false, maxItems: LISTED_ITEMS }),
        next: rows.length > limit ? query.offset + limit : null,
      };
    },

    /** Changes what the body names; a new title changes the slug's middle, never its id. */
    async update(
      viewer: Principal,
      record: CollectionRecord,
      body: UpdateCollectionRequest,
    ): Promise<Collection> {
      const text = body.title === undefined ? undefined : title(body.title);
      const about = description(body.description);
      const taken = () =>
        new HubError(
          409,
          "collection_exists",
          `${record.owner_handle} already has a collection titled "${text}"; choose another title.`,
          { field: "title" },
        );
      await db
        .transaction()
        .execute(async (tx) => {
          if (text !== undefined) {
            const same = await repo.findByTitle(tx, ownerKey(record), text, record.id);
            if (same) throw taken();
          }
          await repo.update(tx, record.id, {
            ...(text !== undefined ? { title: text } : {}),
            ...(about !== undefined ? { description: about } : {}),
            ...(body.private !== undefined ? { private: body.private ? 1 : 0 } : {}),
            ...(body.theme !== undefined ? { theme: body.theme } : {}),
            updated_at: now(),
          });
          if (body.position !== undefined) {
            const order = await repo.ownerOrder(tx, ownerKey(record));
            await repo.renumber(
              tx,
              "collections",
              moved(order, record.id, body.position),
              await repo.positions(tx, "collections", order),
            );
          }
        })
        .catch(async (err: unknown) => {
          // A rename to a title another collection took meanwhile fails on the unique index.
          if (
            text !== undefined &&
            !(err instanceof HubError) &&
            (await repo.findByTitle(db, ownerKey(record), text, record.id))
          )
            throw taken();
          throw err;
        });
      return one(viewer, record.id);
    },

    /** Deletes the collection (and its items); collections that held it lose that item. */
    async remove(record: CollectionRecord): Promise<void> {
      await db.transaction().execute(async (tx) => {
        await repo.delete(tx, record.id);
        const order = await repo.ownerOrder(tx, ownerKey(record));
        await repo.renumber(tx, "collections", order, await repo.positions(tx, "collections", order));
      });
    },
  };

  /** A listing's `item` filter (`models/owner/name`, `papers/2311.12983`, `collections/slug`); null when it names nothing. */
  async function itemFilter(value: string): Promise<ItemTarget | null> {
    const [kind, ...rest] = value.split("/");
    const id = rest.join("/");
    if (kind === "papers") return { kind: "paper", id };
    if (kind === "collections") {
      const collection = collectionIdOf(rest.pop() ?? "");
      return collection ? { kind: "collection", id: collection } : null;
    }
    const type = ({ models: "model", datasets: "dataset", spaces: "space" } as const)[kind ?? ""];
    const [owner, name] = rest;
    if (!type || !owner || !name || rest.length !== 2) return null;
    const found = await repos.find(type, owner, name);
    return found ? { kind: "repository", id: found.row.id } : null;
  }
}

export type CollectionsService = ReturnType<typeof createCollectionsService>;
