import { Type, type Static } from "@sinclair/typebox";

/** One line of a hunk: unchanged context, added or removed, with its numbers in the old and new file. */
export const DiffLine = Type.Object(
  {
    type: Type.Union([Type.Literal("context"), Type.Literal("added"), Type.Literal("removed")]),
    oldNumber: Type.Optional(
      Type.Integer({ minimum: 1, description: "The line's number before the commit." }),
    ),
    newNumber: Type.Optional(
      Type.Integer({ minimum: 1, description: "The line's number after the commit." }),
    ),
    text: Type.String({ description: "The line without its end-of-line characters." }),
    noNewlineAtEnd: Type.Optional(
      Type.Boolean({ description: "The file ends with this line and no newline after it." }),
    ),
  },
  { title: "DiffLine" },
);
export type DiffLine = Static<typeof DiffLine>;

/** A run of changed lines with their context, as one `@@ -a,b +c,d @@` section of a unified diff. */
export const DiffHunk = Type.Object(
  {
    oldStart: Type.Integer({ minimum: 0 }),
    oldLines: Type.Integer({ minimum: 0 }),
    newStart: Type.Integer({ minimum: 0 }),
    newLines: Type.Integer({ minimum: 0 }),
    lines: Type.Array(DiffLine),
  },
  { title: "DiffHunk" },
);
export type DiffHunk = Static<typeof DiffHunk>;

/** An LFS object a pointer file names. */
export const DiffLfsObject = Type.Object(
  { oid: Type.String({ description: "SHA-256 of the content." }), size: Type.Integer({ minimum: 0 }) },
  { title: "DiffLfsObject" },
);

/** What one file of a commit became. */
export const DiffFile = Type.Object(
  {
    path: Type.String({ description: "The path after the commit (before it, for a removed file)." }),
    oldPath: Type.Optional(Type.String({ description: "For a renamed file, its path before the commit." })),
    status: Type.Union([
      Type.Literal("added"),
      Type.Literal("removed"),
      Type.Literal("modified"),
      Type.Literal("renamed"),
    ]),
    kind: Type.Union([Type.Literal("text"), Type.Literal("binary"), Type.Literal("lfs")], {
      description:
        "text: lines are compared; binary: the content holds NUL bytes (or is a submodule) and only sizes are given; lfs: a Git LFS pointer on either side, summarised by the objects it names.",
    }),
    oldSize: Type.Optional(Type.Integer({ minimum: 0, description: "The git blob's size before." })),
    newSize: Type.Optional(Type.Integer({ minimum: 0, description: "The git blob's size after." })),
    lfs: Type.Optional(
      Type.Object(
        { old: Type.Union([DiffLfsObject, Type.Null()]), new: Type.Union([DiffLfsObject, Type.Null()]) },
        { description: "For kind lfs: the object before and after (null where that side is no LFS file)." },
      ),
    ),
    additions: Type.Optional(Type.Integer({ minimum: 0, description: "Lines added, when compared." })),
    deletions: Type.Optional(Type.Integer({ minimum: 0, description: "Lines removed, when compared." })),
    hunks: Type.Optional(Type.Array(DiffHunk, { description: "For a text file that was compared." })),
    omitted: Type.Optional(
      Type.Union([Type.Literal("file_too_large"), Type.Literal("diff_too_large")], {
        description:
          "Why a text file's lines are not given: one side is over limits.maxFileBytes, or the diff's lines already reached limits.maxTotalBytes.",
      }),
    ),
  },
  { title: "DiffFile" },
);
export type DiffFile = Static<typeof DiffFile>;

/** The changes a commit made, against its first parent (or nothing, for a first commit). */
export const CommitDiff = Type.Object(
  {
    commit: Type.String({ description: "The commit's id." }),
    parent: Type.Union([Type.String(), Type.Null()], {
      description: "The first parent the diff is taken against; null for a commit without parents.",
    }),
    files: Type.Array(DiffFile, { description: "In path order; at most limits.maxFiles." }),
    totalFiles: Type.Integer({ minimum: 0, description: "How many files the commit changed in all." }),
    truncated: Type.Boolean({ description: "Whether files were left out (totalFiles > files.length)." }),
    limits: Type.Object(
      {
        maxFiles: Type.Integer({ description: "At most this many files are listed." }),
        maxFileBytes: Type.Integer({
          description: "A text file larger than this on either side is not compared.",
        }),
        maxTotalBytes: Type.Integer({
          description: "Lines stop being given once the compared files' sizes add up to this.",
        }),
      },
      { description: "The limits this answer was cut by." },
    ),
  },
  { title: "CommitDiff" },
);
export type CommitDiff = Static<typeof CommitDiff>;
