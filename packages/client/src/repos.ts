import type { RepoInfo, RepoListItem, RepoSummary, RepoType, TreeEntry } from "@hub/api";
import { send, sendJson, type Connection } from "./connection.js";

/** A repository: `name` is `<owner>/<name>`; `type` defaults to `model`. */
export interface RepoRef {
  type?: RepoType;
  name: string;
}

/** `/api/{type}s/{owner}/{name}`: where the Hub API serves a repository. */
export function repoApiPath(repo: RepoRef): string {
  return `/api/${repo.type ?? "model"}s/${repo.name}`;
}

/** The web and git path prefix of a repository kind: none for models, `datasets/` and so on otherwise. */
export function repoUrlPrefix(type: RepoType = "model"): string {
  return type === "model" ? "" : `${type}s/`;
}

/** Parses `owner/name`, or a prefixed `datasets/owner/name`, into a {@link RepoRef}. */
export function parseRepo(value: string, type?: RepoType): RepoRef {
  const match = /^(?:(models|datasets|spaces|mcps)\/)?([^/\s]+\/[^/\s]+)$/.exec(value);
  if (!match?.[2]) throw new TypeError(`"${value}" is not a repository: write it as owner/name.`);
  const prefixed = match[1] ? (match[1].slice(0, -1) as RepoType) : undefined;
  return { type: type ?? prefixed ?? "model", name: match[2] };
}

export interface CreateRepoParams {
  connection: Connection;
  repo: RepoRef;
  /** Defaults to false (public). */
  private?: boolean;
  signal?: AbortSignal;
}

/** `POST /api/repos`: creates a repository whose first commit holds the default `.gitattributes`. */
export function createRepo({ connection, repo, signal, ...options }: CreateRepoParams): Promise<RepoSummary> {
  return sendJson<RepoSummary>(connection, {
    method: "POST",
    path: "/api/repos",
    json: { repo_id: repo.name, repo_type: repo.type ?? "model", private: options.private ?? false },
    signal,
  });
}

export interface DeleteRepoParams {
  connection: Connection;
  repo: RepoRef;
  signal?: AbortSignal;
}

/** `DELETE /api/repos/delete`: deletes a repository permanently (scope `repo:delete`). */
export async function deleteRepo({ connection, repo, signal }: DeleteRepoParams): Promise<void> {
  const [organization, name] = repo.name.split("/");
  await send(connection, {
    method: "DELETE",
    path: "/api/repos/delete",
    json: { name, organization, type: repo.type ?? "model" },
    signal,
  });
}

export interface RepoInfoParams {
  connection: Connection;
  repo: RepoRef;
  /** A branch, tag or commit; the default branch when left out. */
  revision?: string;
  signal?: AbortSignal;
}

/** `GET /api/{type}s/{owner}/{name}[/revision/{rev}]`: the commit a revision resolves to and the files in it. */
export function repoInfo({ connection, repo, revision, signal }: RepoInfoParams): Promise<RepoInfo> {
  const suffix = revision === undefined ? "" : `/revision/${encodeURIComponent(revision)}`;
  return sendJson<RepoInfo>(connection, { path: `${repoApiPath(repo)}${suffix}`, signal });
}

export interface ListReposParams {
  connection: Connection;
  type?: RepoType;
  /** Only this owner's repositories. */
  author?: string;
  search?: string;
  sort?: "lastModified" | "createdAt" | "id";
  /** Stop after this many. */
  limit?: number;
  signal?: AbortSignal;
}

/** `GET /api/{type}s`: the repositories the caller may read, page after page (`Link: rel="next"`). */
export async function* listRepos(params: ListReposParams): AsyncGenerator<RepoListItem> {
  const { connection, type = "model", author, search, sort, limit, signal } = params;
  let yielded = 0;
  for await (const item of paginate<RepoListItem>(connection, {
    path: `/api/${type}s`,
    query: { author, search, sort, limit: limit === undefined ? undefined : Math.min(limit, 1000) },
    signal,
  })) {
    if (limit !== undefined && yielded >= limit) return;
    yielded++;
    yield item;
  }
}

export interface ListFilesParams {
  connection: Connection;
  repo: RepoRef;
  /** A branch, tag or commit; `main` when left out. */
  revision?: string;
  /** A folder to list; the root when left out. */
  path?: string;
  recursive?: boolean;
  signal?: AbortSignal;
}

/** `GET /api/{type}s/{owner}/{name}/tree/{rev}[/{path}]`: files and folders with their git and LFS ids. */
export function listFiles(params: ListFilesParams): AsyncGenerator<TreeEntry> {
  const { connection, repo, revision = "main", path = "", recursive, signal } = params;
  const sub = path ? `/${path.split("/").map(encodeURIComponent).join("/")}` : "";
  return paginate<TreeEntry>(connection, {
    path: `${repoApiPath(repo)}/tree/${encodeURIComponent(revision)}${sub}`,
    query: { recursive: recursive ? "1" : undefined },
    signal,
  });
}

export interface PathsInfoParams {
  connection: Connection;
  repo: RepoRef;
  revision?: string;
  paths: string[];
  signal?: AbortSignal;
}

/** `POST .../paths-info/{rev}`: the entries of the given paths; missing ones are left out. */
export function pathsInfo({ connection, repo, revision = "main", paths, signal }: PathsInfoParams) {
  return sendJson<TreeEntry[]>(connection, {
    method: "POST",
    path: `${repoApiPath(repo)}/paths-info/${encodeURIComponent(revision)}`,
    json: { paths },
    signal,
  });
}

/** Follows `Link: <...>; rel="next"` from page to page, yielding each item of the JSON arrays. */
async function* paginate<T>(
  connection: Connection,
  first: {
    path: string;
    query?: Record<string, string | number | undefined>;
    signal?: AbortSignal | undefined;
  },
): AsyncGenerator<T> {
  let next: string | null = null;
  let response = await send(connection, first);
  for (;;) {
    for (const item of (await response.json()) as T[]) yield item;
    next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get("link") ?? "")?.[1] ?? null;
    if (!next) return;
    response = await send(connection, { path: next, signal: first.signal });
  }
}
