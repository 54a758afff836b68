import {
  CONTENT_FILTERS,
  SUPPRESSION_KINDS,
  type ContentPreferences,
  type RecommendationSuppression,
  type RecommendationSuppressionList,
} from "@hub/api";
import { call } from "$lib/server/api";
import { refused } from "$lib/server/refused";
import type { Actions, PageServerLoad } from "./$types";

const words = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((word) => word.trim())
    .filter(Boolean);

/**
 * The viewer's content preferences (`GET /api/me/content-preferences`): hidden tags, languages, content
 * filters and the interests learned from downloads; and what they asked not to be recommended.
 */
export const load: PageServerLoad = async ({ fetch }) => {
  const [preferences, suppressions] = await Promise.all([
    call<ContentPreferences>(fetch, "/api/me/content-preferences"),
    call<RecommendationSuppressionList>(fetch, "/api/me/recommendation-suppressions"),
  ]);
  return {
    preferences: preferences.data,
    suppressions: suppressions.data.suppressions,
    filters: [...CONTENT_FILTERS],
    kinds: [...SUPPRESSION_KINDS],
  };
};

export const actions: Actions = {
  /** Replaces the explicit preferences (`PUT /api/me/content-preferences`); learned interests stay. */
  save: async ({ request, fetch }) => {
    const form = await request.formData();
    const hiddenTags = String(form.get("hiddenTags") ?? "");
    const languages = String(form.get("languages") ?? "");
    const contentFilters = form.getAll("contentFilters").map(String);
    const values = { hiddenTags, languages, contentFilters };
    try {
      await call<ContentPreferences>(fetch, "/api/me/content-preferences", {
        method: "PUT",
        body: JSON.stringify({ hiddenTags: words(hiddenTags), languages: words(languages), contentFilters }),
      });
      return { saved: true as const };
    } catch (err) {
      return refused(err, values);
    }
  },

  /** Forgets the interests learned from downloads (`DELETE /api/me/content-preferences/learned-interests`). */
  forget: async ({ fetch }) => {
    try {
      await call(fetch, "/api/me/content-preferences/learned-interests", { method: "DELETE" });
      return { forgotten: true as const };
    } catch (err) {
      return refused(err);
    }
  },

  /** Asks not to be recommended a repository, an author or a tag (`POST /api/me/recommendation-suppressions`). */
  suppress: async ({ request, fetch }) => {
    const form = await request.formData();
    const kind = String(form.get("kind") ?? "");
    const value = String(form.get("value") ?? "").trim();
    const repoType = String(form.get("repoType") ?? "model");
    try {
      const { data } = await call<RecommendationSuppression>(fetch, "/api/me/recommendation-suppressions", {
        method: "POST",
        body: JSON.stringify({ kind, value, ...(kind === "repository" ? { repoType } : {}) }),
      });
      return { suppressed: data.value };
    } catch (err) {
      return refused(err, { kind, value, repoType });
    }
  },

  /** Allows recommending it again (`DELETE /api/me/recommendation-suppressions/{id}`). */
  unsuppress: async ({ request, fetch }) => {
    const form = await request.formData();
    const id = String(form.get("suppression_id") ?? "");
    try {
      await call(fetch, `/api/me/recommendation-suppressions/${encodeURIComponent(id)}`, {
        method: "DELETE",
      });
      return { unsuppressed: String(form.get("value") ?? "it") };
    } catch (err) {
      return refused(err);
    }
  },
};
