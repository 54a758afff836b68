import { Type, type Static } from "@sinclair/typebox";

/**
 * `POST /api/{type}s/{owner}/{name}/preupload/{rev}`: the files a commit will
 * carry, with the base64 of each file's first 512 bytes, so the hub can say
 * which go through Git LFS.
 */
export const PreuploadRequest = Type.Object(
  {
    files: Type.Array(
      Type.Object({
        path: Type.String(),
        size: Type.Integer({ minimum: 0 }),
        sample: Type.Optional(Type.String()),
      }),
      { maxItems: 1000 },
    ),
    gitAttributes: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    gitIgnore: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { additionalProperties: true, title: "PreuploadRequest" },
);
export type PreuploadRequest = Static<typeof PreuploadRequest>;

/** Which files go through LFS (`lfs`) and which travel inside the commit (`regular`). */
export const PreuploadResponse = Type.Object(
  {
    files: Type.Array(
      Type.Object({
        path: Type.String(),
        uploadMode: Type.Union([Type.Literal("lfs"), Type.Literal("regular")]),
        shouldIgnore: Type.Boolean(),
      }),
    ),
  },
  { title: "PreuploadResponse" },
);
export type PreuploadResponse = Static<typeof PreuploadResponse>;

/** The answer to an NDJSON commit (`POST /api/{type}s/{owner}/{name}/commit/{rev}`). */
export const CommitResponse = Type.Object(
  {
    commitUrl: Type.String(),
    commitOid: Type.String(),
    pullRequestUrl: Type.Optional(
      Type.String({
        description: "With create_pr: the pull request the commit opened (…/discussions/{num}).",
      }),
    ),
  },
  { title: "CommitResponse" },
);
export type CommitResponse = Static<typeof CommitResponse>;

/** One line of an NDJSON commit body, as the Hugging Face clients write them. */
export type CommitLine =
  | { key: "header"; value: { summary: string; description?: string; parentCommit?: string } }
  | { key: "file"; value: { path: string; content: string; encoding: "base64" } }
  | { key: "lfsFile"; value: { path: string; algo: "sha256"; oid: string; size: number } }
  | { key: "deletedFile"; value: { path: string } }
  | { key: "deletedFolder"; value: { path: string } };

/** A file or folder in a tree listing or paths-info answer; `oid` is the git object id. */
export const TreeEntry = Type.Object(
  {
    type: Type.Union([Type.Literal("file"), Type.Literal("directory")]),
    path: Type.String(),
    oid: Type.String(),
    size: Type.Integer(),
    lfs: Type.Optional(
      Type.Object({ oid: Type.String(), size: Type.Integer(), pointerSize: Type.Integer() }),
    ),
    xetHash: Type.Optional(
      Type.String({
        description:
          "The file's Xet hash, for an LFS file the repository's Xet CAS can rebuild (clients then download it through Xet).",
      }),
    ),
    lastCommit: Type.Optional(
      Type.Object(
        { id: Type.String(), title: Type.String(), date: Type.String({ format: "date-time" }) },
        { description: "The commit that last changed the entry; present with `expand=true`." },
      ),
    ),
  },
  { title: "TreeEntry" },
);
export type TreeEntry = Static<typeof TreeEntry>;
