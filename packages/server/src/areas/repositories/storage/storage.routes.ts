import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  ApiErrorRef,
  LfsDeletionRequest,
  LfsDeletionResponse,
  LfsFileEntry,
  REPO_TYPES,
  RepoStorageEntry,
  SuperSquashRequest,
} from "@hub/api";
import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { principalOf } from "../../../http/access.js";
import { ownerSettingsRoute, type OrganizationLookup } from "../../../http/owner-settings.js";
import { repoPathAction, repositoryOf } from "../../../http/repo-access.js";
import type { ReposService } from "../repos/repos.service.js";
import type { StorageService } from "./storage.service.js";

/**
 * Storage: what each repository of a namespace uses (`list_user_repos`), a
 * repository's LFS objects and their permanent deletion (`list_lfs_files`,
 * `permanently_delete_lfs_files`), and squashing a branch's history
 * (`super_squash_history`).
 */
export function storageRoutes({
  storage,
  repos,
  orgs,
}: {
  storage: StorageService;
  repos: ReposService;
  orgs: OrganizationLookup;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ["Repositories"];
    ownerSettingsRoute(app, orgs, {
      method: "GET",
      path: "/settings/repositories",
      accountPath: "/api/settings/repositories",
      operationId: "storage_repositories",
      summary:
        "Every repository of the account or organization with the bytes it uses, most recently changed first.",
      tags,
      action: "settings:read",
      response: { 200: Type.Array(RepoStorageEntry) },
      handler: (owner) => storage.repositoriesOf(owner.id, owner.handle),
    });

    for (const type of REPO_TYPES) {
      const api = `/api/${type}s/:owner/:name`;
      app.get(
        `${api}/lfs-files`,
        {
          schema: {
            operationId: `storage_lfs_files_${type}`,
            tags,
            summary: "The repository's LFS objects, each with a path that points to it in the history.",
            response: { 200: Type.Array(LfsFileEntry), 404: ApiErrorRef },
          },
          config: { access: repoPathAction(repos, type, "repo:write") },
        },
        async (request) => storage.lfsFiles(repositoryOf(request)),
      );

      app.post(
        `${api}/lfs-files/batch`,
        {
          schema: {
            operationId: `storage_lfs_files_delete_${type}`,
            tags,
            summary:
              "Permanently delete LFS objects no branch, tag or pull request uses; with rewriteHistory (the default), the pointers leave every commit too.",
            body: LfsDeletionRequest,
            response: { 200: LfsDeletionResponse, 404: ApiErrorRef, 409: ApiErrorRef },
          },
          config: { access: repoPathAction(repos, type, "repo:delete") },
        },
        async (request) =>
          storage.deleteLfsFiles(
            repositoryOf(request),
            request.body.deletions.sha,
            request.body.deletions.rewriteHistory ?? true,
            principalOf(request).handle,
          ),
      );

      app.post(
        `${api}/super-squash/:branch`,
        {
          schema: {
            operationId: `storage_super_squash_${type}`,
            tags,
            summary: "Replace a branch's history by one commit holding its files.",
            body: Type.Optional(SuperSquashRequest),
            response: {
              200: Type.Object({ commitOid: Type.String() }),
              404: ApiErrorRef,
              409: ApiErrorRef,
            },
          },
          config: { access: repoPathAction(repos, type, "repo:write") },
        },
        async (request: FastifyRequest) => {
          const branch = (request.params as { branch: string }).branch;
          const message = (request.body as SuperSquashRequest | undefined)?.message;
          return storage.superSquash(
            repositoryOf(request),
            principalOf(request),
            branch,
            message ?? `Super-squash branch '${branch}'`,
          );
        },
      );
    }
  };
}
