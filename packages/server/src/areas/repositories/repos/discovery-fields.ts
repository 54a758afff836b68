import { SPACE_SDKS, type RepoType } from "@hub/api";
import type { DbOrTx } from "../../../db/database.js";
import type { FoundRepo } from "../../../domain/repositories.js";
import { metadataRepository } from "../metadata/metadata.repository.js";

/**
 * The fields of a repository's info and listing entries that discovery
 * indexes (docs/discovery.md): what its card and files say, and its counts.
 * Fields the hub has nothing for (it runs no Spaces, scans nothing, serves no
 * widgets) are given as the Hugging Face Hub gives them when empty.
 */

/** Fields a listing entry carries when `expand` does not name any, beside the base ones. */
export const LISTING_FIELDS: Record<RepoType, readonly string[]> = {
  model: ["likes", "downloads", "trendingScore", "tags", "pipeline_tag", "library_name"],
  dataset: ["likes", "downloads", "trendingScore", "tags"],
  space: ["likes", "trendingScore", "tags", "sdk"],
  mcp: ["likes", "trendingScore", "tags"],
};

/** Fields a repository's info carries when `expand` does not name any, beside the base ones. */
export const INFO_FIELDS: Record<RepoType, readonly string[]> = {
  model: [
    ...LISTING_FIELDS.model,
    "downloadsAllTime",
    "cardData",
    "config",
    "safetensors",
    "gguf",
    "model-index",
    "baseModels",
    "disabled",
    "cardProblems",
  ],
  dataset: [
    ...LISTING_FIELDS.dataset,
    "downloadsAllTime",
    "cardData",
    "disabled",
    "citation",
    "paperswithcode_id",
    "cardProblems",
  ],
  space: [...LISTING_FIELDS.space, "cardData", "models", "datasets", "disabled", "runtime", "cardProblems"],
  mcp: [...LISTING_FIELDS.mcp, "cardData", "disabled", "cardProblems"],
};

/** Every field this module computes (the rest come from the repository's row, its git data or its storage). */
const COMPUTED = new Set([
  "cardProblems",
  "sdk",
  "likes",
  "downloads",
  "downloadsAllTime",
  "trendingScore",
  "tags",
  "pipeline_tag",
  "library_name",
  "cardData",
  "config",
  "safetensors",
  "gguf",
  "model-index",
  "baseModels",
  "childrenModelCount",
  "spaces",
  "widgetData",
  "transformersInfo",
  "mask_token",
  "inference",
  "inferenceProviderMapping",
  "evalResults",
  "resourceGroup",
  "disabled",
  "citation",
  "description",
  "paperswithcode_id",
  "mainSize",
  "models",
  "datasets",
  "runtime",
  "region",
  "subdomain",
]);

/** Fields read from the counts, the tags and the base models; the other computed ones need the metadata row. */
const STATS_FIELDS = new Set(["likes", "downloads", "downloadsAllTime", "trendingScore"]);
/** Computed fields that read no table. */
const CONSTANT_FIELDS = new Set([
  "childrenModelCount",
  "spaces",
  "disabled",
  "inferenceProviderMapping",
  "transformersInfo",
  "mask_token",
  "inference",
  "evalResults",
  "resourceGroup",
  "runtime",
  "region",
  "subdomain",
]);

type Json = Record<string, unknown>;

const parse = (text: string | null): Json | null => (text === null ? null : (JSON.parse(text) as Json));
const list = (value: unknown): string[] =>
  (Array.isArray(value) ? value : value === undefined || value === null ? [] : [value]).filter(
    (item): item is string => typeof item === "string",
  );

