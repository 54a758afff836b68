import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  AddCollectionItemRequest,
  ApiErrorRef,
  Collection,
  CollectionExists,
  CollectionListQuery,
  CreateCollectionRequest,
  UpdateCollectionItemRequest,
  UpdateCollectionRequest,
  UpdatedCollection,
} from "@hub/api";
import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import type { Access } from "../../../http/access.js";
import { principalOf } from "../../../http/access.js";
import { renderHubError } from "../../../http/error-handler.js";
import { cursorOffset, nextPageUrl } from "../../../http/repo-access.js";
import { HubError, unauthenticated } from "../../../errors.js";
import { collectionResource } from "./collection-view.js";
import type { CollectionRecord } from "./collections.repository.js";
import type { CollectionItemsService } from "./collection-items.service.js";
import type { CollectionOwnerRef, CollectionsService } from "./collections.service.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The collection a route acts on, loaded by its access declaration. */
    collection?: CollectionRecord;
    /** The owner a new collection would have, loaded by its access declaration. */
    collectionOwner?: CollectionOwnerRef;
  }
}

const SlugParams = Type.Object({
  namespace: Type.String({ maxLength: 100 }),
  slug: Type.String({ maxLength: 200, description: "The slug's last part: slugified-title-id." }),
});
const ItemParams = Type.Object({
  namespace: Type.String({ maxLength: 100 }),
  slug: Type.String({ maxLength: 200 }),
  itemId: Type.String({ maxLength: 100 }),
});
const Done = { type: "null", description: "Done." } as const;

function collectionOf(request: FastifyRequest): CollectionRecord {
  if (!request.collection) throw new Error("The route declared no collection access.");
  return request.collection;
}

/**
 * The Hugging Face collections API (`/api/collections`): reading follows the
 * collection's visibility (items the viewer may not read are left out);
 * creating and changing need `community:write` and, for an organization's
 * collection, a `write` or `admin` role in it, as `decide()` rules.
 */
export function collectionsRoutes({
  collections,
  items,
  publicUrl,
}: {
  collections: CollectionsService;
  items: CollectionItemsService;
  publicUrl: string;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ["Collections"];
    /** Access to the collection the path names, loaded once and kept on the request. */
    const on = (action: "collection:read" | "collection:write"): Access => ({
      action,
      resource: async (request, principal) => {
        const slug = (request.params as { slug: string }).slug;
        const record = await collections.find(slug).catch((err: unknown) => {
          // Anonymous callers get 401 for a missing collection as for a private one: neither says which it is.
          if (principal || !(err instanceof HubError) || err.code !== "collection_not_found") throw err;
          throw unauthenticated(
            "unauthenticated",
            "Sign in to see this collection: send Authorization: Bearer <token>.",
          );
        });
        request.collection = record;
        return collectionResource(record);
      },
    });
    const base = "/api/collections/:namespace/:slug";

    app.get(
      "/api/collections",
      {
        schema: {
          operationId: "collections_list",
          tags,
          summary:
            "List the collections the caller may read, newest change first, with up to 4 items each; paginated with a Link header.",
          querystring: CollectionListQuery,
          response: { 200: Type.Array(Collection) },
        },
        config: { access: "optional" },
      },
      async (request, reply) => {
        const page = await collections.list(request.principal, {
          ...request.query,
          offset: cursorOffset(request.query.cursor),
        });
        if (page.next !== null)
          reply.header("link", `<${nextPageUrl(publicUrl, request, page.next)}>; rel="next"`);
        return page.items;
      },
    );

    app.post(
      "/api/collections",
      {
        schema: {
          operationId: "collections_create",
          tags,
          summary:
            "Create a collection owned by the caller or one of its organizations; a title the owner already uses is a 409 naming that collection's slug.",
          body: CreateCollectionRequest,
          response: { 200: Collection, 404: ApiErrorRef, 409: CollectionExists },
        },
        config: {
          access: {
            action: "collection:write",
            resource: async (request) => {
              const namespace = await collections.namespace(
                (request.body as CreateCollectionRequest).namespace,
              );
              request.collectionOwner = namespace;
              const { owner } = namespace;
              return { type: "collection", id: null, slug: `${owner.handle}/new`, owner, private: false };
            },
          },
        },
      },
      async (request, reply) => {
        const namespace = request.collectionOwner;
        if (!namespace) throw new Error("The route declared no collection owner access.");
        const { collection, created } = await collections.create(
          principalOf(request),
          namespace,
          request.body,
        );
        if (created) return collection;
        const error = new HubError(
          409,
          "collection_exists",
          `${namespace.owner.handle} already has a collection titled "${collection.title}" (${collection.slug}); choose another title or use that one.`,
          { field: "title" },
        );
        return reply.status(409).send({ ...renderHubError(error), slug: collection.slug });
      },
    );

    app.get(
      base,
      {
        schema: {
          operationId: "collections_get",
          tags,
          summary: "A collection with every item the caller may read, in order.",
          params: SlugParams,
          response: { 200: Collection, 404: ApiErrorRef },
        },
        config: { access: on("collection:read") },
      },
      async (request) => collections.get(request.principal, collectionOf(request)),
    );

    app.patch(
      base,
      {
        schema: {
          operationId: "collections_update",
          tags,
          summary:
            "Change a collection's title (and so its slug's middle), description, position among its owner's, visibility or theme.",
          params: SlugParams,
          body: UpdateCollectionRequest,
          response: { 200: UpdatedCollection, 404: ApiErrorRef, 409: ApiErrorRef },
        },
        config: { access: on("collection:write") },
      },
      async (request) => ({
        success: true as const,
        data: await collections.update(principalOf(request), collectionOf(request), request.body),
      }),
    );

    app.delete(
      base,
      {
        schema: {
          operationId: "collections_delete",
          tags,
          summary: "Delete a collection and its items.",
          params: SlugParams,
          response: { 204: Done, 404: ApiErrorRef },
        },
        config: { access: on("collection:write") },
      },
      async (request, reply) => {
        await collections.remove(collectionOf(request));
        return reply.status(204).send();
      },
    );

    app.post(
      `${base}/items`,
      {
        schema: {
          operationId: "collections_add_item",
          tags,
          summary:
            "Add a model, dataset, Space, paper or collection at the end, with an optional note; 404 when it does not exist, 409 when it is already there.",
          params: SlugParams,
          body: AddCollectionItemRequest,
          response: { 200: Collection, 404: ApiErrorRef, 409: ApiErrorRef },
        },
        config: { access: on("collection:write") },
      },
      async (request) => items.addItem(principalOf(request), collectionOf(request), request.body),
    );

    app.patch(
      `${base}/items/:itemId`,
      {
        schema: {
          operationId: "collections_update_item",
          tags,
          summary: "Change an item's note (empty removes it) or move it to a position.",
          params: ItemParams,
          body: UpdateCollectionItemRequest,
          response: { 200: Collection, 404: ApiErrorRef },
        },
        config: { access: on("collection:write") },
      },
      async (request) =>
        items.updateItem(principalOf(request), collectionOf(request), request.params.itemId, request.body),
    );

    app.delete(
      `${base}/items/:itemId`,
      {
        schema: {
          operationId: "collections_delete_item",
          tags,
          summary: "Remove an item from a collection.",
          params: ItemParams,
          response: { 204: Done, 404: ApiErrorRef },
        },
        config: { access: on("collection:write") },
      },
      async (request, reply) => {
        await items.deleteItem(collectionOf(request), request.params.itemId);
        return reply.status(204).send();
      },
    );
  };
}
