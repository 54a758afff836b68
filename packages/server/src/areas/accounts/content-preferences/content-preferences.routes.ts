import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  ApiErrorRef,
  ContentPreferences,
  CreateRecommendationSuppression,
  RecommendationSuppression,
  Recommendation,
  RecommendationsQuery,
  RecommendationSuppressionList,
  UpdateContentPreferences,
} from "@hub/api";
import { Type } from "@sinclair/typebox";
import { principalOf } from "../../../http/access.js";
import type { ContentPreferencesService } from "./content-preferences.service.js";

const tags = ["Account"];
const NoContent = { type: "null", description: "Done." } as const;

/**
 * Content preferences and recommendation suppressions of the caller's
 * account: a session or a role token, read to view and write to change.
 */
export function contentPreferencesRoutes({
  preferences,
}: {
  preferences: ContentPreferencesService;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/api/me/content-preferences",
      {
        schema: {
          operationId: "account_content_preferences_get",
          tags,
          summary:
            "Hidden tags, languages and content filters you set, and interests learned from your downloads.",
          response: { 200: ContentPreferences },
        },
        config: { access: { action: "settings:read" } },
      },
      async (request) => preferences.get(principalOf(request)),
    );

    app.put(
      "/api/me/content-preferences",
      {
        schema: {
          operationId: "account_content_preferences_update",
          tags,
          summary: "Replace the explicit preferences (fields left out become empty); learned interests stay.",
          body: UpdateContentPreferences,
          response: { 200: ContentPreferences },
        },
        config: { access: { action: "settings:write" } },
      },
      async (request) => preferences.update(principalOf(request), request.body),
    );

    app.delete(
      "/api/me/content-preferences/learned-interests",
      {
        schema: {
          operationId: "account_content_preferences_learned_interests_clear",
          tags,
          summary: "Forget the interests learned from your activity, and the activity they came from.",
          response: { 204: NoContent },
        },
        config: { access: { action: "settings:write" } },
      },
      async (request, reply) => {
        await preferences.clearLearned(principalOf(request).userId);
        return reply.status(204).send();
      },
    );

    app.get(
      "/api/me/recommendations",
      {
        schema: {
          operationId: "account_recommendations",
          tags,
          summary:
            "Repositories recommended to you: trending ones, those in your preferred languages and learned interests first; never what you suppressed, hid or filtered out, nor your own.",
          querystring: RecommendationsQuery,
          response: { 200: Type.Array(Recommendation) },
        },
        config: { access: { action: "settings:read" } },
      },
      async (request) =>
        preferences.recommend(principalOf(request), request.query.type ?? "model", request.query.limit ?? 10),
    );

    app.get(
      "/api/me/recommendation-suppressions",
      {
        schema: {
          operationId: "account_recommendation_suppressions_list",
          tags,
          summary: "The repositories, authors and tags you asked not to be recommended, newest first.",
          response: { 200: RecommendationSuppressionList },
        },
        config: { access: { action: "settings:read" } },
      },
      async (request) => ({ suppressions: await preferences.suppressions(principalOf(request).userId) }),
    );

    app.post(
      "/api/me/recommendation-suppressions",
      {
        schema: {
          operationId: "account_recommendation_suppressions_create",
          tags,
          summary: "Ask not to be recommended a repository, an author or a tag.",
          body: CreateRecommendationSuppression,
          response: { 201: RecommendationSuppression, 404: ApiErrorRef, 409: ApiErrorRef },
        },
        config: { access: { action: "settings:write" } },
      },
      async (request, reply) =>
        reply.status(201).send(await preferences.suppress(principalOf(request), request.body)),
    );

    app.delete(
      "/api/me/recommendation-suppressions/:suppressionId",
      {
        schema: {
          operationId: "account_recommendation_suppressions_delete",
          tags,
          summary: "Allow recommending it again.",
          params: Type.Object({ suppressionId: Type.String({ maxLength: 64 }) }),
          response: { 204: NoContent, 404: ApiErrorRef },
        },
        config: { access: { action: "settings:write" } },
      },
      async (request, reply) => {
        await preferences.unsuppress(principalOf(request).userId, request.params.suppressionId);
        return reply.status(204).send();
      },
    );
  };
}
