import {
  McpListFilesArgs,
  McpPaperSearchArgs,
  McpPaperSearchResult,
  McpReadCardArgs,
  McpRepoCard,
  McpRepoFiles,
  McpRepoSearchArgs,
  McpRepoSearchResult,
  McpRouterModels,
  McpRouterModelsArgs,
  type RepoListItem as ApiRepoListItem,
  type RepoType,
} from "@hub/api";
import type { Static, TObject } from "@sinclair/typebox";
import type { Action } from "../../../auth/authorize.js";
import type { Authorize } from "../../../auth/authorizer.js";
import type { Principal } from "../../../auth/credential.js";
import { repoResource, type FoundRepo } from "../../../domain/repositories.js";
import { HubError, notFound } from "../../../errors.js";
import { catalogMappings, listCatalog } from "../../../router/catalog-listing.js";
import type { Catalog } from "../../../router/candidates.js";
import type { LiveStats } from "../../../router/live-stats.js";
import type { PapersService } from "../../community/papers/papers.service.js";
import type { FilesService } from "../../repositories/files/files.service.js";
import { readCard } from "../../repositories/metadata/card-metadata.js";
import { listingQuery } from "../../repositories/repos/listing-query.js";
import type { ReposService } from "../../repositories/repos/repos.service.js";

/** What a tool answers: text an assistant reads, and the same as structured content for programs. */
export interface McpToolAnswer {
  text: string;
  structured: Record<string, unknown>;
}

/** One tool of the hub's MCP server: its name, what it is for, its JSON schemas, and what it does as the caller. */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: TObject;
  outputSchema: TObject;
  /** Runs with arguments that passed `inputSchema`; throws HubError for what the caller should be told. */
  run(caller: Principal | null, args: Record<string, unknown>): Promise<McpToolAnswer>;
}

/** Defines a tool whose `run` sees its arguments and answer typed by its schemas. */
function tool<I extends TObject, O extends TObject>(definition: {
  name: string;
  title: string;
  description: string;
  inputSchema: I;
  outputSchema: O;
  run(caller: Principal | null, args: Static<I>): Promise<{ text: string; structured: Static<O> }>;
}): McpTool {
  return {
    ...definition,
    // The server checked the arguments against inputSchema before calling.
    run: (caller, args) => definition.run(caller, args as Static<I>),
  };
}

export interface McpToolsDeps {
  repos: ReposService;
  files: FilesService;
  papers: PapersService;
  authorize: Authorize;
  catalog: Catalog;
  stats: LiveStats;
  startedAt: number;
  routerPublicUrl: string;
}

const PLURAL: Record<RepoType, string> = {
  model: "models",
  dataset: "datasets",
  space: "spaces",
  mcp: "MCPs",
};
const DEFAULT_CARD_CHARS = 20_000;

