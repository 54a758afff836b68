import type { RepoType } from "@hub/api";
import { badRequest } from "../../../errors.js";

/**
 * What the repository listings and info make of the query the official
 * clients send (`huggingface_hub`'s list_models/list_datasets/list_spaces and
 * model_info, `@huggingface/hub`'s listModels/modelInfo): every parameter is
 * honoured or refused by name, never ignored, so a script that asks for
 * "every model tagged X" never acts on every model.
 */

/** Parameters the clients send that the hub cannot honour, and what they ask for. */
const NOT_SERVED: Record<string, string> = {
  apps: "filtering by supported apps",
  inference: "filtering by inference availability",
  inference_provider: "filtering by inference provider",
  linked: "listing only Spaces linked to models or datasets",
  emissions_thresholds: "filtering by training emissions",
};

/** Sort keys the clients send, and what each orders by. */
const SORTS = {
  lastModified: "updated_at",
  createdAt: "created_at",
  id: "full_name",
  likes: "likes",
  downloads: "downloads",
  trendingScore: "trending_score",
  trending: "trending_score",
  num_parameters: "num_parameters",
  mainSize: "total_size",
} as const;
export type SortKey = (typeof SORTS)[keyof typeof SORTS];

/**
 * Every `expand` value the Hugging Face Hub accepts, per kind (huggingface_hub's
 * `ExpandModelProperty_T` and its siblings); each is served, some always empty
 * where the hub has nothing of the kind (docs/discovery.md says which).
 */
export const EXPAND_FIELDS: Record<RepoType, readonly string[]> = {
  model: [
    "author",
    "baseModels",
    "cardData",
    "childrenModelCount",
    "config",
    "createdAt",
    "disabled",
    "downloads",
    "downloadsAllTime",
    "evalResults",
    "gated",
    "gguf",
    "inference",
    "inferenceProviderMapping",
    "lastModified",
    "library_name",
    "likes",
    "mask_token",
    "model-index",
    "pipeline_tag",
    "private",
    "resourceGroup",
    "safetensors",
    "sha",
    "siblings",
    "spaces",
    "tags",
    "transformersInfo",
    "trendingScore",
    "usedStorage",
    "widgetData",
    "xetEnabled",
    "cardProblems",
  ],
  dataset: [
    "author",
    "cardData",
    "citation",
    "createdAt",
    "description",
    "disabled",
    "downloads",
    "downloadsAllTime",
    "gated",
    "lastModified",
    "likes",
    "mainSize",
    "paperswithcode_id",
    "private",
    "resourceGroup",
    "sha",
    "siblings",
    "tags",
    "trendingScore",
    "usedStorage",
    "xetEnabled",
    "cardProblems",
  ],
  space: [
    "author",
    "cardData",
    "createdAt",
    "datasets",
    "disabled",
    "gated",
    "lastModified",
    "likes",
    "models",
    "private",
    "region",
    "resourceGroup",
    "runtime",
    "sdk",
    "sha",
    "siblings",
    "subdomain",
    "tags",
    "trendingScore",
    "usedStorage",
    "xetEnabled",
    "cardProblems",
  ],
  mcp: [
    "author",
    "cardData",
    "createdAt",
    "lastModified",
    "likes",
    "private",
    "gated",
    "sha",
    "siblings",
    "tags",
    "trendingScore",
    "usedStorage",
    "xetEnabled",
    "cardProblems",
  ],
};

/**
 * Tag shortcuts: a parameter naming one value of a kind of tag, and the tag it
 * filters on (as `filter` would). `pipeline_tag` and `library` are plain tags.
 */
const TAG_SHORTCUTS: Record<string, (value: string) => string> = {
  pipeline_tag: (value) => value,
  task: (value) => value,
  library: (value) => value,
  language: (value) => value,
  license: (value) => (value.startsWith("license:") ? value : `license:${value}`),
  dataset: (value) => (value.startsWith("dataset:") ? value : `dataset:${value}`),
  trained_dataset: (value) => (value.startsWith("dataset:") ? value : `dataset:${value}`),
  datasets: (value) => (value.startsWith("dataset:") ? value : `dataset:${value}`),
  models: (value) => (value.startsWith("model:") ? value : `model:${value}`),
  base_model: (value) => (value.startsWith("base_model:") ? value : `base_model:${value}`),
  tags: (value) => value,
};

