import { Type, type Static } from "@sinclair/typebox";
import { CatalogModel } from "./inference.js";
import { REPO_ID_PATTERN, REPO_TYPES, SPACE_SDKS } from "./repos.js";

/**
 * The tools of the hub's MCP server (`POST /mcp`, docs/discovery.md): each
 * tool's arguments (its `inputSchema`) and what it answers as structured content
 * (its `outputSchema`), as JSON Schema. The Model Context Protocol's tools:
 * https://modelcontextprotocol.io/specification/2025-06-18/server/tools
 */

const RepoType = Type.Union(
  REPO_TYPES.map((type) => Type.Literal(type)),
  { description: "The repository's kind: model (the default), dataset, space or mcp." },
);

/** Arguments of `search_models`, `search_datasets` and `search_spaces`. */
export const McpRepoSearchArgs = Type.Object(
  {
    query: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          "Words to search for in names and cards; the best matches come first unless sort is given.",
      }),
    ),
    author: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 40,
        description: "Only repositories of this user or organization (its handle).",
      }),
    ),
    filter: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
        maxItems: 10,
        description:
          "Tags every result must carry: a task (text-classification), a library (transformers), a language (en), license:mit, dataset:<id>, base_model:<id>, gguf, onnx, safetensors.",
      }),
    ),
    sort: Type.Optional(
      Type.String({
        pattern: "^[A-Za-z_]{1,32}$",
        description:
          "lastModified (the default without a query), createdAt, id (the name), likes, downloads, trending, num_parameters or mainSize; an order the hub does not offer is refused with the ones it does.",
      }),
    ),
    direction: Type.Optional(
      Type.Union([Type.Literal("desc"), Type.Literal("asc")], {
        description: "desc (the default; ascending for id) or asc.",
      }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, description: "How many to return (20 by default)." }),
    ),
    offset: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 10_000,
        description: "How many to skip: the next_offset of the previous answer.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type McpRepoSearchArgs = Static<typeof McpRepoSearchArgs>;

/** One repository found by a search tool. */
export const McpRepoHit = Type.Object({
  id: Type.String({ description: "`<owner>/<name>`." }),
  author: Type.String(),
  private: Type.Boolean(),
  gated: Type.Union([Type.Literal(false), Type.Literal("auto"), Type.Literal("manual")]),
  createdAt: Type.String({ format: "date-time" }),
  lastModified: Type.String({ format: "date-time" }),
  sdk: Type.Optional(Type.Union(SPACE_SDKS.map((sdk) => Type.Literal(sdk)))),
  likes: Type.Optional(Type.Integer({ minimum: 0 })),
  downloads: Type.Optional(Type.Integer({ minimum: 0, description: "Downloads in the last 30 days." })),
  pipeline_tag: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: "The task." })),
  library_name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  tags: Type.Optional(Type.Array(Type.String())),
  url: Type.String({ description: "The repository's page." }),
});
export type McpRepoHit = Static<typeof McpRepoHit>;

/** What a repository search answers. */
export const McpRepoSearchResult = Type.Object({
  type: RepoType,
  repositories: Type.Array(McpRepoHit),
  next_offset: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description: "The offset of the next page, or null when this was the last.",
  }),
});
export type McpRepoSearchResult = Static<typeof McpRepoSearchResult>;

/** Arguments of `search_papers`. */
export const McpPaperSearchArgs = Type.Object(
  {
    query: Type.String({
      minLength: 1,
      maxLength: 200,
      description: "Text the paper's arXiv id, title or authors hold.",
    }),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 50, description: "How many to return (10 by default)." }),
    ),
  },
  { additionalProperties: false },
);
export type McpPaperSearchArgs = Static<typeof McpPaperSearchArgs>;

/** What `search_papers` answers. */
export const McpPaperSearchResult = Type.Object({
  papers: Type.Array(
    Type.Object({
      id: Type.String({ description: "The arXiv identifier." }),
      title: Type.String(),
      authors: Type.Array(Type.String()),
      summary: Type.String({ description: "The abstract." }),
      publishedAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
      url: Type.String({ description: "The paper's page on arXiv." }),
    }),
  ),
});
export type McpPaperSearchResult = Static<typeof McpPaperSearchResult>;

const repoArgs = {
  repo_id: Type.String({
    pattern: REPO_ID_PATTERN,
    maxLength: 137,
    description: "The repository, `<owner>/<name>` in lower case.",
  }),
  repo_type: Type.Optional(RepoType),
};

/** Arguments of `read_repo_card`. */
export const McpReadCardArgs = Type.Object(
  {
    ...repoArgs,
    max_chars: Type.Optional(
      Type.Integer({
        minimum: 100,
        maximum: 100_000,
        description: "The most characters of the card to return (20,000 by default); the rest is cut.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type McpReadCardArgs = Static<typeof McpReadCardArgs>;

/** What `read_repo_card` answers. */
export const McpRepoCard = Type.Object({
  id: Type.String(),
  type: RepoType,
  url: Type.String({ description: "The repository's page." }),
  commit: Type.String({ description: "The commit of the default branch the card was read at." }),
  metadata: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
    description:
      "The card's YAML front matter (license, tags, base_model …), or null when it has none or it cannot be read.",
  }),
  metadata_problems: Type.Array(Type.String(), {
    description: "What is wrong with the front matter, as validate-yaml reports it; empty when nothing is.",
  }),
  text: Type.String({ description: "README.md, from its first character, up to max_chars." }),
  truncated: Type.Boolean({ description: "Whether the card goes on past max_chars." }),
});
export type McpRepoCard = Static<typeof McpRepoCard>;

/** Arguments of `list_repo_files`. */
export const McpListFilesArgs = Type.Object(
  {
    ...repoArgs,
    revision: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: "A branch, tag or commit (the default branch when left out).",
      }),
    ),
    path: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description: "Only files under this folder (e.g. `onnx`).",
      }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1000, description: "The most files to return (200 by default)." }),
    ),
  },
  { additionalProperties: false },
);
export type McpListFilesArgs = Static<typeof McpListFilesArgs>;

/** What `list_repo_files` answers. */
export const McpRepoFiles = Type.Object({
  id: Type.String(),
  type: RepoType,
  commit: Type.Union([Type.String(), Type.Null()], {
    description: "The commit listed, or null when the repository has no commit yet.",
  }),
  files: Type.Array(
    Type.Object({
      path: Type.String(),
      size: Type.Integer({ minimum: 0, description: "Bytes (of the LFS object for an LFS file)." }),
      lfs: Type.Boolean({ description: "Whether the file is stored with Git LFS." }),
    }),
  ),
  total: Type.Integer({ minimum: 0, description: "How many files match, listed or not." }),
  truncated: Type.Boolean({ description: "Whether more files match than were listed." }),
});
export type McpRepoFiles = Static<typeof McpRepoFiles>;

/** Arguments of `list_router_models`. */
export const McpRouterModelsArgs = Type.Object(
  {
    query: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: "Text the model's id must hold." }),
    ),
    task: Type.Optional(
      Type.Union([Type.Literal("chat"), Type.Literal("responses"), Type.Literal("embeddings")], {
        description: "Only models a provider serves for this task.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type McpRouterModelsArgs = Static<typeof McpRouterModelsArgs>;

/** What `list_router_models` answers. */
export const McpRouterModels = Type.Object({
  inference_url: Type.String({
    description: "The Router's base URL; OpenAI clients use it + `/v1` with a hub token.",
  }),
  models: Type.Array(CatalogModel),
});
export type McpRouterModels = Static<typeof McpRouterModels>;
