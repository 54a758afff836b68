import { randomUUID } from "node:crypto";
import {
  SPACE_SDKS,
  type GateMode,
  type RepoInfo,
  type RepoSummary,
  type RepoType,
  type SpaceSdk,
} from "@hub/api";
import { decide, orgRoleOf, type Owner } from "../../../auth/authorize.js";
import { organizationFacts } from "../../../auth/authorizer.js";
import type { Principal } from "../../../auth/credential.js";
import type { Config } from "../../../config.js";
import { cachedRead } from "../../../db/cached-read.js";
import type { Db, DbOrTx } from "../../../db/database.js";
import type { RepositoryRow } from "../../../db/schema.js";
import { DEFAULT_GITATTRIBUTES } from "../../../git/default-gitattributes.js";
import { lfsObjectsRepository } from "../../../git/lfs/lfs-objects.repository.js";
import type { ObjectStore } from "../../../git/lfs/object-store.js";
import { removeUnheldObjects } from "../../../git/lfs/unheld-objects.js";
import type { RepoFiles } from "../../../git/repo-files.js";
import type { RepoStorage } from "../../../git/repo-storage.js";
import {
  HubError,
  badRequest,
  notFound,
  repoNeedsSignIn,
  repoNotFound,
  revisionNotFound,
} from "../../../errors.js";
import { isHandle } from "../../accounts/account/handles.js";
import { gatingRepository } from "../gating/gating.repository.js";
import { orgsRepository } from "../../organizations/orgs/orgs.repository.js";
import { ssoRepository } from "../../organizations/sso/sso.repository.js";
import { ssoStanding } from "../../../auth/sso-standing.js";
import type { RepoEvents } from "../../../domain/repo-events.js";
import type { RefUpdate } from "../../../domain/repositories.js";
import { reposRepository } from "./repos.repository.js";
import type { ListingQuery } from "./listing-query.js";
import { INFO_FIELDS, LISTING_FIELDS, discoveryFields } from "./discovery-fields.js";
import { metadataRepository } from "../metadata/metadata.repository.js";
import { contentPreferencesRepository } from "../../accounts/content-preferences/content-preferences.repository.js";
import {
  URL_PREFIX,
  gateModeOf,
  repoResource,
  repoWebUrl,
  type FoundRepo,
  type RepoListItem,
} from "../../../domain/repositories.js";

const NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,95}$/;
const DEFAULT_BRANCH = "main";

function ownerOf(row: RepositoryRow, handle: string): FoundRepo["owner"] {
  return row.owner_type === "org"
    ? { type: "org", id: row.owner_id, handle }
    : { type: "user", id: row.owner_id, handle };
}

/** A Space's SDK, as info and listings show it (nothing for models and datasets). */
function sdkOf(row: RepositoryRow): { sdk?: SpaceSdk } {
  const sdk = SPACE_SDKS.find((known) => known === row.space_sdk);
  return sdk ? { sdk } : {};
}

function checkName(name: string): void {
  if (!NAME_PATTERN.test(name) || name.endsWith(".git") || name.includes("..")) {
    throw badRequest(
      "invalid_repo_name",
      `"${name}" is not a valid repository name: use up to 96 lower-case letters, digits, ".", "_" or "-", starting with a letter or digit, without ".." or a ".git" ending.`,
      "name",
    );
  }
}

export interface ReposServiceDeps {
  db: Db;
  storage: RepoStorage;
  repoFiles: RepoFiles;
  /** Where LFS objects live: a deleted repository's objects leave it once no other repository holds them. */
  objectStore: ObjectStore;
  events: RepoEvents;
  clock: () => Date;
  config: Pick<Config, "publicUrl" | "gitPublicUrl" | "sshPublicUrl">;
}

