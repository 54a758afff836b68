import type { CatalogModel } from "@hub/api";
import { ApiFailure, call } from "$lib/server/api";
import { encodePath } from "$lib/repos";

type Fetch = Parameters<typeof call>[0];

/** The Router's entry for a model (its providers, prices, live status), or null when the Router serves it not. */
export async function servedModel(fetch: Fetch, id: string): Promise<CatalogModel | null> {
  try {
    return (await call<CatalogModel>(fetch, `/api/inference/models/${encodePath(id)}`)).data;
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 404) return null;
    throw err;
  }
}
