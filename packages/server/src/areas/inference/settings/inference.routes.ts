import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  ApiErrorRef,
  CatalogModel,
  CatalogModelList,
  InferenceOverview,
  InferencePreferences,
  ProviderKey,
  ProviderKeyList,
  SaveProviderKey,
  UpdateInferencePreferences,
} from "@hub/api";
import { Type } from "@sinclair/typebox";
import { notFound } from "../../../errors.js";
import { ownerSettingsRoute } from "../../../http/owner-settings.js";
import type { Catalog } from "../../../router/candidates.js";
import { catalogMappings, listCatalog } from "../../../router/catalog-listing.js";
import type { LiveStats } from "../../../router/live-stats.js";
import type { OrgsService } from "../../organizations/orgs/orgs.service.js";
import type { InferenceService } from "./inference.service.js";

const tags = ["Inference Providers"];
const ProviderParams = Type.Object({ provider: Type.String() });
const ModelParams = Type.Object({ owner: Type.String(), model: Type.String() });
const NoContent = { type: "null", description: "Done." } as const;

/**
 * The Router's control plane on the Hub API: the public catalog, and each
 * owner's preferences, provider keys and usage overview, for the caller's
 * account and for organizations their admins manage.
 */
export function inferenceRoutes(deps: {
  inference: InferenceService;
  orgs: OrgsService;
  catalog: Catalog;
  stats: LiveStats;
  startedAt: number;
}): FastifyPluginAsyncTypebox {
  const { inference, catalog, stats } = deps;
  return async (app) => {
    app.get(
      "/api/inference/models",
      {
        schema: {
          operationId: "inference_models_list",
          tags,
          summary: "Every model the Router serves, with each provider's price, status and measured speed.",
          response: { 200: CatalogModelList },
        },
        config: { access: "optional" },
      },
      async () => listCatalog(catalog, await stats.view(catalogMappings(catalog)), deps.startedAt),
    );

    app.get(
      "/api/inference/models/:owner/:model",
      {
        schema: {
          operationId: "inference_model_get",
          tags,
          summary:
            "One model the Router serves, with each provider's price, status and measured speed; 404 when no provider serves it.",
          params: ModelParams,
          response: { 200: CatalogModel, 404: ApiErrorRef },
        },
        config: { access: "optional" },
      },
      async (request) => {
        const id = `${request.params.owner}/${request.params.model}`;
        const model = listCatalog(
          catalog,
          await stats.view(catalogMappings(catalog)),
          deps.startedAt,
        ).data.find((entry) => entry.id === id);
        if (!model) {
          throw notFound(`The Router serves no model ${id}; list them at GET /api/inference/models.`);
        }
        return model;
      },
    );

    app.get(
      "/api/inference/providers/:provider/models",
      {
        schema: {
          operationId: "inference_provider_models_list",
          tags,
          summary: "The models one provider serves.",
          params: ProviderParams,
          response: { 200: CatalogModelList, 404: ApiErrorRef },
        },
        config: { access: "optional" },
      },
      async (request) => {
        if (!catalog.provider(request.params.provider)) {
          throw notFound(
            `There is no provider ${request.params.provider}; list them at GET /api/inference/models.`,
          );
        }
        return listCatalog(
          catalog,
          await stats.view(catalogMappings(catalog)),
          deps.startedAt,
          request.params.provider,
        );
      },
    );

    const settings = (route: Parameters<typeof ownerSettingsRoute>[2]) =>
      ownerSettingsRoute(app, deps.orgs, route);

    settings({
      method: "GET",
      path: "/inference/overview",
      operationId: "inference_overview",
      summary: "Spend and usage of one month by model, provider and day, with the credit balance.",
      tags,
      action: "settings:read",
      querystring: Type.Object({
        month: Type.Optional(
          Type.String({
            pattern: "^\\d{4}-(0[1-9]|1[0-2])$",
            description: "YYYY-MM (UTC); this month by default.",
          }),
        ),
      }),
      response: { 200: InferenceOverview },
      handler: (owner, request) => inference.overview(owner, (request.query as { month?: string }).month),
    });
    settings({
      method: "GET",
      path: "/inference/preferences",
      operationId: "inference_preferences_get",
      summary: "Provider order, disabled providers, default policy and monthly hard limit.",
      tags,
      action: "settings:read",
      response: { 200: InferencePreferences },
      handler: (owner) => inference.preferences(owner),
    });
    settings({
      method: "PUT",
      path: "/inference/preferences",
      operationId: "inference_preferences_put",
      summary: "Replace the inference preferences; fields left out take their defaults.",
      tags,
      action: "settings:write",
      body: UpdateInferencePreferences,
      response: { 200: InferencePreferences },
      handler: (owner, request) =>
        inference.savePreferences(owner, request.body as UpdateInferencePreferences),
    });
    settings({
      method: "GET",
      path: "/inference/provider-keys",
      operationId: "inference_provider_keys_list",
      summary: "Saved provider keys (BYOK), masked.",
      tags,
      action: "settings:read",
      response: { 200: ProviderKeyList },
      handler: async (owner) => ({ keys: await inference.providerKeys(owner) }),
    });
    settings({
      method: "PUT",
      path: "/inference/provider-keys/:provider",
      operationId: "inference_provider_key_put",
      summary: "Save (or replace) the key used for this provider when billing is byok or auto.",
      tags,
      action: "settings:write",
      params: ProviderParams,
      body: SaveProviderKey,
      response: { 200: ProviderKey, 404: ApiErrorRef },
      handler: (owner, request) =>
        inference.saveProviderKey(
          owner,
          (request.params as { provider: string }).provider,
          (request.body as SaveProviderKey).key,
        ),
    });
    settings({
      method: "DELETE",
      path: "/inference/provider-keys/:provider",
      operationId: "inference_provider_key_delete",
      summary: "Forget the saved key of this provider.",
      tags,
      action: "settings:write",
      params: ProviderParams,
      response: { 204: NoContent, 404: ApiErrorRef },
      handler: async (owner, request, reply) => {
        await inference.deleteProviderKey(owner, (request.params as { provider: string }).provider);
        return reply.status(204).send();
      },
    });
  };
}
