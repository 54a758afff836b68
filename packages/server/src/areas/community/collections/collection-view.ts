import {
  GATE_MODES,
  type Collection,
  type CollectionItem,
  type CollectionOwner,
  type CollectionTheme,
  type RepoType,
} from "@hub/api";
import type { Owner, Resource } from "../../../auth/authorize.js";
import { avatarUrlOf } from "../../accounts/profile/avatar-url.js";
import type { ViewerAccess } from "../viewer-access.js";
import { collectionSlug } from "./collection-slug.js";
import type { CollectionRecord, ItemRecord } from "./collections.repository.js";

/** What presenting a collection needs beyond its rows: the viewer's reach, its likes, the hub's address. */
export interface ViewContext {
  access: ViewerAccess;
  /** Repositories the viewer likes. */
  liked: Set<string>;
  /** How many items each nested collection holds. */
  itemCounts: Map<string, number>;
  publicUrl: string;
}

interface OwnerFacts {
  userId: string | null;
  organizationId: string | null;
  handle: string;
  fullname: string;
  avatar: string | null;
}

/** A collection's owner as an authorization `Owner`. */
export function ownerOfCollection(
  row: { owner_user_id: string | null; owner_organization_id: string | null },
  handle: string,
): Owner {
  return row.owner_organization_id
    ? { type: "org", id: row.owner_organization_id, handle }
    : { type: "user", id: row.owner_user_id ?? "" };
}

/** The authorization resource a collection is. */
export function collectionResource(record: CollectionRecord): Extract<Resource, { type: "collection" }> {
  return {
    type: "collection",
    id: record.id,
    slug: collectionSlug(record.owner_handle, record.title, record.id),
    owner: ownerOfCollection(record, record.owner_handle),
    private: record.private === 1,
  };
}

function ownerView(owner: OwnerFacts, publicUrl: string): CollectionOwner {
  return {
    _id: owner.userId ?? owner.organizationId ?? "",
    name: owner.handle,
    fullname: owner.fullname,
    // Organizations have no avatar image on this hub.
    avatarUrl: owner.userId ? avatarUrlOf(publicUrl, owner.handle, owner.avatar) : "",
    type: owner.userId ? "user" : "org",
    isPro: false,
    isHf: false,
    isHfAdmin: false,
    isMod: false,
  };
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The item as the clients read it, or null when the viewer may not see what it names. */
function itemView(item: ItemRecord, context: ViewContext): CollectionItem | null {
  const base = {
    _id: item.id,
    position: item.position,
    ...(item.note ? { note: { text: item.note, html: escapeHtml(item.note) } } : {}),
  };
  if (item.repository_id && item.repo_name && item.repo_owner_handle && item.repo_owner_id) {
    const fullName = `${item.repo_owner_handle}/${item.repo_name}`;
    const owner: Owner =
      item.repo_owner_type === "org"
        ? { type: "org", id: item.repo_owner_id, handle: item.repo_owner_handle }
        : { type: "user", id: item.repo_owner_id };
    const gated = GATE_MODES.find((mode) => mode === item.repo_gated) ?? false;
    const repoType = item.repo_type as RepoType;
    const resource: Resource = {
      type: "repository",
      id: item.repository_id,
      repoType,
      fullName,
      owner,
      private: item.repo_private === 1,
      gated,
    };
    if (!context.access.may("repo:read", resource)) return null;
    return {
      ...base,
      id: fullName,
      type: item.item_type as CollectionItem["type"],
      repoType,
      author: item.repo_owner_handle,
      private: item.repo_private === 1,
      gated,
      lastModified: item.repo_updated_at ?? "",
      likes: item.repo_likes ?? 0,
      downloads: item.repo_downloads ?? 0,
      isLikedByUser: context.liked.has(item.repository_id),
      ...(item.repo_space_sdk ? { sdk: item.repo_space_sdk } : {}),
    };
  }
  if (item.paper_id) {
    return {
      ...base,
      id: item.paper_id,
      type: "paper",
      title: item.paper_title ?? "",
      ...(item.paper_published_at ? { publishedAt: item.paper_published_at } : {}),
      upvotes: 0,
    };
  }
  if (item.item_collection_id && item.ic_owner_handle && item.ic_title !== null) {
    const nested = {
      owner_user_id: item.ic_owner_user_id,
      owner_organization_id: item.ic_owner_organization_id,
    };
    const slug = collectionSlug(item.ic_owner_handle, item.ic_title, item.item_collection_id);
    const resource: Resource = {
      type: "collection",
      id: item.item_collection_id,
      slug,
      owner: ownerOfCollection(nested, item.ic_owner_handle),
      private: item.ic_private === 1,
    };
    if (!context.access.may("collection:read", resource)) return null;
    return {
      ...base,
      id: item.item_collection_id,
      type: "collection",
      slug,
      title: item.ic_title,
      ...(item.ic_description ? { description: item.ic_description } : {}),
      owner: ownerView(
        {
          userId: item.ic_owner_user_id,
          organizationId: item.ic_owner_organization_id,
          handle: item.ic_owner_handle,
          fullname: item.ic_owner_fullname ?? "",
          avatar: item.ic_owner_avatar,
        },
        context.publicUrl,
      ),
      theme: (item.ic_theme ?? "orange") as CollectionTheme,
      upvotes: 0,
      lastUpdated: item.ic_updated_at ?? "",
      numberItems: context.itemCounts.get(item.item_collection_id) ?? 0,
      shareUrl: `${context.publicUrl}/collections/${slug}`,
    };
  }
  return null;
}

/**
 * A collection as the clients read it, with the items the viewer may see
 * (at most `maxItems`); `position` only where asked (listings leave it out).
 */
export function collectionView(
  record: CollectionRecord,
  items: ItemRecord[],
  context: ViewContext,
  options: { withPosition: boolean; maxItems?: number },
): Collection {
  const slug = collectionSlug(record.owner_handle, record.title, record.id);
  const shown = items.flatMap((item) => itemView(item, context) ?? []).slice(0, options.maxItems);
  return {
    id: record.id,
    slug,
    title: record.title,
    ...(record.description ? { description: record.description } : {}),
    owner: ownerView(
      {
        userId: record.owner_user_id,
        organizationId: record.owner_organization_id,
        handle: record.owner_handle,
        fullname: record.owner_fullname,
        avatar: record.owner_avatar,
      },
      context.publicUrl,
    ),
    items: shown,
    lastUpdated: record.updated_at,
    ...(options.withPosition ? { position: record.position } : {}),
    theme: record.theme as CollectionTheme,
    private: record.private === 1,
    gating: false,
    upvotes: 0,
    isUpvotedByUser: false,
    shareUrl: `${context.publicUrl}/collections/${slug}`,
  };
}