const KNOWN = new Set([
  "search",
  "author",
  "filter",
  "sort",
  "direction",
  "limit",
  "cursor",
  "gated",
  "num_parameters",
  "full",
  "cardData",
  "config",
  "personalized",
  "expand",
  "expand[]",
  ...Object.keys(TAG_SHORTCUTS),
]);

export interface ListingQuery {
  search?: string;
  author?: string;
  /** Tags a repository must all carry. */
  tags: string[];
  /** Bounds on the parameter count (safetensors), inclusive. */
  parameters?: { min?: number; max?: number };
  gated?: boolean;
  sort: SortKey;
  /** Whether `sort` was asked for; a search without one ranks by relevance. */
  sorted: boolean;
  descending: boolean;
  /** The fields asked for with `expand`; null for the listing's usual fields. */
  expand: string[] | null;
  full: boolean;
  cardData: boolean;
  config: boolean;
  /** Leave out what the signed-in caller's content preferences hide and its recommendation suppressions name. */
  personalized: boolean;
}

const values = (value: unknown): string[] =>
  value === undefined ? [] : (Array.isArray(value) ? value : [value]).map(String);

/** Every field some kind of repository has. */
const ANY_KIND = new Set(Object.values(EXPAND_FIELDS).flat());

/**
 * The `expand` fields asked for (`expand` or `expand[]`), refusing by name one no kind of repository has; a
 * field of another kind (`pipeline_tag` of a dataset, as `@huggingface/hub` asks) is left out of the answer.
 */
function expandOf(query: Record<string, unknown>, type: RepoType): string[] | null {
  const asked = [...values(query.expand), ...values(query["expand[]"])];
  const allowed = EXPAND_FIELDS[type];
  for (const field of asked) {
    if (!ANY_KIND.has(field)) {
      throw badRequest(
        "unsupported_parameter",
        `expand: "${field}" is not a field of a ${type} repository; ask for ${allowed.join(", ")}.`,
        "expand",
      );
    }
  }
  return asked.length > 0 ? [...new Set(asked)].filter((field) => allowed.includes(field)) : null;
}

/** One value of a parameter; a repeated one is refused rather than half read. */
function single(query: Record<string, unknown>, name: string): string | undefined {
  const given = values(query[name]);
  if (given.length > 1)
    throw badRequest("unsupported_parameter", `Send ${name} once; it was sent ${given.length} times.`, name);
  return given[0];
}

/** A boolean flag (`true`/`false`/`1`/`0`, any case); absent is false. */
function flag(query: Record<string, unknown>, name: string): boolean {
  const value = single(query, name);
  if (value === undefined) return false;
  if (!/^(true|false|1|0)$/i.test(value)) {
    throw badRequest("unsupported_parameter", `${name} must be true or false.`, name);
  }
  return /^(true|1)$/i.test(value);
}

const SCALE: Record<string, number> = { "": 1, k: 1e3, m: 1e6, b: 1e9, t: 1e12 };

/** A parameter count as people write it: `7B`, `350M`, `1.5b`, `1000`. */
function count(text: string): number | null {
  const match = /^(\d+(?:\.\d+)?)\s*([kmbt]?)$/i.exec(text.trim());
  return match ? Math.round(Number(match[1]) * (SCALE[(match[2] ?? "").toLowerCase()] ?? 1)) : null;
}

/** `num_parameters` as the client sends it: `min:1B`, `max:10B`, `min:1B,max:10B`. */
function parametersOf(text: string): { min?: number; max?: number } {
  const bounds: { min?: number; max?: number } = {};
  for (const part of text.split(",")) {
    const [key, value = ""] = part.split(":");
    const amount = count(value);
    if ((key !== "min" && key !== "max") || amount === null) {
      throw badRequest(
        "unsupported_parameter",
        `num_parameters must be min:<count>, max:<count> or both (for example min:1B,max:10B); "${part}" is not.`,
        "num_parameters",
      );
    }
    bounds[key] = amount;
  }
  return bounds;
}

