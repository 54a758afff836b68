import { badRequest } from "../../../errors.js";

/**
 * What the repository listings make of the query the official clients send
 * (`huggingface_hub`'s list_models/list_datasets/list_spaces,
 * `@huggingface/hub`'s listModels/listDatasets/listSpaces): every parameter is
 * honoured or refused by name, never ignored, so a script that asks for
 * "every model tagged X" never acts on every model.
 */

/** Parameters the clients send that the hub cannot honour yet, and what they ask for. */
const NOT_YET: Record<string, string> = {
  filter: "filtering by tag, library, language, task or dataset",
  pipeline_tag: "filtering by task (pipeline_tag)",
  num_parameters: "filtering by parameter count",
  apps: "filtering by supported apps",
  inference: "filtering by inference availability",
  inference_provider: "filtering by inference provider",
  linked: "listing only Spaces linked to models or datasets",
  models: "filtering Spaces by the models they use",
  datasets: "filtering Spaces by the datasets they use",
  full: "full information (files, card, config) for every listed repository",
  cardData: "card metadata for every listed repository",
  config: "the config of every listed repository",
};

/** Sort keys and the column each orders by. */
const SORTS = { lastModified: "updated_at", createdAt: "created_at", id: "full_name" } as const;

/** Fields a listing entry carries, so asking for them is honoured. */
const EXPAND_SERVED = new Set(["author", "createdAt", "lastModified", "private", "gated", "sdk"]);
/**
 * Fields `@huggingface/hub` asks for on every listing by itself; the hub does
 * not track them yet, so they are left out of the answer, not refused.
 */
const EXPAND_LEFT_OUT = new Set(["pipeline_tag", "downloads", "likes"]);

const KNOWN = new Set([
  "search",
  "author",
  "sort",
  "direction",
  "limit",
  "cursor",
  "gated",
  "expand",
  "expand[]",
]);

export interface ListingQuery {
  search?: string;
  author?: string;
  sort: (typeof SORTS)[keyof typeof SORTS];
  descending: boolean;
  gated?: boolean;
}

const values = (value: unknown): string[] =>
  value === undefined ? [] : (Array.isArray(value) ? value : [value]).map(String);

/** Refuses, naming it, an `expand` field (`expand` or `expand[]`) neither served nor left out on purpose. */
function checkExpand(query: Record<string, unknown>, served: Set<string>): void {
  for (const field of [...values(query.expand), ...values(query["expand[]"])]) {
    if (!served.has(field) && !EXPAND_LEFT_OUT.has(field)) {
      throw badRequest(
        "unsupported_parameter",
        `expand: "${field}" is not available from this hub; ask for ${[...served].join(", ")}.`,
        "expand",
      );
    }
  }
}

/** One value of a parameter; a repeated one is refused rather than half read. */
function single(query: Record<string, unknown>, name: string): string | undefined {
  const given = values(query[name]);
  if (given.length > 1)
    throw badRequest("unsupported_parameter", `Send ${name} once; it was sent ${given.length} times.`, name);
  return given[0];
}

/** Reads a listing's query, refusing with a 400 that names it any parameter or value the hub does not honour. */
export function listingQuery(query: Record<string, unknown>): ListingQuery {
  for (const name of Object.keys(query)) {
    const notYet = NOT_YET[name];
    if (notYet) {
      throw badRequest(
        "unsupported_parameter",
        `${name}: ${notYet} is not supported by this hub yet, so the listing is refused rather than returned unfiltered.`,
        name,
      );
    }
    if (!KNOWN.has(name)) {
      throw badRequest(
        "unsupported_parameter",
        `"${name}" is not a parameter of this listing; use search, author, gated, sort, direction, limit, cursor or expand.`,
        name,
      );
    }
  }
  checkExpand(query, EXPAND_SERVED);
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
  return {
    search: single(query, "search"),
    author: single(query, "author"),
    sort,
    descending: direction ? direction === "-1" : sort !== "full_name",
    ...(gated === undefined ? {} : { gated: /^(true|1)$/i.test(gated) }),
  };
}

/** Fields a repository's info carries, so `expand` asking for them is honoured. */
const INFO_EXPAND_SERVED = new Set([
  "author",
  "sha",
  "private",
  "gated",
  "createdAt",
  "lastModified",
  "siblings",
  "sdk",
  "xetEnabled",
  // Only when asked for: counting it reads the repository's storage.
  "usedStorage",
]);

/**
 * Reads the query of a repository's info: `blobs` and `expand`, refusing what it cannot honour by name.
 * `expand` is the fields asked for (the answer holds only those, with `_id` and `id`, as the Hugging Face
 * Hub answers), or null when the whole record is wanted.
 */
export function infoQuery(query: Record<string, unknown>): { blobs: boolean; expand: string[] | null } {
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
  checkExpand(query, INFO_EXPAND_SERVED);
  const blobs = single(query, "blobs");
  if (blobs !== undefined && !/^(true|false|1|0)$/i.test(blobs)) {
    throw badRequest("unsupported_parameter", "blobs must be true or false.", "blobs");
  }
  const expand = [...values(query.expand), ...values(query["expand[]"])];
  return {
    blobs: blobs !== undefined && /^(true|1)$/i.test(blobs),
    expand: expand.length > 0 ? expand.filter((field) => INFO_EXPAND_SERVED.has(field)) : null,
  };
}