/** The computed fields among `wanted` of each repository, by repository id. */
export async function discoveryFields(
  db: DbOrTx,
  repos: FoundRepo[],
  wanted: readonly string[],
  /** The Spaces that name a model in their card, when `spaces` is wanted (the listing's rules apply). */
  spacesUsing?: (repo: FoundRepo) => Promise<string[]>,
): Promise<Map<string, Json>> {
  const fields = wanted.filter((field) => COMPUTED.has(field));
  const result = new Map<string, Json>(repos.map((repo) => [repo.row.id, {}]));
  if (fields.length === 0) return result;
  const { metadata, tags, stats, baseModels } = await metadataRepository.ofRepositories(
    db,
    repos.map((repo) => repo.row.id),
    {
      metadata: fields.some(
        (field) => !STATS_FIELDS.has(field) && !CONSTANT_FIELDS.has(field) && field !== "tags",
      ),
      tags: fields.includes("tags"),
      stats: fields.some((field) => STATS_FIELDS.has(field)),
      baseModels: fields.includes("baseModels"),
    },
  );
  const childrenOf = fields.includes("childrenModelCount")
    ? await metadataRepository.childrenCounts(
        db,
        repos.map((repo) => repo.fullName),
      )
    : new Map<string, number>();
  const metadataOf = new Map(metadata.map((row) => [row.repository_id, row]));
  const statsOf = new Map(stats.map((row) => [row.repository_id, row]));
  const tagsOf = new Map<string, string[]>();
  for (const row of tags) tagsOf.set(row.repository_id, [...(tagsOf.get(row.repository_id) ?? []), row.tag]);
  const basesOf = new Map<string, typeof baseModels>();
  for (const row of baseModels)
    basesOf.set(row.repository_id, [...(basesOf.get(row.repository_id) ?? []), row]);

  for (const repo of repos) {
    const id = repo.row.id;
    const meta = metadataOf.get(id);
    const count = statsOf.get(id);
    const card = parse(meta?.card_data ?? null);
    const out = result.get(id) as Json;
    for (const field of fields) {
      switch (field) {
        case "likes":
          out.likes = count?.likes ?? 0;
          break;
        case "downloads":
          out.downloads = count?.downloads ?? 0;
          break;
        case "downloadsAllTime":
          out.downloadsAllTime = Number(count?.downloads_all_time ?? 0);
          break;
        case "trendingScore":
          out.trendingScore = Math.round(count?.trending_score ?? 0);
          break;
        case "tags":
          out.tags = (tagsOf.get(id) ?? []).sort();
          break;
        case "pipeline_tag":
          out.pipeline_tag = meta?.pipeline_tag ?? null;
          break;
        case "library_name":
          out.library_name = meta?.library_name ?? null;
          break;
        case "cardData":
          out.cardData = card;
          break;
        case "config":
          out.config = parse(meta?.config ?? null);
          break;
        case "safetensors":
          out.safetensors = parse(meta?.safetensors ?? null);
          break;
        case "gguf":
          out.gguf = meta?.gguf ? (parse(meta.gguf_facts ?? null) ?? { total: null }) : null;
          break;
        case "model-index":
          out["model-index"] = Array.isArray(card?.["model-index"]) ? card["model-index"] : null;
          break;
        case "baseModels": {
          const bases = basesOf.get(id) ?? [];
          out.baseModels =
            bases.length === 0
              ? null
              : {
                  relation: bases[0]?.relation,
                  models: list(card?.base_model).map((model) => ({ id: model })),
                };
          break;
        }
        case "childrenModelCount":
          out.childrenModelCount = childrenOf.get(repo.fullName.toLowerCase()) ?? 0;
          break;
        case "spaces":
          out.spaces = spacesUsing ? await spacesUsing(repo) : [];
          break;
        case "widgetData":
          out.widgetData = Array.isArray(card?.widget) ? card.widget : null;
          break;
        case "sdk": {
          // A Space's SDK as it was created, else as its card names it (where the Hugging Face Hub reads it).
          const sdk = repo.row.space_sdk ?? (typeof card?.sdk === "string" ? card.sdk : null);
          if (repo.type === "space" && sdk && (SPACE_SDKS as readonly string[]).includes(sdk)) out.sdk = sdk;
          break;
        }
        case "cardProblems":
          out.cardProblems = meta?.card_error ? meta.card_error.split("\n") : [];
          break;
        case "disabled":
          out.disabled = false;
          break;
        case "citation":
          out.citation = typeof card?.citation === "string" ? card.citation : null;
          break;
        case "paperswithcode_id":
          out.paperswithcode_id = typeof card?.paperswithcode_id === "string" ? card.paperswithcode_id : null;
          break;
        case "description":
          out.description = typeof card?.pretty_name === "string" ? card.pretty_name : null;
          break;
        case "mainSize":
          out.mainSize = Number(meta?.total_size ?? 0);
          break;
        case "models":
          out.models = list(card?.models);
          break;
        case "datasets":
          out.datasets = list(card?.datasets);
          break;
        case "inferenceProviderMapping":
          out.inferenceProviderMapping = [];
          break;
        default:
          // transformersInfo, mask_token, inference, evalResults, resourceGroup, runtime, region, subdomain:
          // the hub keeps nothing of the kind.
          out[field] = null;
      }
    }
  }
  return result;
}
