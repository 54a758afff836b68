import type { Logger } from "pino";
import { randomUUID } from "node:crypto";
import type {
  ContentPreferences,
  CreateRecommendationSuppression,
  LearnedInterest,
  Recommendation,
  RecommendationSuppression,
  RepoType,
  SuppressionKind,
  UpdateContentPreferences,
} from "@hub/api";
import type { Authorize } from "../../../auth/authorizer.js";
import type { Principal } from "../../../auth/credential.js";
import type { Db } from "../../../db/database.js";
import type { RecommendationSuppressionRow } from "../../../db/schema.js";
import { badRequest, conflict, HubError, notFound } from "../../../errors.js";
import type { RepoFiles } from "../../../git/repo-files.js";
import type { RepoStorage } from "../../../git/repo-storage.js";
import { reposRepository } from "../../repositories/repos/repos.repository.js";
import type { RepoLookup } from "../../../domain/repositories.js";
import { repoResource, type FoundRepo } from "../../../domain/repositories.js";
import { contentPreferencesRepository } from "./content-preferences.repository.js";
import { readmeAt, readmeTags } from "./readme-tags.js";
import type { ReposService } from "../../repositories/repos/repos.service.js";
import { rank, type RecommendationProfile } from "./recommendations.js";

/** How many trending repositories, and how many carrying each preferred tag, recommendations choose from. */
const CANDIDATES = 100;
/** How many preferred languages and learned interests bring candidates of their own. */
const PREFERRED_SOURCES = 5;

/** How many of the most recent repositories interests are learned from. */
const LEARN_FROM = 200;
const MAX_INTERESTS = 50;
const TAG = /^[A-Za-z0-9][A-Za-z0-9:._/+-]{0,99}$/;
const REPO_ID = /^([a-z0-9][a-z0-9-]{0,39})\/([a-z0-9][a-z0-9._-]{0,95})$/;

export interface ContentPreferencesDeps {
  db: Db;
  clock: () => Date;
  repos: RepoLookup;
  /** The listing through `decide()` recommendations choose from. */
  listing: Pick<ReposService, "list">;
  storage: RepoStorage;
  repoFiles: RepoFiles;
  authorize: Authorize;
  logger: Logger;
}

/**
 * Content preferences: what the account set (hidden tags, languages, content
 * filters), interests learned from its real activity (the tags of
 * repositories it downloaded), and what it asked not to be recommended.
 */
/** How long downloads are counted in memory before they are written. */
const DOWNLOAD_FLUSH_MS = 1000;

