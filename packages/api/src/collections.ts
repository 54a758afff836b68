import { Type, type Static } from "@sinclair/typebox";
import { RepoTypeSchema as RepoType } from "./repos.js";

/**
 * Likes and collections, on the wire the Hugging Face clients use:
 * `huggingface_hub`'s `unlike`, `list_liked_repos`, `list_repo_likers` and its
 * collection calls (`get_collection`, `create_collection`, `add_collection_item`
 * …), `@huggingface/hub`'s `createCollection`, `listCollections` and
 * `deleteCollection`. A collection's slug is `{owner}/{slugified title}-{id}`:
 * the id (24 hexadecimal digits) names it, so a slug stays valid when its
 * title changes.
 */

/** One account's like of a repository, as `list_liked_repos` reads it. */
export const LikedRepo = Type.Object(
  {
    createdAt: Type.String({ format: "date-time" }),
    repo: Type.Object({
      name: Type.String({ description: "The repository's id, owner/name." }),
      type: RepoType,
    }),
  },
  { title: "LikedRepo" },
);
export type LikedRepo = Static<typeof LikedRepo>;

/** An account that liked a repository, as `list_repo_likers` reads it. */
export const RepoLiker = Type.Object(
  {
    type: Type.Literal("user"),
    user: Type.String({ description: "The handle." }),
    fullname: Type.String(),
    avatarUrl: Type.String(),
  },
  { title: "RepoLiker" },
);
export type RepoLiker = Static<typeof RepoLiker>;

/** The answer to liking or unliking: whether the caller likes the repository now, and how many do. */
export const LikeState = Type.Object(
  {
    liked: Type.Boolean(),
    likes: Type.Integer({ minimum: 0 }),
  },
  { title: "LikeState" },
);
export type LikeState = Static<typeof LikeState>;

export const COLLECTION_THEMES = ["orange", "blue", "green", "purple", "pink", "indigo"] as const;
export const CollectionTheme = Type.Union(
  COLLECTION_THEMES.map((theme) => Type.Literal(theme)),
  { title: "CollectionTheme" },
);
export type CollectionTheme = (typeof COLLECTION_THEMES)[number];

export const COLLECTION_ITEM_TYPES = ["model", "dataset", "space", "paper", "collection"] as const;
export const CollectionItemType = Type.Union(
  COLLECTION_ITEM_TYPES.map((type) => Type.Literal(type)),
  { title: "CollectionItemType" },
);
export type CollectionItemType = (typeof COLLECTION_ITEM_TYPES)[number];

/** The longest title, description and item note, in characters (the Hugging Face Hub's limits for the last two). */
export const MAX_COLLECTION_TITLE = 60;
export const MAX_COLLECTION_DESCRIPTION = 150;
export const MAX_COLLECTION_NOTE = 500;

/** Who owns a collection, as `@huggingface/hub`'s `ApiAuthor`. */
export const CollectionOwner = Type.Object(
  {
    _id: Type.String(),
    name: Type.String({ description: "The handle." }),
    fullname: Type.String(),
    avatarUrl: Type.String(),
    type: Type.Union([Type.Literal("user"), Type.Literal("org")]),
    isPro: Type.Boolean(),
    isHf: Type.Boolean(),
    isHfAdmin: Type.Boolean(),
    isMod: Type.Boolean(),
  },
  { title: "CollectionOwner" },
);
export type CollectionOwner = Static<typeof CollectionOwner>;

/**
 * An item of a collection. `_id` names it within the collection (what the
 * update and delete calls take); `id` is what it holds: a repository's
 * owner/name, a paper's arXiv id, or a collection's id (with its `slug`).
 */
export const CollectionItem = Type.Object(
  {
    _id: Type.String(),
    id: Type.String(),
    type: CollectionItemType,
    position: Type.Integer({ minimum: 0 }),
    note: Type.Optional(Type.Object({ text: Type.String(), html: Type.String() })),
    // Repositories
    author: Type.Optional(Type.String()),
    repoType: Type.Optional(RepoType),
    private: Type.Optional(Type.Boolean()),
    gated: Type.Optional(Type.Union([Type.Literal(false), Type.String()])),
    lastModified: Type.Optional(Type.String({ format: "date-time" })),
    likes: Type.Optional(Type.Integer({ minimum: 0 })),
    downloads: Type.Optional(Type.Integer({ minimum: 0 })),
    isLikedByUser: Type.Optional(Type.Boolean()),
    sdk: Type.Optional(Type.String()),
    // Papers and collections
    title: Type.Optional(Type.String()),
    publishedAt: Type.Optional(Type.String()),
    upvotes: Type.Optional(Type.Integer({ minimum: 0 })),
    // Collections
    slug: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    owner: Type.Optional(CollectionOwner),
    theme: Type.Optional(CollectionTheme),
    lastUpdated: Type.Optional(Type.String({ format: "date-time" })),
    numberItems: Type.Optional(Type.Integer({ minimum: 0 })),
    shareUrl: Type.Optional(Type.String()),
  },
  { title: "CollectionItem" },
);
export type CollectionItem = Static<typeof CollectionItem>;

