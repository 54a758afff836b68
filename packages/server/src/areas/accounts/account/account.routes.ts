import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Me, Whoami, WhoamiV2 } from "@hub/api";
import { principalOf } from "../../../http/access.js";
import type { AccountService } from "./account.service.js";

/** The caller's identity (`whoami`, `whoami-v2`) and private account context (`/api/me`). */
export function accountRoutes({ account }: { account: AccountService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/api/whoami",
      {
        schema: {
          operationId: "whoami",
          tags: ["Account"],
          summary: "The identity record of the caller.",
          response: { 200: Whoami },
        },
        config: { access: { action: "account:read" } },
      },
      async (request) => account.whoami(principalOf(request)),
    );

    app.get(
      "/api/whoami-v2",
      {
        schema: {
          operationId: "whoami_v2",
          tags: ["Account"],
          summary: "The identity record plus the token's creation time, as Hugging Face clients read it.",
          response: { 200: WhoamiV2 },
        },
        config: { access: { action: "account:read" } },
      },
      async (request) => account.identity(principalOf(request)),
    );

    app.get(
      "/api/me",
      {
        schema: {
          operationId: "account_profile_get",
          tags: ["Account"],
          summary: "The caller's private account context.",
          response: { 200: Me },
        },
        config: { access: { action: "account:read" } },
      },
      async (request) => account.me(principalOf(request)),
    );
  };
}
