import type { Recommendation } from "@hub/api";
import { ApiFailure, call } from "$lib/server/api";
import { listing } from "$lib/server/listing";
import type { PageServerLoad } from "./$types";

/**
 * The home page: trending models, datasets and Spaces (`sort=trendingScore`), and for a signed-in account the
 * models and datasets recommended to it (`GET /api/me/recommendations`), shaped by its content preferences.
 */
export const load: PageServerLoad = async (event) => {
  const trending = new URL(event.url);
  trending.search = "?sort=trending";
  const scoped = { fetch: event.fetch, url: trending };
  const [models, datasets, spaces, recommendedModels, recommendedDatasets] = await Promise.all([
    listing(scoped, "model", 8, { personalized: true }),
    listing(scoped, "dataset", 8, { personalized: true }),
    listing(scoped, "space", 8, { personalized: true }),
    event.locals.viewer ? recommended(event.fetch, "model") : Promise.resolve(null),
    event.locals.viewer ? recommended(event.fetch, "dataset") : Promise.resolve(null),
  ]);
  return { models, datasets, spaces, recommendedModels, recommendedDatasets };
};

/** Recommendations of a kind; none when the API will not give them (a viewer limited by a policy, say). */
async function recommended(fetch: typeof globalThis.fetch, type: "model" | "dataset") {
  try {
    return (await call<Recommendation[]>(fetch, `/api/me/recommendations?type=${type}&limit=6`)).data;
  } catch (err) {
    if (err instanceof ApiFailure && err.status < 500) return null;
    throw err;
  }
}