export function createContentPreferencesService({
  db,
  clock,
  repos,
  listing,
  storage,
  repoFiles,
  authorize,
  logger,
}: ContentPreferencesDeps) {
  const pendingDownloads = new Map<
    string,
    { userId: string; repositoryId: string; kind: string; count: number; firstAt: string; lastAt: string }
  >();
  let flushTimer: NodeJS.Timeout | null = null;

  /** Writes the counted downloads; one whose repository or account is gone meanwhile has nothing to count for. */
  async function flushDownloads(): Promise<void> {
    if (flushTimer) clearTimeout(flushTimer);
    flushTimer = null;
    const batch = [...pendingDownloads.values()];
    pendingDownloads.clear();
    for (const activity of batch) {
      await contentPreferencesRepository
        .record(db, activity)
        .catch((err: unknown) =>
          logger.warn(
            { err: (err as Error).message },
            "a download could not be counted for learned interests",
          ),
        );
    }
  }

  /** The repository if the caller may still read it. */
  async function readable(principal: Principal, id: string): Promise<FoundRepo | null> {
    const repo = await repos.findById(id);
    if (!repo) return null;
    try {
      await authorize(principal, "repo:read", repoResource(repo));
      return repo;
    } catch (err) {
      if (err instanceof HubError) return null;
      throw err;
    }
  }

  /** The card tags of a repository's default branch. */
  async function tagsOf(repo: FoundRepo): Promise<string[]> {
    const commit = await storage.resolveRef(repo.row.id, repo.row.default_branch);
    const readme = commit ? await readmeAt(repoFiles, repo.row.id, commit) : null;
    return readme === null ? [] : readmeTags(readme);
  }

  async function learned(principal: Principal, hidden: Set<string>): Promise<LearnedInterest[]> {
    await flushDownloads();
    const activity = await contentPreferencesRepository.activity(db, principal.userId, LEARN_FROM);
    const interests = new Map<string, LearnedInterest>();
    for (const row of activity) {
      const repo = await readable(principal, row.repository_id);
      if (!repo) continue;
      for (const tag of await tagsOf(repo)) {
        if (hidden.has(tag)) continue;
        const interest = interests.get(tag) ?? { tag, score: 0, repositories: 0 };
        interest.score += row.count;
        interest.repositories += 1;
        interests.set(tag, interest);
      }
    }
    return [...interests.values()]
      .sort((a, b) => b.score - a.score || b.repositories - a.repositories || a.tag.localeCompare(b.tag))
      .slice(0, MAX_INTERESTS);
  }

  async function presentSuppression(
    row: RecommendationSuppressionRow,
  ): Promise<RecommendationSuppression | null> {
    let value = row.value;
    if (row.kind === "repository") {
      const repo = await repos.findById(row.value);
      if (!repo) return null;
      value = `${repo.type}/${repo.fullName}`;
    } else if (row.kind === "author") {
      const handle =
        (await reposRepository.ownerHandle(db, "user", row.value)) ??
        (await reposRepository.ownerHandle(db, "org", row.value));
      if (!handle) return null;
      value = handle;
    }
    return { id: row.id, kind: row.kind as SuppressionKind, value, createdAt: row.created_at };
  }

  return {
    /** The explicit preferences and the interests learned from the caller's activity. */
    async get(principal: Principal): Promise<ContentPreferences> {
      const { updatedAt, ...explicit } = await contentPreferencesRepository.explicit(db, principal.userId);
      return {
        ...explicit,
        learnedInterests: await learned(principal, new Set(explicit.hiddenTags)),
        updatedAt,
      };
    },

    /**
     * Repositories of a kind to recommend to the caller: trending ones and those carrying its preferred
     * languages and learned interests, all from the listing (so only what `decide()` lets it read), never
     * one it suppressed (the repository, its author or a tag it carries), one with a hidden tag, one its
     * content filters exclude, or its own; preferences rank first, trending after.
     */
    async recommend(
      principal: Principal,
      type: "model" | "dataset" | "space",
      limit: number,
    ): Promise<Recommendation[]> {
      const preferences = await this.get(principal);
      const rows = await contentPreferencesRepository.suppressions(db, principal.userId);
      const suppressed: RecommendationProfile["suppressed"] = {
        repositories: new Set(),
        authors: new Set(),
        tags: new Set(),
      };
      for (const row of rows) {
        if (row.kind === "repository") suppressed.repositories.add(row.value);
        else if (row.kind === "tag") suppressed.tags.add(row.value);
        else if (row.kind === "author") {
          const handle =
            (await reposRepository.ownerHandle(db, "user", row.value)) ??
            (await reposRepository.ownerHandle(db, "org", row.value));
          if (handle) suppressed.authors.add(handle.toLowerCase());
        }
      }
      const profile: RecommendationProfile = {
        handle: principal.handle,
        hiddenTags: preferences.hiddenTags,
        languages: preferences.languages,
        contentFilters: preferences.contentFilters,
        interests: preferences.learnedInterests,
        suppressed,
      };
      const preferred = [
        ...preferences.languages,
        ...preferences.learnedInterests.map((interest) => interest.tag),
      ].slice(0, PREFERRED_SOURCES);
      const pages = await Promise.all(
        [[], ...preferred.map((tag) => [tag])].map((tags) =>
          listing.list(principal, type, {
            tags,
            sort: "trending_score",
            sorted: true,
            descending: true,
            expand: null,
            full: false,
            cardData: preferences.contentFilters.includes("without-model-card"),
            config: false,
            // Hidden tags, content filters and suppressions leave candidates out inside the query, so they
            // take no place among the candidates; `rank` checks them again, and leaves out the account's own.
            personalized: true,
            limit: CANDIDATES,
            offset: 0,
          }),
        ),
      );
      return rank(
        pages.flatMap((page) => page.items),
        profile,
        limit,
      );
    },

    /** Replaces the explicit part; the learned part stays. */
    async update(principal: Principal, body: UpdateContentPreferences): Promise<ContentPreferences> {
      await contentPreferencesRepository.save(db, {
        user_id: principal.userId,
        hidden_tags: JSON.stringify(body.hiddenTags ?? []),
        languages: JSON.stringify(body.languages ?? []),
        content_filters: JSON.stringify(body.contentFilters ?? []),
        updated_at: clock().toISOString(),
      });
      return this.get(principal);
    },

    /** Forgets the activity interests were learned from. */
    async clearLearned(userId: string): Promise<void> {
      for (const [key, waiting] of pendingDownloads)
        if (waiting.userId === userId) pendingDownloads.delete(key);
      await contentPreferencesRepository.clearActivity(db, userId);
    },

    /**
     * Records that the account downloaded a file of the repository: counted
     * in memory and written within a second (one write for a whole snapshot
     * download, not one per file); reading interests writes what waits first.
     */
    async recordDownload(userId: string, repositoryId: string): Promise<void> {
      const at = clock().toISOString();
      const key = `${userId} ${repositoryId}`;
      const waiting = pendingDownloads.get(key);
      if (waiting) {
        waiting.count += 1;
        waiting.lastAt = at;
      } else {
        pendingDownloads.set(key, {
          userId,
          repositoryId,
          kind: "download",
          count: 1,
          firstAt: at,
          lastAt: at,
        });
      }
      flushTimer ??= setTimeout(() => void flushDownloads(), DOWNLOAD_FLUSH_MS).unref();
    },

    /** Writes the downloads that wait; the hub calls it when it stops. */
    flush: flushDownloads,

    async suppressions(userId: string): Promise<RecommendationSuppression[]> {
      const rows = await contentPreferencesRepository.suppressions(db, userId);
      const shown = await Promise.all(rows.map(presentSuppression));
      return shown.filter((s): s is RecommendationSuppression => s !== null);
    },

    /**
     * Records that something should not be recommended: a repository the
     * caller may read, an existing user or organization, or a tag. Repositories
     * and authors are kept by id, so renames keep the suppression.
     */
    async suppress(
      principal: Principal,
      body: CreateRecommendationSuppression,
    ): Promise<RecommendationSuppression> {
      let value: string;
      if (body.kind === "repository") {
        const match = REPO_ID.exec(body.value);
        if (!match)
          throw badRequest("invalid_value", `"${body.value}" is not a repository id (owner/name).`, "value");
        const type: RepoType = body.repoType ?? "model";
        value = (await repos.findOrHide(principal, type, match[1] ?? "", match[2] ?? "")).row.id;
        const repo = await readable(principal, value);
        if (!repo) throw notFound(`Repository ${body.value} was not found, or you may not see it.`);
      } else if (body.kind === "author") {
        value = (await repos.namespace(body.value)).owner.id;
      } else {
        if (!TAG.test(body.value))
          throw badRequest("invalid_value", `"${body.value}" is not a tag.`, "value");
        value = body.value;
      }
      if (await contentPreferencesRepository.findSuppression(db, principal.userId, body.kind, value)) {
        throw conflict(
          "suppression_exists",
          `You already asked not to be recommended ${body.value}.`,
          "value",
        );
      }
      const row: RecommendationSuppressionRow = {
        id: randomUUID(),
        user_id: principal.userId,
        kind: body.kind,
        value,
        created_at: clock().toISOString(),
      };
      try {
        await contentPreferencesRepository.insertSuppression(db, row);
      } catch (err) {
        if (await contentPreferencesRepository.findSuppression(db, principal.userId, body.kind, value)) {
          throw conflict(
            "suppression_exists",
            `You already asked not to be recommended ${body.value}.`,
            "value",
          );
        }
        throw err;
      }
      const shown = await presentSuppression(row);
      if (!shown) throw notFound(`${body.value} no longer exists.`);
      return shown;
    },

    async unsuppress(userId: string, id: string): Promise<void> {
      const deleted = await contentPreferencesRepository.deleteSuppression(db, userId, id);
      if (Number(deleted.numDeletedRows) === 0)
        throw notFound("No such suppression; list them at GET /api/me/recommendation-suppressions.");
    },
  };
}

export type ContentPreferencesService = ReturnType<typeof createContentPreferencesService>;
