import type { CatalogModel, CatalogModelList } from "@hub/api";
import type { Catalog } from "./candidates.js";
import type { LiveMapping, LiveView } from "./live-stats.js";

const round = (value: number | null) => (value === null ? null : Math.round(value * 10) / 10);

/**
 * The model catalog as OpenAI's model list, each model with its providers'
 * prices, live status and measured speed (the fields Hugging Face's router
 * publishes). `onlyProvider` narrows it to one provider's models.
 */
/** Every mapping of the catalog, as the live figures name them (what a listing reads). */
export function catalogMappings(catalog: Catalog): LiveMapping[] {
  return catalog
    .models()
    .flatMap((id) => catalog.mappings(id).map((c) => ({ provider: c.provider.slug, model: c.mapping.id })));
}

export function listCatalog(
  catalog: Catalog,
  stats: LiveView,
  startedAt: number,
  onlyProvider?: string,
): CatalogModelList {
  const data: CatalogModel[] = [];
  for (const id of catalog.models()) {
    const providers = catalog
      .mappings(id)
      .filter((c) => onlyProvider === undefined || c.provider.slug === onlyProvider)
      .map(({ provider, mapping }) => {
        const measured = stats.stats(provider.slug, mapping.id);
        return {
          provider: provider.slug,
          task: mapping.task,
          status: stats.isCooling(provider.slug) ? ("cooling_down" as const) : ("live" as const),
          pricing: mapping.pricing,
          context_length: mapping.contextLength ?? null,
          first_token_latency_ms: round(measured.ttftMs),
          throughput: round(measured.tokensPerSecond),
        };
      });
    if (providers.length === 0) continue;
    data.push({
      id,
      object: "model",
      created: Math.floor(startedAt / 1000),
      owned_by: id.split("/")[0] ?? id,
      providers,
    });
  }
  return { object: "list", data };
}
