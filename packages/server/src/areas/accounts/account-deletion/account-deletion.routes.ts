import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { AccountDeletion, AccountDeletionPreview, ApiErrorRef, DeleteAccountRequest } from "@hub/api";
import { badRequest } from "../../../errors.js";
import { principalOf } from "../../../http/access.js";
import { clearedSessionCookies } from "../auth/auth.routes.js";
import type { AccountDeletionService } from "./account-deletion.service.js";

const tags = ["Account"];

/**
 * Deleting the account: a preview (a settings read) and the deletion itself,
 * which needs a session or a write role token, recently reauthenticated, and
 * the username sent back as confirmation.
 */
export function accountDeletionRoutes({
  deletion,
  secureCookies,
}: {
  deletion: AccountDeletionService;
  secureCookies: boolean;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/api/me/account-deletion",
      {
        schema: {
          operationId: "account_deletion_preview",
          tags,
          summary:
            "Preview deleting the account: the repositories, organizations, credentials, webhooks and other data that would go, and what blocks it.",
          response: { 200: AccountDeletionPreview },
        },
        config: { access: { action: "settings:read" } },
      },
      async (request) => deletion.preview(principalOf(request)),
    );

    app.delete(
      "/api/me/account",
      {
        schema: {
          operationId: "account_deletion_execute",
          tags,
          summary:
            'Delete the account for good: send {"confirm": "<your username>"} after a recent reauthentication. Every token, key and session stops working at once.',
          body: DeleteAccountRequest,
          response: { 200: AccountDeletion, 409: ApiErrorRef },
        },
        // The body is checked after authorization, so the answer can say what this account must send.
        attachValidation: true,
        config: { access: { action: "account:delete" } },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        if (request.validationError) {
          throw badRequest(
            "confirmation_required",
            `Confirm by sending your username: {"confirm": "${principal.handle}"}.`,
            "confirm",
          );
        }
        const deleted = await deletion.execute(principal, request.body.confirm);
        if (principal.credential.type === "session") {
          reply.header("set-cookie", clearedSessionCookies(secureCookies));
        }
        return deleted;
      },
    );
  };
}
