import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  ApiErrorRef,
  MigrateUsername,
  UsernameMigration,
  UsernamePreview,
  UsernamePreviewQuery,
} from "@hub/api";
import { principalOf } from "../../../http/access.js";
import type { UsernameService } from "./username.service.js";

const tags = ["Account"];

/**
 * Renaming the account: a preview (a settings read) and the rename itself,
 * which needs a session or a write role token, recently reauthenticated.
 */
export function usernameRoutes({ usernames }: { usernames: UsernameService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/api/me/profile/username",
      {
        schema: {
          operationId: "account_profile_username_preview",
          tags,
          summary:
            "Preview a username change: whether the name is valid and free, and which repositories, redirects and git remotes move.",
          querystring: UsernamePreviewQuery,
          response: { 200: UsernamePreview },
        },
        config: { access: { action: "settings:read" } },
      },
      async (request) => usernames.preview(principalOf(request), request.query.username),
    );

    app.post(
      "/api/me/profile/username",
      {
        schema: {
          operationId: "account_profile_username_migrate",
          tags,
          summary:
            "Change the username. Old repository URLs, API paths and git remotes keep working through redirects; the old username stays reserved for this account.",
          body: MigrateUsername,
          response: { 200: UsernameMigration, 409: ApiErrorRef },
        },
        config: { access: { action: "account:change-username" } },
      },
      async (request) => {
        const principal = principalOf(request);
        return usernames.migrate(principal, request.body.username, principal.handle);
      },
    );
  };
}
