import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  ApiErrorRef,
  NotificationCountQuery,
  NotificationIdParams,
  NotificationList,
  NotificationListQuery,
  REPO_TYPES,
  ReadAllRequest,
  ReadAllResult,
  RepoPathParams,
  RepoWatch,
  UnreadCount,
  WatchRequest,
} from "@hub/api";
import type { RepoLookup } from "../../../domain/repositories.js";
import { principalOf } from "../../../http/access.js";
import { repoPathAction, repositoryOf } from "../../../http/repo-access.js";
import type { NotificationsService } from "./notifications.service.js";

/**
 * Reading the inbox is reading repositories' discussions: `repo:read` (read
 * role tokens hold it). Marking read and watching change what the account
 * keeps, as taking part does: `community:write` (write role tokens and
 * sessions hold it, read role tokens do not). Both act on the caller's own
 * account; each listed repository is checked again with the caller's
 * credential, so a token bounded to some repositories sees only theirs.
 */
const READ_INBOX = { access: { action: "repo:read" as const } };
const CHANGE_INBOX = { access: { action: "community:write" as const } };

/** `/api/notifications`: the caller's inbox; `/api/{type}s/{owner}/{name}/watch`: watching or muting a repository. */
export function notificationsRoutes({
  repos,
  notifications,
}: {
  repos: RepoLookup;
  notifications: NotificationsService;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ["Notifications"];

    app.get(
      "/api/notifications",
      {
        schema: {
          operationId: "notifications_list",
          tags,
          summary:
            "Your notifications, 50 a page (p from 0), newest first; filter by unread=1, repo={type}/{owner}/{name} (or repoType and repoName) and kind.",
          querystring: NotificationListQuery,
          response: { 200: NotificationList },
        },
        config: READ_INBOX,
      },
      async (request) => notifications.list(principalOf(request), request.query),
    );

    app.get(
      "/api/notifications/unread-count",
      {
        schema: {
          operationId: "notifications_unread_count",
          tags,
          summary: "How many of your notifications are unread (with the list's repository and kind filters).",
          querystring: NotificationCountQuery,
          response: { 200: UnreadCount },
        },
        config: READ_INBOX,
      },
      async (request) => ({
        unreadCount: await notifications.unreadCount(principalOf(request), request.query),
      }),
    );

    app.post(
      "/api/notifications/read-all",
      {
        schema: {
          operationId: "notifications_read_all",
          tags,
          summary:
            "Mark your notifications read: all of them, or those the body's filters (repo or repoType and repoName, kind) select.",
          body: ReadAllRequest,
          response: { 200: ReadAllResult },
        },
        config: { ...CHANGE_INBOX, optionalBody: true },
      },
      async (request) => ({
        marked: await notifications.markAllRead(principalOf(request), request.body),
      }),
    );

    app.post(
      "/api/notifications/:id/read",
      {
        schema: {
          operationId: "notifications_read",
          tags,
          summary: "Mark one of your notifications read.",
          params: NotificationIdParams,
          response: { 204: { type: "null", description: "Read." }, 404: ApiErrorRef },
        },
        config: CHANGE_INBOX,
      },
      async (request, reply) => {
        await notifications.markRead(principalOf(request), request.params.id);
        return reply.status(204).send();
      },
    );

    for (const type of REPO_TYPES) {
      const path = `/api/${type}s/:owner/:name/watch`;

      app.get(
        path,
        {
          schema: {
            operationId: `notifications_watch_get_${type}`,
            tags,
            summary: "Whether you watch or mute the repository's discussions.",
            params: RepoPathParams,
            response: { 200: RepoWatch, 404: ApiErrorRef },
          },
          config: { access: repoPathAction(repos, type, "repo:read") },
        },
        async (request) => notifications.watch(principalOf(request), repositoryOf(request)),
      );

      app.put(
        path,
        {
          schema: {
            operationId: `notifications_watch_set_${type}`,
            tags,
            summary:
              "Watch the repository (hear of every discussion and pull request) or mute it (hear of none but mentions).",
            params: RepoPathParams,
            body: WatchRequest,
            response: { 200: RepoWatch, 404: ApiErrorRef },
          },
          config: { access: repoPathAction(repos, type, "community:write") },
        },
        async (request) =>
          notifications.setWatch(principalOf(request), repositoryOf(request), request.body.mode),
      );

      app.delete(
        path,
        {
          schema: {
            operationId: `notifications_watch_delete_${type}`,
            tags,
            summary: "Neither watch nor mute the repository any more.",
            params: RepoPathParams,
            response: { 204: { type: "null", description: "Done." }, 404: ApiErrorRef },
          },
          config: { access: repoPathAction(repos, type, "community:write") },
        },
        async (request, reply) => {
          await notifications.unwatch(principalOf(request), repositoryOf(request));
          return reply.status(204).send();
        },
      );
    }
  };
}
