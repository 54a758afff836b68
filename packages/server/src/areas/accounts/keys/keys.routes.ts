import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { AccountKey, ApiErrorRef, CreateKeyRequest } from "@hub/api";
import { Type } from "@sinclair/typebox";
import { principalOf } from "../../../http/access.js";
import type { KeysService } from "./keys.service.js";

/** `/api/me/keys`: the account's public SSH and GPG keys (scope account:keys for fine-grained tokens). */
export function keysRoutes({ keys }: { keys: KeysService }): FastifyPluginAsyncTypebox {
  const tags = ["Account"];
  return async (app) => {
    app.get(
      "/api/me/keys",
      {
        schema: {
          operationId: "account_keys_list",
          tags,
          summary: "Your public SSH and GPG keys.",
          response: { 200: Type.Array(AccountKey) },
        },
        config: { access: { action: "account:keys" } },
      },
      async (request) => keys.list(principalOf(request).userId),
    );

    app.post(
      "/api/me/keys",
      {
        schema: {
          operationId: "account_keys_create",
          tags,
          summary:
            "Add a public key: an OpenSSH key line (ed25519, ECDSA, RSA of 2048 bits or more) or an armored OpenPGP key.",
          body: CreateKeyRequest,
          response: { 201: AccountKey, 409: ApiErrorRef },
        },
        config: { access: { action: "account:keys" } },
      },
      async (request, reply) =>
        reply.status(201).send(await keys.add(principalOf(request).userId, request.body)),
    );

    app.delete(
      "/api/me/keys/:keyId",
      {
        schema: {
          operationId: "account_keys_revoke",
          tags,
          summary: "Remove a key; it stops working at once.",
          params: Type.Object({ keyId: Type.String() }),
          response: { 204: { type: "null", description: "Removed." }, 404: ApiErrorRef },
        },
        config: { access: { action: "account:keys" } },
      },
      async (request, reply) => {
        await keys.remove(principalOf(request).userId, request.params.keyId);
        return reply.status(204).send();
      },
    );
  };
}