/** `12.3 MB`: sizes as a person reads them. */
function humanSize(bytes: number): string {
  const units = ["B", "kB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/**
 * The tools of the hub's MCP server. Each acts as its caller through the
 * services the API routes use: listings apply `decide()` to every repository
 * they show, and a named repository is found and authorized as its API route
 * would (`repo:read` for its files, `repo:download` for its card, so gating
 * applies to the card as to the file).
 */
export function createMcpTools(deps: McpToolsDeps): McpTool[] {
  const { repos, files, papers, authorize } = deps;

  /** The repository the arguments name, when the caller may act on it; otherwise the API's own refusal. */
  async function repository(
    caller: Principal | null,
    args: { repo_id: string; repo_type?: RepoType },
    action: Action,
  ): Promise<FoundRepo> {
    const [owner = "", name = ""] = args.repo_id.split("/");
    const repo = await repos.findOrHide(caller, args.repo_type ?? "model", owner, name);
    await authorize(caller, action, repoResource(repo));
    return repo;
  }

  function searchTool(type: Exclude<RepoType, "mcp">, example: string): McpTool {
    const plural = PLURAL[type];
    return tool({
      name: `search_${plural}`,
      title: `Search ${plural}`,
      description: `Find ${plural} on this hub by words in their names and cards, author and tags (e.g. query "${example}"), best match first, or newest change first without a query. Private ${plural} appear only to callers who may see them. Answers each repository's id (owner/name), visibility, gating, dates, counts and tags, and page URL; read one's card with read_repo_card.`,
      inputSchema: McpRepoSearchArgs,
      outputSchema: McpRepoSearchResult,
      async run(caller, args) {
        const query = listingQuery(
          {
            ...(args.query === undefined ? {} : { search: args.query }),
            ...(args.author === undefined ? {} : { author: args.author }),
            ...(args.filter === undefined ? {} : { filter: args.filter }),
            ...(args.sort === undefined ? {} : { sort: args.sort }),
            ...(args.direction === undefined ? {} : { direction: args.direction === "desc" ? "-1" : "1" }),
          },
          type,
        );
        const limit = args.limit ?? 20;
        const offset = args.offset ?? 0;
        const page = await repos.list(caller, type, { ...query, limit, offset });
        const found = page.items.map((entry) => {
          // A listing entry carries the discovery fields of its kind (likes, downloads, tags …) beside the base ones.
          const item = entry as ApiRepoListItem;
          return {
            id: item.id,
            author: item.author,
            private: item.private,
            gated: item.gated,
            createdAt: item.createdAt,
            lastModified: item.lastModified,
            ...(item.sdk === undefined ? {} : { sdk: item.sdk }),
            ...(item.likes === undefined ? {} : { likes: item.likes }),
            ...(item.downloads === undefined ? {} : { downloads: item.downloads }),
            ...(item.pipeline_tag === undefined ? {} : { pipeline_tag: item.pipeline_tag }),
            ...(item.library_name === undefined ? {} : { library_name: item.library_name }),
            ...(item.tags === undefined ? {} : { tags: item.tags }),
            url: repos.webUrl(type, item.id),
          };
        });
        const lines = found.map((hit) => {
          const notes = [
            ...(hit.private ? ["private"] : []),
            ...(hit.gated ? [`gated (${hit.gated})`] : []),
            ...(hit.sdk ? [`sdk ${hit.sdk}`] : []),
            ...(hit.pipeline_tag ? [hit.pipeline_tag] : []),
            ...(hit.library_name ? [hit.library_name] : []),
            ...(hit.likes ? [`${hit.likes} likes`] : []),
            ...(hit.downloads ? [`${hit.downloads} downloads`] : []),
          ];
          return `- ${hit.id}${notes.length > 0 ? ` [${notes.join(", ")}]` : ""}, updated ${hit.lastModified}: ${hit.url}`;
        });
        const more = page.next === null ? "" : ` More with offset ${page.next}.`;
        return {
          text:
            found.length === 0
              ? `No ${plural} match.${more}`
              : `${found.length} ${found.length === 1 ? type : plural}:${more}\n${lines.join("\n")}`,
          structured: { type, repositories: found, next_offset: page.next },
        };
      },
    });
  }

  return [
    searchTool("model", "bert"),
    searchTool("dataset", "squad"),
    searchTool("space", "chat"),
    tool({
      name: "search_papers",
      title: "Search papers",
      description:
        "Find papers on this hub (those its repositories cite or its users added) whose arXiv id, title or authors hold the query, newest first. Answers each paper's arXiv id, title, authors, abstract and arXiv URL.",
      inputSchema: McpPaperSearchArgs,
      outputSchema: McpPaperSearchResult,
      async run(_caller, args) {
        const found = (await papers.search(args.query, args.limit ?? 10)).map((paper) => ({
          id: paper.id,
          title: paper.title,
          authors: paper.authors.map((author) => author.name),
          summary: paper.summary,
          publishedAt: paper.publishedAt,
          url: paper.url,
        }));
        const lines = found.map((paper) => {
          const abstract = paper.summary.length > 300 ? `${paper.summary.slice(0, 300)}…` : paper.summary;
          return `- ${paper.id} "${paper.title}" by ${paper.authors.join(", ") || "unknown authors"}${paper.publishedAt ? `, published ${paper.publishedAt.slice(0, 10)}` : ""}: ${paper.url}\n  ${abstract}`;
        });
        return {
          text: found.length === 0 ? "No papers match." : `${found.length} papers:\n${lines.join("\n")}`,
          structured: { papers: found },
        };
      },
    }),
    tool({
      name: "read_repo_card",
      title: "Read a repository's card",
      description:
        "Read the card (README.md of the default branch) of a model, dataset or space: its YAML metadata (license, tags, base_model …) and text. A gated repository's card is shown only to callers its gate lets through, as its files are.",
      inputSchema: McpReadCardArgs,
      outputSchema: McpRepoCard,
      async run(caller, args) {
        const repo = await repository(caller, args, "repo:download");
        const commit = await files.resolve(repo, "HEAD").catch((err: unknown) => {
          throw err instanceof HubError && err.code === "revision_not_found"
            ? notFound(`${repo.fullName} has no commit yet, so it has no card.`)
            : err;
        });
        const entry = await files.entry(repo, commit, "README.md").catch((err: unknown) => {
          throw err instanceof HubError && err.code === "entry_not_found"
            ? notFound(
                `${repo.fullName} has no README.md (its card) on ${repo.row.default_branch}; list its files with list_repo_files.`,
              )
            : err;
        });
        if (entry.lfs) {
          throw notFound(
            `The card of ${repo.fullName} is stored with Git LFS, which this tool does not read; download README.md from the repository's page.`,
          );
        }
        const card = (entry.content ?? (await files.blob(repo, entry.oid))).toString("utf8");
        const metadata = readCard(card);
        const characters = [...card];
        const max = args.max_chars ?? DEFAULT_CARD_CHARS;
        const truncated = characters.length > max;
        const text = truncated ? characters.slice(0, max).join("") : card;
        const url = repos.webUrl(repo.type, repo.fullName);
        const cut = truncated ? `\n\n[The card goes on: ${characters.length - max} more characters.]` : "";
        return {
          text: `Card of ${repo.fullName} (${repo.type}, commit ${commit}, ${url}):\n\n${text}${cut}`,
          structured: {
            id: repo.fullName,
            type: repo.type,
            url,
            commit,
            // Through JSON, so what YAML alone can hold (.inf, binary) becomes what structured content carries.
            metadata: metadata.data && (JSON.parse(JSON.stringify(metadata.data)) as Record<string, unknown>),
            metadata_problems: metadata.problems,
            text,
            truncated,
          },
        };
      },
    }),
    tool({
      name: "list_repo_files",
      title: "List a repository's files",
      description:
        "List the files of a model, dataset or space at a revision (the default branch unless given), optionally under one folder: each file's path, size and whether it is stored with Git LFS.",
      inputSchema: McpListFilesArgs,
      outputSchema: McpRepoFiles,
      async run(caller, args) {
        const repo = await repository(caller, args, "repo:read");
        const info = await repos.info(repo, args.revision, { blobs: true, fields: [] });
        const folder = args.path?.replace(/^\/+|\/+$/g, "");
        const matching = info.siblings
          .filter((file) => !folder || file.rfilename.startsWith(`${folder}/`))
          .map((file) => ({ path: file.rfilename, size: file.lfs?.size ?? file.size ?? 0, lfs: !!file.lfs }));
        const limit = args.limit ?? 200;
        const listed = matching.slice(0, limit);
        const lines = listed.map(
          (file) => `- ${file.path} (${humanSize(file.size)}${file.lfs ? ", LFS" : ""})`,
        );
        const where = folder ? ` under ${folder}/` : "";
        const at = info.sha ? ` at ${info.sha}` : "";
        const summary =
          info.sha === null
            ? `${repo.fullName} has no commit yet.`
            : matching.length === 0
              ? `${repo.fullName} has no files${where}${at}.`
              : `${matching.length} files in ${repo.fullName}${where}${at}${matching.length > limit ? ` (the first ${limit} listed)` : ""}:`;
        return {
          text: [summary, ...lines].join("\n"),
          structured: {
            id: repo.fullName,
            type: repo.type,
            commit: info.sha,
            files: listed,
            total: matching.length,
            truncated: matching.length > limit,
          },
        };
      },
    }),
    tool({
      name: "list_router_models",
      title: "List the models the Router serves",
      description:
        "List the models this hub's inference Router serves (OpenAI-compatible chat, responses and embeddings), each with its providers' task, price per million tokens, status and context length. Call them at the Router's URL + /v1 with a hub token that may run inference.",
      inputSchema: McpRouterModelsArgs,
      outputSchema: McpRouterModels,
      async run(_caller, args) {
        const needle = args.query?.toLowerCase();
        const models = listCatalog(
          deps.catalog,
          await deps.stats.view(catalogMappings(deps.catalog)),
          deps.startedAt,
        )
          .data.filter((model) => !needle || model.id.toLowerCase().includes(needle))
          .map((model) => ({
            ...model,
            providers: model.providers.filter((p) => !args.task || p.task === args.task),
          }))
          .filter((model) => model.providers.length > 0);
        const lines = models.map(
          (model) =>
            `- ${model.id}: ${model.providers
              .map(
                (p) =>
                  `${p.task} via ${p.provider} ($${p.pricing.input}/M input, $${p.pricing.output}/M output, ${p.status}${p.context_length === null ? "" : `, context ${p.context_length}`})`,
              )
              .join("; ")}`,
        );
        const base = `${deps.routerPublicUrl}/v1`;
        return {
          text:
            models.length === 0
              ? "The Router serves no model that matches."
              : `${models.length} models, served at ${base} (OpenAI-compatible; send a hub token as the API key):\n${lines.join("\n")}`,
          structured: { inference_url: deps.routerPublicUrl, models },
        };
      },
    }),
  ];
}