/** Repositories: creation, lookup, deletion and what clients read about them. */
export function createReposService({
  db,
  storage,
  repoFiles,
  objectStore,
  events,
  clock,
  config,
}: ReposServiceDeps) {
  /** Whether the caller may read a repository, by the one authorization decision. */
  async function mayRead(principal: Principal | null, repo: FoundRepo): Promise<boolean> {
    const resource = repoResource(repo);
    const now = clock();
    const facts = await organizationFacts(db, principal?.userId ?? null, resource, now, config.publicUrl);
    return decide({ principal, action: "repo:read", resource, ...facts, now, reauthWindowSeconds: 0 })
      .allowed;
  }

  const webUrl = (type: RepoType, fullName: string) => repoWebUrl(config.publicUrl, type, fullName);
  /** The commit a revision names for info, kept like the file API's (refs move only with a touch of the row). */
  const cachedRevision = cachedRead("info revision", (_db: DbOrTx, repositoryId: string, ref: string) =>
    storage.resolveRef(repositoryId, ref),
  );

  return {
    webUrl,
    mayRead,

    /** The repository as a list entry. */
    listItem(repo: FoundRepo): RepoListItem {
      return {
        _id: repo.row.id,
        id: repo.fullName,
        author: repo.owner.handle,
        private: repo.row.private === 1,
        gated: gateModeOf(repo.row),
        createdAt: repo.row.created_at,
        lastModified: repo.row.updated_at || repo.row.created_at,
        ...sdkOf(repo.row),
      };
    },

    /** The repository, or null when it does not exist (or the names could not name one). Says nothing about access. */
    async find(type: RepoType, ownerHandle: string, name: string): Promise<FoundRepo | null> {
      if (!isHandle(ownerHandle) || !NAME_PATTERN.test(name)) return null;
      const owner = await reposRepository.findOwner(db, ownerHandle);
      if (!owner) return null;
      const row = await reposRepository.find(db, owner.id, type, name);
      return row ? { row, owner, fullName: `${owner.handle}/${row.name}`, type } : null;
    },

    /** The repository with this database id, or null. */
    async findById(id: string): Promise<FoundRepo | null> {
      const row = await reposRepository.findById(db, id);
      if (!row) return null;
      const handle = await reposRepository.ownerHandle(db, row.owner_type, row.owner_id);
      if (handle === null) return null;
      return {
        row,
        owner: ownerOf(row, handle),
        fullName: `${handle}/${row.name}`,
        type: row.type as RepoType,
      };
    },

    /** Where a repository moved to, when `ownerHandle/name` is an old name of one. */
    async movedTo(type: RepoType, ownerHandle: string, name: string): Promise<FoundRepo | null> {
      if (!isHandle(ownerHandle) || !NAME_PATTERN.test(name)) return null;
      const id = await reposRepository.redirectTarget(db, type, ownerHandle, name);
      return id ? this.findById(id) : null;
    },

    /**
     * The repository, for an access check; a missing one answers like a hidden
     * one (401 anonymous, 404 otherwise), so existence never leaks.
     */
    async findOrHide(
      principal: Principal | null,
      type: RepoType,
      ownerHandle: string,
      name: string,
      requestPath?: string,
    ): Promise<FoundRepo> {
      const repo = await this.find(type, ownerHandle, name);
      if (repo) return repo;
      const moved = requestPath ? await this.movedTo(type, ownerHandle, name) : null;
      if (moved && requestPath && (await mayRead(principal, moved))) {
        const oldName = new RegExp(`/${ownerHandle}/${name.replaceAll(".", "\\.")}(?=\\.git|/|\\?|$)`);
        throw new HubError(
          307,
          "repo_moved",
          `Repository ${ownerHandle}/${name} moved to ${moved.fullName}; update your links and remotes.`,
          { headers: { location: requestPath.replace(oldName, `/${moved.fullName}`) } },
        );
      }
      if (!principal)
        throw repoNeedsSignIn("Sign in to see this repository: send Authorization: Bearer <token>.");
      throw repoNotFound(`${ownerHandle}/${name}`);
    },

    /** The user or organization that would own a new repository. */
    async namespace(handle: string): Promise<{ type: "namespace"; owner: Owner & { handle: string } }> {
      const owner = isHandle(handle) ? await reposRepository.findOwner(db, handle) : null;
      if (!owner) throw notFound(`No user or organization is called "${handle}".`);
      return { type: "namespace", owner };
    },

    /** Creates a repository with a first commit holding the default `.gitattributes`; the caller was authorized on its namespace. */
    async create(input: {
      owner: string;
      name: string;
      type: RepoType;
      private: boolean;
      /** A Space's SDK; ignored for models and datasets. */
      spaceSdk?: SpaceSdk;
      /** The handle of the account creating it, for its event. */
      actor: string;
    }): Promise<FoundRepo> {
      checkName(input.name);
      const owner = await reposRepository.findOwner(db, input.owner);
      if (!owner) throw notFound(`No user or organization is called "${input.owner}".`);
      const fullName = `${owner.handle}/${input.name}`;
      if (await reposRepository.find(db, owner.id, input.type, input.name)) {
        throw new HubError(
          409,
          "repo_exists",
          `Repository ${fullName} already exists; choose another name or use it.`,
        );
      }
      const now = clock().toISOString();
      const row: RepositoryRow = {
        id: randomUUID(),
        owner_id: owner.id,
        owner_type: owner.type,
        type: input.type,
        name: input.name,
        private: input.private ? 1 : 0,
        default_branch: DEFAULT_BRANCH,
        created_at: now,
        updated_at: now,
        gated: null,
        space_sdk: input.type === "space" ? (input.spaceSdk ?? null) : null,
        xet_enabled: 1,
      };
      // The repository goes on disk first: a crash then leaves an unused directory, never a row without a repository.
      await storage.create(row.id, DEFAULT_BRANCH, { ".gitattributes": DEFAULT_GITATTRIBUTES });
      try {
        await reposRepository.insert(db, row);
        await metadataRepository.ensureStats(db, row.id);
        await reposRepository.dropRedirect(db, input.type, owner.handle, input.name);
      } catch (err) {
        await storage.remove(row.id);
        if (await reposRepository.find(db, owner.id, input.type, input.name)) {
          throw new HubError(
            409,
            "repo_exists",
            `Repository ${fullName} already exists; choose another name or use it.`,
          );
        }
        throw err;
      }
      const repo: FoundRepo = { row, owner, fullName, type: input.type };
      await events.publish({ scope: "repo", action: "create", repo, actor: input.actor });
      return repo;
    },

    /**
     * A page of the repositories of a kind the caller may read, filtered,
     * searched and sorted as the query asks (newest change first by default);
     * each entry holds the fields `expand` names, or the listing's usual ones
     * (with the file list and card for `full`, the card for `cardData`, the
     * config for `config`). `next` is the offset of the following page, if any.
     */
    async list(
      principal: Principal | null,
      type: RepoType,
      query: ListingQuery & { limit: number; offset: number },
    ): Promise<{ items: RepoListItem[]; repos: FoundRepo[]; next: number | null }> {
      const [memberships, ssoRequired] = principal
        ? await Promise.all([
            orgsRepository.membershipsOfUser(db, principal.userId),
            ssoRepository.requiredOfUser(db, principal.userId),
          ])
        : [[], []];
      const roles = new Map(memberships.map((m) => [m.id, m.role]));
      const now = clock();
      const sso = new Map(
        ssoRequired.map((org) => [org.id, ssoStanding(org, org.handle, now, config.publicUrl)]),
      );
      const preferences =
        query.personalized && principal
          ? await contentPreferencesRepository.explicit(db, principal.userId)
          : undefined;
      const filters = new Set<string>(preferences?.contentFilters ?? []);
      const rows = await reposRepository.listVisible(db, {
        type,
        viewerIds: principal ? [principal.userId, ...roles.keys()] : [],
        ...(preferences && principal
          ? {
              personal: {
                userId: principal.userId,
                hiddenTags: [
                  ...preferences.hiddenTags,
                  ...(filters.has("not-for-all-audiences") ? ["not-for-all-audiences"] : []),
                ],
                hideGated: filters.has("gated"),
                requireLicense: filters.has("without-license"),
                requireCard: filters.has("without-model-card"),
              },
            }
          : {}),
        author: query.author,
        search: query.search,
        tags: query.tags,
        parameters: query.parameters,
        gated: query.gated,
        sort: query.sort,
        sorted: query.sorted,
        descending: query.descending,
        offset: query.offset,
        limit: query.limit + 1,
      });
      const page = rows.slice(0, query.limit);
      const repos = page
        .map((row) => ({
          row,
          owner: ownerOf(row, row.owner_handle),
          fullName: `${row.owner_handle}/${row.name}`,
          type,
        }))
        .filter((repo) => {
          const role = repo.owner.type === "org" ? orgRoleOf(roles.get(repo.owner.id)) : null;
          return decide({
            principal,
            action: "repo:read",
            resource: repoResource(repo),
            membershipRole: role,
            sso: sso.get(repo.owner.id) ?? null,
            now,
            reauthWindowSeconds: 0,
          }).allowed;
        });
      const wanted = query.expand ?? [
        ...LISTING_FIELDS[type],
        ...(query.full ? ["sha", "siblings", "cardData"] : []),
        ...(query.cardData ? ["cardData"] : []),
        ...(query.config ? ["config"] : []),
      ];
      const items = await this.entries(principal, repos, wanted, query.expand === null);
      return { items, repos, next: rows.length > query.limit ? query.offset + query.limit : null };
    },

    /**
     * The listing entries of repositories: `_id`, `id` and the `wanted` fields,
     * plus the base fields (author, visibility, dates) when `withBase`.
     */
    async entries(
      principal: Principal | null,
      repos: FoundRepo[],
      wanted: readonly string[],
      withBase: boolean,
    ): Promise<RepoListItem[]> {
      const computed = await discoveryFields(db, repos, wanted, (repo) => this.spacesUsing(principal, repo));
      return Promise.all(
        repos.map(async (repo) => {
          const base = this.listItem(repo) as unknown as Record<string, unknown>;
          const entry: Record<string, unknown> = withBase ? { ...base } : { _id: base._id, id: base.id };
          for (const field of wanted) {
            if (field in base) entry[field] = base[field];
            else if (field === "xetEnabled") entry.xetEnabled = repo.row.xet_enabled === 1;
          }
          if (wanted.includes("sha") || wanted.includes("siblings")) {
            const sha = await cachedRevision(db, repo.row.id, repo.row.default_branch);
            if (wanted.includes("sha")) entry.sha = sha;
            if (wanted.includes("siblings")) {
              entry.siblings = sha
                ? (await storage.listFiles(repo.row.id, sha)).map((rfilename) => ({ rfilename }))
                : [];
            }
          }
          Object.assign(entry, computed.get(repo.row.id));
          return entry as unknown as RepoListItem;
        }),
      );
    },

    /** The Spaces the caller may read whose cards name this model. */
    async spacesUsing(principal: Principal | null, repo: FoundRepo): Promise<string[]> {
      if (repo.type !== "model") return [];
      const page = await this.list(principal, "space", {
        tags: [`model:${repo.fullName}`],
        sort: "updated_at",
        sorted: true,
        descending: true,
        expand: [],
        full: false,
        cardData: false,
        config: false,
        personalized: false,
        limit: 100,
        offset: 0,
      });
      return page.repos.map((space) => space.fullName);
    },

    /**
     * Changes visibility, gating and history protection. Switching a gated
     * repository to `auto` accepts the requests waiting for review, as asking
     * in `auto` mode would; turning gating off keeps the decisions for when it
     * is turned on again.
     */
    async updateSettings(
      repo: FoundRepo,
      settings: {
        private?: boolean;
        gated?: GateMode | false;
        denyForcePush?: boolean;
        xetEnabled?: boolean;
      },
      actor: string,
    ): Promise<void> {
      const now = clock().toISOString();
      // Whether uploads may go through Xet changes no content and nothing webhooks report.
      if (settings.xetEnabled !== undefined)
        await reposRepository.setXetEnabled(db, repo.row.id, settings.xetEnabled, now);
      if (settings.private !== undefined)
        await reposRepository.setPrivate(db, repo.row.id, settings.private, now);
      const { gated } = settings;
      if (gated !== undefined) {
        await db.transaction().execute(async (tx) => {
          await reposRepository.setGated(tx, repo.row.id, gated || null, now);
          if (gated === "auto") await gatingRepository.acceptPending(tx, repo.row.id, now);
        });
      }
      if (settings.denyForcePush !== undefined)
        await storage.setForcePushDenied(repo.row.id, settings.denyForcePush);
      const updatedConfig = {
        ...(settings.private === undefined ? {} : { private: settings.private }),
        ...(gated === undefined ? {} : { gated }),
        ...(settings.denyForcePush === undefined ? {} : { denyForcePush: settings.denyForcePush }),
      };
      if (Object.keys(updatedConfig).length === 0) return;
      const row = {
        ...repo.row,
        ...(settings.private === undefined ? {} : { private: settings.private ? 1 : 0 }),
        ...(gated === undefined ? {} : { gated: gated || null }),
      };
      await events.publish({
        scope: "repo.config",
        action: "update",
        repo: { ...repo, row },
        updatedConfig,
        actor,
      });
    },

    /** Gives a repository a new owner or name; its data stays where it is, named by id. */
    async move(
      repo: FoundRepo,
      target: { owner: Owner & { handle: string }; name: string },
      actor: string,
    ): Promise<void> {
      checkName(target.name);
      if (await reposRepository.find(db, target.owner.id, repo.type, target.name)) {
        throw new HubError(
          409,
          "repo_exists",
          `A ${repo.type} repository at the new name already exists; choose another.`,
        );
      }
      const now = clock().toISOString();
      await db.transaction().execute(async (tx) => {
        await reposRepository.move(tx, repo.row.id, target.owner, target.name, now);
        await reposRepository.dropRedirect(tx, repo.type, target.owner.handle, target.name);
        await reposRepository.addRedirect(tx, {
          type: repo.type,
          owner_handle: repo.owner.handle,
          name: repo.row.name,
          repository_id: repo.row.id,
          created_at: now,
        });
      });
      const moved: FoundRepo = {
        ...repo,
        row: { ...repo.row, owner_id: target.owner.id, owner_type: target.owner.type, name: target.name },
        owner: target.owner,
        fullName: `${target.owner.handle}/${target.name}`,
      };
      await events.publish({
        scope: "repo",
        action: "move",
        repo: moved,
        movedFrom: { owner: repo.owner, name: repo.row.name },
        actor,
      });
    },

    /** Records that refs moved (a push, a commit, a branch or tag made or deleted), for webhooks. */
    async refsUpdated(repo: FoundRepo, updatedRefs: RefUpdate[], actor: string | null): Promise<void> {
      if (updatedRefs.length === 0) return;
      await reposRepository.touch(db, repo.row.id, clock().toISOString());
      await events.publish({ scope: "repo.content", action: "update", repo, updatedRefs, actor });
    },

    /** Deletes the repository's record, then its data. */
    async remove(repo: FoundRepo, actor: string): Promise<void> {
      const objects = await lfsObjectsRepository.ofRepository(db, repo.row.id);
      await reposRepository.delete(db, repo.row.id);
      await storage.remove(repo.row.id);
      await removeUnheldObjects(db, objectStore, objects);
      await events.publish({ scope: "repo", action: "delete", repo, actor });
    },

    summary(repo: FoundRepo): RepoSummary {
      const path = `${URL_PREFIX[repo.type]}${repo.fullName}`;
      return {
        id: repo.fullName,
        _id: repo.row.id,
        type: repo.type,
        private: repo.row.private === 1,
        url: webUrl(repo.type, repo.fullName),
        git_url: `${config.gitPublicUrl}/${path}.git`,
        ssh_url: `${config.sshPublicUrl}/${path}.git`,
        default_branch: repo.row.default_branch,
        created_at: repo.row.created_at,
      };
    },

    /**
     * What clients read about a repository at a revision (the default branch
     * when none is given); with `blobs`, each file's size, blob id and LFS object.
     */
    /**
     * What the clients read of a repository at a revision. `siblings: false` leaves the file list out (an
     * empty list), for answers that were not asked for it; `blobs` adds each file's size, blob and LFS object.
     */
    async info(
      repo: FoundRepo,
      revision: string | undefined,
      {
        blobs = false,
        siblings: withSiblings = true,
        fields,
        principal = null,
      }: {
        blobs?: boolean;
        siblings?: boolean;
        /** The discovery fields wanted; the info's usual ones when not given. */
        fields?: readonly string[];
        principal?: Principal | null;
      } = {},
    ): Promise<RepoInfo> {
      const ref = !revision || revision === "HEAD" ? repo.row.default_branch : revision;
      const sha = await cachedRevision(db, repo.row.id, ref);
      if (!sha && revision) {
        throw revisionNotFound(revision, repo.fullName);
      }
      const siblings =
        !sha || !withSiblings
          ? []
          : blobs
            ? ((await repoFiles.listTree(repo.row.id, sha, "", true)) ?? [])
                .filter((entry) => entry.type === "file")
                .map((entry) => ({
                  rfilename: entry.path,
                  size: entry.size,
                  blobId: entry.oid,
                  ...(entry.lfs
                    ? {
                        lfs: {
                          sha256: entry.lfs.oid,
                          size: entry.lfs.size,
                          pointerSize: entry.lfs.pointerSize,
                        },
                      }
                    : {}),
                }))
            : (await storage.listFiles(repo.row.id, sha)).map((rfilename) => ({ rfilename }));
      return {
        _id: repo.row.id,
        id: repo.fullName,
        author: repo.owner.handle,
        type: repo.type,
        sha,
        private: repo.row.private === 1,
        gated: gateModeOf(repo.row),
        createdAt: repo.row.created_at,
        lastModified: repo.row.updated_at || repo.row.created_at,
        ...sdkOf(repo.row),
        xetEnabled: repo.row.xet_enabled === 1,
        siblings,
        ...(
          await discoveryFields(db, [repo], fields ?? INFO_FIELDS[repo.type], (model) =>
            this.spacesUsing(principal, model),
          )
        ).get(repo.row.id),
      };
    },
  };
}

export type ReposService = ReturnType<typeof createReposService>;
