import type { RepoType } from "@hub/api";
import type { FastifyRequest } from "fastify";
import type { Action } from "../auth/authorize.js";
import type { Principal } from "../auth/credential.js";
import { repoResource, type FoundRepo, type RepoLookup } from "../domain/repositories.js";
import type { Access } from "./access.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The repository a route acts on, loaded by its access declaration. */
    repository?: FoundRepo;
  }
}

/** The repository the access check loaded for this request. */
export function repositoryOf(request: FastifyRequest): FoundRepo {
  if (!request.repository) throw new Error("The route declared no repository access.");
  return request.repository;
}

/** A route's access to a repository: an action on it, never `public` or `optional`. */
export type RepoAccessDeclaration = Exclude<Access, string>;

/** Access to the repository a request names, loaded once and kept on the request. */
export function repoAccess(
  repos: RepoLookup,
  action: Action,
  locate: (
    request: FastifyRequest,
    principal: Principal | null,
  ) => { type: RepoType; owner: string; name: string },
): RepoAccessDeclaration {
  return {
    action,
    repository: true,
    resource: async (request, principal) => {
      const { type, owner, name } = locate(request, principal);
      const repo = await repos.findOrHide(principal, type, owner, name, request.url);
      request.repository = repo;
      return repoResource(repo);
    },
  };
}

/** The offset an opaque list cursor carries; anything else starts from the beginning. */
export function cursorOffset(cursor: string | undefined): number {
  const offset = cursor ? Number(Buffer.from(cursor, "base64url").toString()) : 0;
  return Number.isSafeInteger(offset) && offset >= 0 ? offset : 0;
}

/** The absolute URL of a listing's next page: the same path and query, with the cursor of `offset`. */
export function nextPageUrl(publicUrl: string, request: FastifyRequest, offset: number): string {
  const next = new URL(`${publicUrl}${request.url.split("?")[0]}`);
  for (const [key, value] of Object.entries(request.query as Record<string, unknown>)) {
    if (key === "cursor" || value === undefined) continue;
    // A repeated parameter (expand=a&expand=b) stays repeated on the next page.
    for (const item of Array.isArray(value) ? value : [value]) next.searchParams.append(key, String(item));
  }
  next.searchParams.set("cursor", Buffer.from(String(offset)).toString("base64url"));
  return next.href;
}

/** Access to the repository of a route under `/api/{type}s/:owner/:name`, for an action. */
export function repoPathAction(repos: RepoLookup, type: RepoType, action: Action): RepoAccessDeclaration {
  return repoAccess(repos, action, (request) => {
    const { owner, name } = request.params as { owner: string; name: string };
    return { type, owner, name };
  });
}

/** Read and write access for routes under `/api/{type}s/:owner/:name`. */
export function repoPathAccess(
  repos: RepoLookup,
  type: RepoType,
): { read: RepoAccessDeclaration; write: RepoAccessDeclaration } {
  return { read: repoPathAction(repos, type, "repo:read"), write: repoPathAction(repos, type, "repo:write") };
}