/** Reads a listing's query, refusing with a 400 that names it any parameter or value the hub does not honour. */
export function listingQuery(query: Record<string, unknown>, type: RepoType): ListingQuery {
  for (const name of Object.keys(query)) {
    const notServed = NOT_SERVED[name];
    if (notServed) {
      throw badRequest(
        "unsupported_parameter",
        `${name}: ${notServed} is not supported by this hub, so the listing is refused rather than returned unfiltered.`,
        name,
      );
    }
    if (!KNOWN.has(name)) {
      throw badRequest(
        "unsupported_parameter",
        `"${name}" is not a parameter of this listing; use search, author, filter, ${Object.keys(TAG_SHORTCUTS).join(", ")}, num_parameters, gated, sort, direction, limit, cursor, full, cardData, config, personalized or expand.`,
        name,
      );
    }
  }
  const tags = values(query.filter).flatMap((value) => value.split(",").map((tag) => tag.trim()));
  for (const [name, toTag] of Object.entries(TAG_SHORTCUTS)) {
    for (const value of values(query[name])) tags.push(toTag(value.trim()));
  }
  for (const tag of tags) {
    if (tag === "" || tag.length > 200) {
      throw badRequest("unsupported_parameter", "Each filter is a tag of 1 to 200 characters.", "filter");
    }
  }
  const sortName = single(query, "sort");
  const sort = sortName === undefined ? "updated_at" : SORTS[sortName as keyof typeof SORTS];
  if (!sort) {
    throw badRequest(
      "unsupported_parameter",
      `sort: "${sortName}" is not available from this hub; sort by ${Object.keys(SORTS).join(", ")}.`,
      "sort",
    );
  }
  const direction = single(query, "direction");
  if (direction !== undefined && direction !== "-1" && direction !== "1") {
    throw badRequest(
      "unsupported_parameter",
      "direction must be -1 (descending) or 1 (ascending).",
      "direction",
    );
  }
  const gated = single(query, "gated");
  if (gated !== undefined && !/^(true|false|1|0)$/i.test(gated)) {
    throw badRequest("unsupported_parameter", "gated must be true or false.", "gated");
  }
  const numParameters = single(query, "num_parameters");
  const search = single(query, "search")?.trim();
  return {
    ...(search ? { search } : {}),
    author: single(query, "author"),
    tags: [...new Set(tags)].slice(0, 20),
    ...(numParameters === undefined ? {} : { parameters: parametersOf(numParameters) }),
    sort,
    sorted: sortName !== undefined,
    descending: direction ? direction === "-1" : sort !== "full_name",
    ...(gated === undefined ? {} : { gated: /^(true|1)$/i.test(gated) }),
    expand: expandOf(query, type),
    full: flag(query, "full"),
    cardData: flag(query, "cardData"),
    config: flag(query, "config"),
    personalized: flag(query, "personalized"),
  };
}

/**
 * Reads the query of a repository's info: `blobs` and `expand`, refusing what it cannot honour by name.
 * `expand` is the fields asked for (the answer holds only those, with `_id` and `id`, as the Hugging Face
 * Hub answers), or null when the whole record is wanted.
 */
export function infoQuery(
  query: Record<string, unknown>,
  type: RepoType,
): { blobs: boolean; expand: string[] | null } {
  for (const name of Object.keys(query)) {
    if (name === "securityStatus") {
      throw badRequest(
        "unsupported_parameter",
        "securityStatus: this hub does not scan files, so it has no security status to report.",
        name,
      );
    }
    if (!["blobs", "expand", "expand[]"].includes(name)) {
      throw badRequest(
        "unsupported_parameter",
        `"${name}" is not a parameter of a repository's info; use blobs or expand.`,
        name,
      );
    }
  }
  return { blobs: flag(query, "blobs"), expand: expandOf(query, type) };
}
