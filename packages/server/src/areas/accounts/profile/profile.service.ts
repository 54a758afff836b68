import type { PatchProfile, Profile, PutProfile, SocialHandles, SocialNetwork, UserOverview } from "@hub/api";
import { SOCIAL_NETWORKS } from "@hub/api";
import type { Db } from "../../../db/database.js";
import type { UserProfileRow, UserRow } from "../../../db/schema.js";
import { HubError, badRequest, notFound } from "../../../errors.js";
import { isHandle } from "../account/handles.js";
import { usersRepository } from "../account/users.repository.js";
import { billingRepository } from "../billing/billing.repository.js";
import { orgsRepository } from "../../organizations/orgs/orgs.repository.js";
import { sniffImage } from "./avatar-image.js";
import { avatarUrlOf } from "./avatar-url.js";
import { likesRepository } from "../../community/likes/likes.repository.js";
import { followsRepository } from "../follows/follows.repository.js";
import type { AvatarStore } from "./avatar-store.js";
import { usernameRepository } from "../username/username.repository.js";
import { shownPapersOf } from "../../community/papers/paper-summaries.js";
import { profileRepository } from "./profile.repository.js";
import type { SocialIdentities } from "./social-identities.js";

export interface ProfileServiceDeps {
  db: Db;
  clock: () => Date;
  avatars: AvatarStore;
  identities: SocialIdentities;
  publicUrl: string;
  /** The largest avatar accepted, in bytes. */
  avatarMaxBytes: number;
}

/** An image to send: a stored avatar, or the default one drawn for the handle. */
export interface AvatarImage {
  content: Buffer;
  type: string;
  etag: string;
}

const EMPTY_SOCIAL: SocialHandles = { github: "", twitter: "", linkedin: "", bluesky: "" };

/** The stored handles, each network present (a row written before a network existed lacks it). */
function socialOf(row: UserProfileRow | undefined): SocialHandles {
  const stored = row ? (JSON.parse(row.social) as Partial<SocialHandles>) : {};
  return { ...EMPTY_SOCIAL, ...stored };
}

function normalizedHandle(network: SocialNetwork, value: string | null | undefined): string {
  if (!value) return "";
  return network === "bluesky" ? value.toLowerCase() : value;
}

function checkedWebsite(value: string | null | undefined): string {
  if (!value) return "";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badRequest("invalid_website", `"${value}" is not a URL; send an http or https URL.`, "website");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw badRequest("invalid_website", "The website must be an http or https URL.", "website");
  if (url.username || url.password)
    throw badRequest("invalid_website", "The website URL may not carry a user name or password.", "website");
  return url.href;
}

function checkedFullname(value: string | null | undefined, handle: string): string {
  if (value === null || value === undefined) return handle;
  const trimmed = value.trim();
  if (!trimmed) throw badRequest("invalid_fullname", "The display name may not be blank.", "fullname");
  return trimmed;
}

const PALETTE = ["#4f46e5", "#0891b2", "#059669", "#ca8a04", "#dc2626", "#db2777", "#7c3aed", "#475569"];

