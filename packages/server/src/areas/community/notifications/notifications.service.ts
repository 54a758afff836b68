import type {
  DiscussionStatus,
  Notification,
  NotificationActivity,
  NotificationFilters,
  NotificationList,
  NotificationListQuery,
  NotificationReason,
  RepoType,
  RepoWatch,
  WatchMode,
} from "@hub/api";
import type { Principal } from "../../../auth/credential.js";
import type { Db } from "../../../db/database.js";
import { repoWebUrl, type FoundRepo, type RepoLookup } from "../../../domain/repositories.js";
import { HubError, badRequest } from "../../../errors.js";
import {
  notificationsRepository as repo_,
  type InboxFilter,
  type NotificationWithDiscussion,
} from "./notifications.repository.js";

/** Notifications per page of the inbox. */
export const NOTIFICATION_PAGE_SIZE = 50;

export interface NotificationsServiceDeps {
  db: Db;
  clock: () => Date;
  publicUrl: string;
  repos: Pick<RepoLookup, "find" | "findById" | "mayRead">;
}

/** The part of an inbox filters select, and the repositories of it the caller may read, by id. */
interface Selection {
  filter: InboxFilter;
  visible: (repositoryId: string) => Promise<FoundRepo | null>;
}

const notificationNotFound = (id: string) =>
  new HubError(
    404,
    "notification_not_found",
    `You have no notification ${id}; list them with GET /api/notifications.`,
  );

/**
 * An account's inbox (listing, unread count, marking read) and its choices of
 * repositories to watch or mute. What the inbox shows is checked against the
 * caller's credential through the one decision (`mayRead`) on every read: a
 * repository the account can no longer read (it left the organization, its
 * SSO sign-in lapsed) or the token may not (bounded to other repositories)
 * drops out of listings, counts and "mark all read" at once.
 */
