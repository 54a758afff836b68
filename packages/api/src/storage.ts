import { Type, type Static } from "@sinclair/typebox";
import { RepoTypeSchema } from "./repos.js";

/** `GET /api/settings/repositories`: a repository of the namespace and the storage it uses, as `list_user_repos` reads it. */
export const RepoStorageEntry = Type.Object(
  {
    id: Type.String({ description: "`<owner>/<name>`." }),
    type: RepoTypeSchema,
    updatedAt: Type.String({ format: "date-time" }),
    visibility: Type.Union([Type.Literal("public"), Type.Literal("private")]),
    storage: Type.Integer({
      minimum: 0,
      description: "Bytes used: the git repository on disk plus its LFS objects.",
    }),
    storagePercent: Type.Number({
      minimum: 0,
      maximum: 100,
      description: "Its share of the namespace's bytes.",
    }),
  },
  { title: "RepoStorageEntry" },
);
export type RepoStorageEntry = Static<typeof RepoStorageEntry>;

/** `GET /api/{type}s/{id}/lfs-files`: an LFS object of the repository, as `list_lfs_files` reads it. */
export const LfsFileEntry = Type.Object(
  {
    fileOid: Type.String({ description: "The object's SHA-256: what a deletion names." }),
    oid: Type.String({ description: "The LFS object id (the same SHA-256)." }),
    filename: Type.String({
      description: "A path that points to it somewhere in the history; empty when no commit does.",
    }),
    pushedAt: Type.String({ format: "date-time" }),
    ref: Type.Union([Type.String(), Type.Null()]),
    size: Type.Integer({ minimum: 0 }),
  },
  { title: "LfsFileEntry" },
);
export type LfsFileEntry = Static<typeof LfsFileEntry>;

/** `POST /api/{type}s/{id}/lfs-files/batch`, as `permanently_delete_lfs_files` sends it. */
export const LfsDeletionRequest = Type.Object(
  {
    deletions: Type.Object({
      sha: Type.Array(Type.String(), { minItems: 1, maxItems: 1000 }),
      rewriteHistory: Type.Optional(
        Type.Boolean({
          description: "Also remove the pointers from every commit of the history (default true).",
        }),
      ),
    }),
  },
  { title: "LfsDeletionRequest" },
);
export type LfsDeletionRequest = Static<typeof LfsDeletionRequest>;

export const LfsDeletionResponse = Type.Object(
  {
    deleted: Type.Array(Type.Object({ oid: Type.String(), size: Type.Integer() })),
    freedBytes: Type.Integer({
      minimum: 0,
      description: "Bytes removed from storage (objects no other repository holds).",
    }),
    rewrittenRefs: Type.Array(Type.String(), { description: "Refs whose history was rewritten." }),
  },
  { title: "LfsDeletionResponse" },
);

/** `POST /api/{type}s/{id}/super-squash/{branch}`. */
export const SuperSquashRequest = Type.Object(
  { message: Type.Optional(Type.String({ minLength: 1, maxLength: 65_536 })) },
  { title: "SuperSquashRequest" },
);
export type SuperSquashRequest = Static<typeof SuperSquashRequest>;