/** The default avatar: the handle's first character on a colour picked from the handle, as SVG. */
function defaultAvatar(handle: string): AvatarImage {
  let hash = 0;
  for (const char of handle) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  const colour = PALETTE[hash % PALETTE.length] ?? "#475569";
  // Handles are [a-z0-9-], so the initial needs no escaping.
  const initial = (handle[0] ?? "?").toUpperCase();
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="128" height="128" viewBox="0 0 128 128">` +
    `<rect width="128" height="128" fill="${colour}"/>` +
    `<text x="64" y="64" dy=".35em" text-anchor="middle" font-family="sans-serif" font-size="64" fill="#fff">${initial}</text></svg>`;
  return {
    content: Buffer.from(svg),
    type: "image/svg+xml",
    etag: `default-${initial}-${hash % PALETTE.length}`,
  };
}

/** Public profiles, the editable profile behind them, and avatars. */
export function createProfileService({
  db,
  clock,
  avatars,
  identities,
  publicUrl,
  avatarMaxBytes,
}: ProfileServiceDeps) {
  async function requireUser(userId: string): Promise<UserRow> {
    const user = await usersRepository.findById(db, userId);
    if (!user) throw notFound("The account no longer exists.");
    return user;
  }

  /**
   * The user a handle names. A handle its account renamed away from (and that
   * no one else has claimed) answers a relative 307 to the same path under the
   * new name; anything else is a 404.
   */
  async function findUser(handle: string, requestPath: string): Promise<UserRow> {
    const user = isHandle(handle) ? await usersRepository.findByHandle(db, handle) : undefined;
    if (user) return user;
    const successor = isHandle(handle) ? await usernameRepository.successorOf(db, handle) : null;
    if (successor) {
      throw new HubError(
        307,
        "user_renamed",
        `The user ${handle} is now called ${successor}; update your links.`,
        { headers: { location: requestPath.replace(`/users/${handle}/`, `/users/${successor}/`) } },
      );
    }
    throw notFound(`No user is called "${handle}".`);
  }

  /** Where the account's avatar is served. */
  function avatarUrl(handle: string, row: UserProfileRow | undefined): string {
    return avatarUrlOf(publicUrl, handle, row?.avatar_sha256);
  }

  function present(user: UserRow, row: UserProfileRow | undefined): Profile {
    return {
      fullname: user.fullname,
      bio: row?.bio ?? "",
      website: row?.website ?? "",
      location: row?.location ?? "",
      social: socialOf(row),
      avatarUrl: avatarUrl(user.handle, row),
    };
  }

  async function save(
    user: UserRow,
    profile: { fullname: string; bio: string; website: string; location: string; social: SocialHandles },
  ): Promise<Profile> {
    await db.transaction().execute(async (tx) => {
      await usersRepository.setFullname(tx, user.id, profile.fullname);
      await profileRepository.saveText(tx, {
        user_id: user.id,
        bio: profile.bio,
        website: profile.website,
        location: profile.location,
        social: JSON.stringify(profile.social),
        updated_at: clock().toISOString(),
      });
    });
    return present({ ...user, fullname: profile.fullname }, await profileRepository.find(db, user.id));
  }

  /** Drops an image file no account shows any more. */
  async function collect(sha256: string | null | undefined): Promise<void> {
    if (sha256 && !(await profileRepository.avatarInUse(db, sha256))) await avatars.remove(sha256);
  }

  return {
    avatarUrl,

    /** Drops an avatar file once no account shows it (after an account that did was deleted). */
    collectAvatar: collect,

    /** The caller's editable profile. */
    async profile(userId: string): Promise<Profile> {
      const user = await requireUser(userId);
      return present(user, await profileRepository.find(db, userId));
    },

    /** Replaces the editable profile; what the body leaves out takes its default. */
    async put(userId: string, body: PutProfile): Promise<Profile> {
      const user = await requireUser(userId);
      const social = { ...EMPTY_SOCIAL };
      for (const network of SOCIAL_NETWORKS)
        social[network] = normalizedHandle(network, body.social?.[network]);
      return save(user, {
        fullname: checkedFullname(body.fullname, user.handle),
        bio: body.bio ?? "",
        website: checkedWebsite(body.website),
        location: (body.location ?? "").trim(),
        social,
      });
    },

    /** Merges the fields the body gives into the editable profile (RFC 7396: null clears). */
    async patch(userId: string, body: PatchProfile): Promise<Profile> {
      const user = await requireUser(userId);
      const current = present(user, await profileRepository.find(db, userId));
      const social = { ...current.social };
      for (const network of SOCIAL_NETWORKS) {
        const value = body.social?.[network];
        if (value !== undefined) social[network] = normalizedHandle(network, value);
      }
      return save(user, {
        fullname:
          body.fullname === undefined ? current.fullname : checkedFullname(body.fullname, user.handle),
        bio: body.bio === undefined ? current.bio : (body.bio ?? ""),
        website: body.website === undefined ? current.website : checkedWebsite(body.website),
        location: body.location === undefined ? current.location : (body.location ?? "").trim(),
        social,
      });
    },

    /** The public profile of a user, as anyone may see it. */
    async overview(handle: string, requestPath: string): Promise<UserOverview> {
      const user = await findUser(handle, requestPath);
      const [row, counts, memberships, shown, papers, plan, follows, likes] = await Promise.all([
        profileRepository.find(db, user.id),
        profileRepository.publicRepositoryCounts(db, user.id),
        orgsRepository.membershipsOfUser(db, user.id),
        identities.visible(user.id),
        shownPapersOf(db, publicUrl, user.id),
        billingRepository.plan(db, user.id),
        followsRepository.userCounts(db, user.id),
        likesRepository.publicCountOf(db, user.id),
      ]);
      const count = (type: string) => Number(counts.find((c) => c.type === type)?.count ?? 0);
      const profile = present(user, row);
      return {
        _id: user.id,
        type: "user",
        user: user.handle,
        fullname: user.fullname,
        avatarUrl: profile.avatarUrl,
        isPro: plan === "pro",
        details: profile.bio,
        website: profile.website,
        location: profile.location,
        social: profile.social,
        socialIdentities: shown,
        numModels: count("model"),
        numDatasets: count("dataset"),
        numSpaces: count("space"),
        numMcps: count("mcp"),
        numFollowers: follows.followers,
        numFollowing: follows.following,
        numLikes: likes,
        orgs: memberships.map((m) => ({ name: m.handle, fullname: m.fullname })),
        numPapers: papers.length,
        papers,
        createdAt: user.created_at,
      };
    },

    /**
     * Stores a new avatar after checking its real type by its leading bytes
     * and its size; the previous image file goes if no account shows it.
     */
    async setAvatar(userId: string, content: Buffer): Promise<Profile> {
      const user = await requireUser(userId);
      if (content.length === 0)
        throw badRequest("invalid_avatar", "The body is empty; send the image file's bytes.");
      if (content.length > avatarMaxBytes) {
        throw badRequest(
          "avatar_too_large",
          `The image has ${content.length} bytes; avatars may have at most ${avatarMaxBytes}.`,
        );
      }
      const type = sniffImage(content);
      if (!type) {
        throw badRequest(
          "invalid_avatar",
          "The body is not a PNG, JPEG, WebP or GIF image; send the raw image file.",
        );
      }
      const previous = (await profileRepository.find(db, userId))?.avatar_sha256;
      const sha256 = await avatars.put(content);
      await profileRepository.saveAvatar(db, userId, { sha256, type }, clock().toISOString());
      if (previous !== sha256) await collect(previous);
      return present(user, await profileRepository.find(db, userId));
    },

    /** Goes back to the default avatar. */
    async deleteAvatar(userId: string): Promise<void> {
      await requireUser(userId);
      const previous = (await profileRepository.find(db, userId))?.avatar_sha256;
      await profileRepository.saveAvatar(db, userId, null, clock().toISOString());
      await collect(previous);
    },

    /** The avatar of a user: the stored image, or the default one. */
    async avatar(handle: string, requestPath: string): Promise<AvatarImage> {
      const user = await findUser(handle, requestPath);
      const row = await profileRepository.find(db, user.id);
      if (row?.avatar_sha256 && row.avatar_type) {
        const content = await avatars.read(row.avatar_sha256);
        if (content) return { content, type: row.avatar_type, etag: row.avatar_sha256 };
      }
      return defaultAvatar(user.handle);
    },
  };
}

export type ProfileService = ReturnType<typeof createProfileService>;