/**
 * A collection. Listings leave out `position` (the Python client numbers the
 * listed collections itself) and show at most 4 items of each.
 */
export const Collection = Type.Object(
  {
    id: Type.String({ description: "24 hexadecimal digits, the tail of the slug." }),
    slug: Type.String({ description: "owner/slugified-title-id" }),
    title: Type.String(),
    description: Type.Optional(Type.String()),
    owner: CollectionOwner,
    items: Type.Array(CollectionItem),
    lastUpdated: Type.String({ format: "date-time" }),
    position: Type.Optional(
      Type.Integer({ minimum: 0, description: "Its place among its owner's collections." }),
    ),
    theme: CollectionTheme,
    private: Type.Boolean(),
    gating: Type.Literal(false),
    upvotes: Type.Integer({
      minimum: 0,
      description: "Always 0: this hub counts no upvotes of collections.",
    }),
    isUpvotedByUser: Type.Boolean(),
    shareUrl: Type.String(),
  },
  { title: "Collection" },
);
export type Collection = Static<typeof Collection>;

/** `POST /api/collections`, as `create_collection` and `createCollection` send it. */
export const CreateCollectionRequest = Type.Object(
  {
    title: Type.String({ maxLength: 1000 }),
    namespace: Type.String({ maxLength: 100, description: "The account or organization that will own it." }),
    description: Type.Optional(Type.String({ maxLength: 10_000 })),
    private: Type.Optional(Type.Boolean()),
    resourceGroupId: Type.Optional(Type.String({ description: "Refused: this hub has no resource groups." })),
  },
  { additionalProperties: false },
);
export type CreateCollectionRequest = Static<typeof CreateCollectionRequest>;

/** The 409 of a title the namespace already has a collection under: that collection's slug beside the error. */
export const CollectionExists = Type.Object(
  { error: Type.String(), code: Type.String(), slug: Type.Optional(Type.String()) },
  { title: "CollectionExists" },
);

/** `PATCH /api/collections/{slug}`: only what is sent changes. */
export const UpdateCollectionRequest = Type.Object(
  {
    title: Type.Optional(Type.String({ maxLength: 1000 })),
    description: Type.Optional(Type.String({ maxLength: 10_000 })),
    position: Type.Optional(Type.Integer({ minimum: 0 })),
    private: Type.Optional(Type.Boolean()),
    theme: Type.Optional(CollectionTheme),
  },
  { additionalProperties: false },
);
export type UpdateCollectionRequest = Static<typeof UpdateCollectionRequest>;

/** The answer to an update, as `update_collection_metadata` reads it. */
export const UpdatedCollection = Type.Object(
  { success: Type.Literal(true), data: Collection },
  { title: "UpdatedCollection" },
);

/** `POST /api/collections/{slug}/items`. */
export const AddCollectionItemRequest = Type.Object(
  {
    item: Type.Object(
      { id: Type.String({ minLength: 1, maxLength: 300 }), type: CollectionItemType },
      { additionalProperties: false },
    ),
    note: Type.Optional(Type.String({ maxLength: 10_000 })),
  },
  { additionalProperties: false },
);
export type AddCollectionItemRequest = Static<typeof AddCollectionItemRequest>;

/** `PATCH /api/collections/{slug}/items/{itemId}`: a note (empty removes it) and a new place. */
export const UpdateCollectionItemRequest = Type.Object(
  {
    note: Type.Optional(Type.String({ maxLength: 10_000 })),
    position: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);
export type UpdateCollectionItemRequest = Static<typeof UpdateCollectionItemRequest>;

export const COLLECTION_SORTS = ["lastModified", "trending", "upvotes"] as const;

/** `GET /api/collections`: `owner` and `item` may repeat; `item` is `models/owner/name`, `papers/2311.12983`… */
export const CollectionListQuery = Type.Object({
  owner: Type.Optional(
    Type.Union([Type.String({ maxLength: 100 }), Type.Array(Type.String({ maxLength: 100 }))]),
  ),
  item: Type.Optional(
    Type.Union([Type.String({ maxLength: 300 }), Type.Array(Type.String({ maxLength: 300 }))]),
  ),
  q: Type.Optional(Type.String({ maxLength: 200 })),
  sort: Type.Optional(Type.Union(COLLECTION_SORTS.map((sort) => Type.Literal(sort)))),
  limit: Type.Optional(Type.Integer({ minimum: 1 })),
  cursor: Type.Optional(Type.String()),
});
export type CollectionListQuery = Static<typeof CollectionListQuery>;
