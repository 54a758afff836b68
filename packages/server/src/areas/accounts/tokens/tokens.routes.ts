import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { CreateTokenRequest, CreatedToken, TokenIdParams, TokenList } from "@hub/api";
import { principalOf } from "../../../http/access.js";
import type { TokensService } from "./tokens.service.js";

/** `/api/me/tokens`: list, create and revoke the caller's access tokens. */
export function tokensRoutes({ tokens }: { tokens: TokensService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/api/me/tokens",
      {
        schema: {
          operationId: "account_tokens_list",
          tags: ["Account"],
          summary: "List your access tokens (never their secrets); needs recent reauthentication.",
          response: { 200: TokenList },
        },
        config: { access: { action: "account:manage-tokens" } },
      },
      async (request) => ({ tokens: await tokens.list(principalOf(request).userId) }),
    );

    app.post(
      "/api/me/tokens",
      {
        schema: {
          operationId: "account_tokens_create",
          tags: ["Account"],
          summary:
            "Create an access token; the secret is in this response only. Needs recent reauthentication.",
          body: CreateTokenRequest,
          response: { 201: CreatedToken },
        },
        config: { access: { action: "account:manage-tokens" } },
      },
      async (request, reply) => {
        const { body } = request;
        const created = await tokens.create(principalOf(request).userId, {
          name: body.name,
          expiresAt: body.expires_at,
          role: body.role,
          scopes: body.scopes,
          organization: body.organization,
          repositories: body.repositories,
        });
        return reply.status(201).send(created);
      },
    );

    app.delete(
      "/api/me/tokens/:tokenId",
      {
        schema: {
          operationId: "account_tokens_revoke",
          tags: ["Account"],
          summary: "Revoke an access token; it stops working at once on every surface.",
          params: TokenIdParams,
          response: { 204: { type: "null", description: "Revoked." } },
        },
        config: {
          access: {
            action: "account:revoke-token",
            resource: (request, principal) => ({
              type: "token",
              userId: principal?.userId ?? "",
              tokenId: (request.params as TokenIdParams).tokenId,
            }),
          },
        },
      },
      async (request, reply) => {
        await tokens.revoke(principalOf(request).userId, request.params.tokenId);
        return reply.status(204).send();
      },
    );
  };
}