export function createNotificationsService({ db, clock, publicUrl, repos }: NotificationsServiceDeps) {
  /** The repository the filters name: undefined when they name none, null when it does not exist. */
  async function namedRepository(filters: NotificationFilters): Promise<FoundRepo | null | undefined> {
    const { repo, repoType, repoName } = filters;
    if (repo !== undefined && (repoType !== undefined || repoName !== undefined))
      throw badRequest(
        "invalid_request",
        "Name the repository once: repo={type}/{owner}/{name}, or repoType with repoName.",
        "repo",
      );
    let type: RepoType;
    let fullName: string;
    if (repo !== undefined) {
      const slash = repo.indexOf("/");
      type = repo.slice(0, slash) as RepoType;
      fullName = repo.slice(slash + 1);
    } else if (repoType !== undefined && repoName !== undefined) {
      type = repoType;
      fullName = repoName;
    } else if (repoType === undefined && repoName === undefined) {
      return undefined;
    } else {
      throw badRequest(
        "invalid_request",
        "repoType and repoName go together: send both (repoType=model&repoName=alice/bert), or repo=model/alice/bert.",
        repoType === undefined ? "repoType" : "repoName",
      );
    }
    const [owner = "", name = ""] = fullName.split("/");
    return repos.find(type, owner, name);
  }

  /**
   * What the filters select of the caller's inbox, without the repositories
   * the caller may not read now; null when the filters name a repository that
   * does not exist (so nothing matches).
   */
  async function select(principal: Principal, filters: NotificationFilters): Promise<Selection | null> {
    const named = await namedRepository(filters);
    if (named === null) return null;
    const filter: InboxFilter = { hidden: [] };
    if (named) filter.repositoryId = named.row.id;
    if (filters.kind) filter.isPullRequest = filters.kind === "pull_request";
    const checked = new Map<string, FoundRepo | null>();
    const visible = async (repositoryId: string) => {
      if (!checked.has(repositoryId)) {
        const repo = await repos.findById(repositoryId);
        checked.set(repositoryId, repo && (await repos.mayRead(principal, repo)) ? repo : null);
      }
      return checked.get(repositoryId) ?? null;
    };
    for (const id of await repo_.repositoriesIn(db, principal.userId, filter))
      if (!(await visible(id))) filter.hidden.push(id);
    return { filter, visible };
  }

  function toApi(row: NotificationWithDiscussion, repo: FoundRepo): Notification {
    return {
      id: row.id,
      reason: row.reason as NotificationReason,
      activity: row.activity as NotificationActivity,
      read: row.read_at !== null,
      createdAt: row.created_at,
      repo: { name: repo.fullName, type: repo.type },
      discussion: {
        num: row.num,
        title: row.title,
        status: row.status as DiscussionStatus,
        isPullRequest: row.is_pull_request === 1,
      },
      ...(row.actor_handle === null ? {} : { actor: { name: row.actor_handle } }),
      url: `${repoWebUrl(publicUrl, repo.type, repo.fullName)}/discussions/${row.num}${row.event_id === null ? "" : `#${row.event_id}`}`,
    };
  }

  return {
    /** A page of the caller's inbox, newest first, with how many match and how many of those are unread. */
    async list(principal: Principal, query: NotificationListQuery): Promise<NotificationList> {
      const start = (query.p ?? 0) * NOTIFICATION_PAGE_SIZE;
      const selection = await select(principal, query);
      if (!selection) return { notifications: [], count: 0, unreadCount: 0, start };
      const { filter, visible } = selection;
      const unreadOnly = query.unread === "1" || query.unread === "true";
      const shown = unreadOnly ? { ...filter, unread: true } : filter;
      const [count, unreadCount, rows] = await Promise.all([
        repo_.count(db, principal.userId, shown),
        repo_.count(db, principal.userId, { ...filter, unread: true }),
        repo_.page(db, principal.userId, shown, start, NOTIFICATION_PAGE_SIZE),
      ]);
      const notifications: Notification[] = [];
      for (const row of rows) {
        // A repository that reached the inbox after the selection was made is checked here.
        const repo = await visible(row.repository_id);
        if (repo) notifications.push(toApi(row, repo));
      }
      return { notifications, count, unreadCount, start };
    },

    async unreadCount(principal: Principal, filters: NotificationFilters): Promise<number> {
      const selection = await select(principal, filters);
      return selection ? repo_.count(db, principal.userId, { ...selection.filter, unread: true }) : 0;
    },

    /** Marks one of the caller's notifications read; reading it again changes nothing. */
    async markRead(principal: Principal, id: string): Promise<void> {
      const row = await repo_.find(db, principal.userId, id);
      const repo = row ? await repos.findById(row.repository_id) : null;
      if (!row || !repo || !(await repos.mayRead(principal, repo))) throw notificationNotFound(id);
      if (row.read_at === null) await repo_.markRead(db, principal.userId, id, clock().toISOString());
    },

    /** Marks read every unread notification the filters select; answers how many. */
    async markAllRead(principal: Principal, filters: NotificationFilters | null): Promise<number> {
      const selection = await select(principal, filters ?? {});
      if (!selection) return 0;
      return repo_.markAllRead(db, principal.userId, selection.filter, clock().toISOString());
    },

    async watch(principal: Principal, repo: FoundRepo): Promise<RepoWatch> {
      const row = await repo_.watch(db, principal.userId, repo.row.id);
      return { mode: (row?.mode as WatchMode | undefined) ?? null };
    },

    /** Watches or mutes a repository, replacing the choice made before. */
    async setWatch(principal: Principal, repo: FoundRepo, mode: WatchMode): Promise<RepoWatch> {
      await repo_.setWatch(db, {
        user_id: principal.userId,
        repository_id: repo.row.id,
        mode,
        created_at: clock().toISOString(),
      });
      return { mode };
    },

    /** Neither watches nor mutes the repository any more. */
    async unwatch(principal: Principal, repo: FoundRepo): Promise<void> {
      await repo_.deleteWatch(db, principal.userId, repo.row.id);
    },
  };
}

export type NotificationsService = ReturnType<typeof createNotificationsService>;
