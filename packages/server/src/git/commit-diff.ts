import type { CommitDiff, DiffFile, DiffHunk, DiffLine } from "@hub/api";
import { runGit } from "./git-command.js";
import { MAX_POINTER_SIZE, parseLfsPointer } from "./lfs-pointer.js";
import type { RepoStorage } from "./repo-storage.js";

/** How much of a commit's diff one answer carries. */
export interface DiffLimits {
  /** Files listed at most. */
  maxFiles: number;
  /** A text file larger than this on either side is not compared line by line. */
  maxFileBytes: number;
  /** Lines stop being given once the compared files' sizes add up to this. */
  maxTotalBytes: number;
}

export const DEFAULT_DIFF_LIMITS: DiffLimits = {
  maxFiles: 300,
  maxFileBytes: 512 * 1024,
  maxTotalBytes: 2 * 1024 * 1024,
};

/** git's own rule for binary content: a NUL byte among the first 8000 bytes (xdiff's buffer_is_binary). */
const BINARY_PROBE = 8000;
const isBinary = (content: Buffer) => content.subarray(0, BINARY_PROBE).includes(0);

const HEX_OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
const SUBMODULE_MODE = "160000";
const LITERAL_PATHS = { GIT_LITERAL_PATHSPECS: "1" };
/** How many `git diff` processes one request runs at once. */
const DIFF_CONCURRENCY = 4;

/** One entry of `git diff-tree --raw`: modes, blob ids (all zeros on the side that has none), status, paths. */
export interface RawChange {
  oldMode: string;
  newMode: string;
  oldOid: string | null;
  newOid: string | null;
  status: DiffFile["status"];
  path: string;
  oldPath?: string;
}

/**
 * Parses `git diff-tree -r -z --raw` output (https://git-scm.com/docs/git-diff-tree#_raw_output_format):
 * `:oldmode newmode oldoid newoid status NUL path NUL`, with two paths for a rename.
 */
export function parseRawChanges(out: string): RawChange[] {
  const tokens = out.split("\0");
  const changes: RawChange[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const meta = tokens[i] ?? "";
    if (!meta.startsWith(":")) continue;
    const [oldMode = "", newMode = "", oldOid = "", newOid = "", letters = ""] = meta.slice(1).split(" ");
    const letter = letters.charAt(0);
    const present = (oid: string) => (/^0+$/.test(oid) ? null : oid);
    if (letter === "R" || letter === "C") {
      const from = tokens[++i] ?? "";
      const to = tokens[++i] ?? "";
      changes.push({
        oldMode,
        newMode,
        oldOid: present(oldOid),
        newOid: present(newOid),
        status: letter === "R" ? "renamed" : "added",
        path: to,
        ...(letter === "R" ? { oldPath: from } : {}),
      });
      continue;
    }
    const path = tokens[++i] ?? "";
    const status = letter === "A" ? "added" : letter === "D" ? "removed" : "modified";
    changes.push({ oldMode, newMode, oldOid: present(oldOid), newOid: present(newOid), status, path });
  }
  return changes;
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** The hunks of a unified diff of one file (`git diff` output), with each line's numbers on both sides. */
export function parseUnifiedHunks(patch: string): DiffHunk[] {
  const hunks: DiffHunk[] = [];
  let hunk: DiffHunk | null = null;
  let oldNumber = 0;
  let newNumber = 0;
  const lines = patch.split("\n");
  if (lines.at(-1) === "") lines.pop();
  for (const line of lines) {
    const header = HUNK_HEADER.exec(line);
    if (header) {
      hunk = {
        oldStart: Number(header[1]),
        oldLines: header[2] === undefined ? 1 : Number(header[2]),
        newStart: Number(header[3]),
        newLines: header[4] === undefined ? 1 : Number(header[4]),
        lines: [],
      };
      hunks.push(hunk);
      oldNumber = hunk.oldStart;
      newNumber = hunk.newStart;
      continue;
    }
    if (!hunk) continue;
    const text = line.slice(1);
    const mark = line.charAt(0);
    if (mark === " ")
      hunk.lines.push({ type: "context", oldNumber: oldNumber++, newNumber: newNumber++, text });
    else if (mark === "-") hunk.lines.push({ type: "removed", oldNumber: oldNumber++, text });
    else if (mark === "+") hunk.lines.push({ type: "added", newNumber: newNumber++, text });
    else if (mark === "\\") {
      const last = hunk.lines.at(-1);
      if (last) last.noNewlineAtEnd = true;
    }
  }
  return hunks;
}

/** A whole file added or removed, as one hunk of added or removed lines. */
export function wholeFileHunk(content: Buffer, type: "added" | "removed"): DiffHunk[] {
  const text = content.toString("utf8");
  if (text.length === 0) return [];
  const endsWithNewline = text.endsWith("\n");
  const texts = (endsWithNewline ? text.slice(0, -1) : text).split("\n");
  const lines: DiffLine[] = texts.map((line, index) =>
    type === "added"
      ? { type, newNumber: index + 1, text: line }
      : { type, oldNumber: index + 1, text: line },
  );
  const last = lines.at(-1);
  if (last && !endsWithNewline) last.noNewlineAtEnd = true;
  return [
    type === "added"
      ? { oldStart: 0, oldLines: 0, newStart: 1, newLines: lines.length, lines }
      : { oldStart: 1, oldLines: lines.length, newStart: 0, newLines: 0, lines },
  ];
}

const count = (hunks: DiffHunk[], type: "added" | "removed") =>
  hunks.reduce((sum, hunk) => sum + hunk.lines.filter((line) => line.type === type).length, 0);

/**
 * The diff of one commit against its first parent, read with git's own programs: `diff-tree --raw -M`
 * for what changed, `cat-file` for sizes and contents, `diff` between two blobs for the lines. Only
 * object ids git itself printed, and paths after `--`, reach a command line.
 */
export function createCommitDiff(storage: RepoStorage) {
  const git = (id: string, args: string[], input?: string, env?: Record<string, string>) =>
    runGit(args, { cwd: storage.pathOf(id), input, env });

  /** Blob sizes by id, in one `cat-file --batch-check`. */
  async function sizesOf(id: string, oids: string[]): Promise<Map<string, number>> {
    if (oids.length === 0) return new Map();
    const out = await git(id, ["cat-file", "--batch-check"], oids.join("\n") + "\n");
    const sizes = new Map<string, number>();
    for (const line of out.toString("utf8").split("\n")) {
      const [oid = "", type = "", size = ""] = line.split(" ");
      if (type === "blob") sizes.set(oid, Number(size));
    }
    return sizes;
  }

  /** Blob contents by id, in one `cat-file --batch`. */
  async function contentsOf(id: string, oids: string[]): Promise<Map<string, Buffer>> {
    const unique = [...new Set(oids)];
    if (unique.length === 0) return new Map();
    const out = await git(id, ["cat-file", "--batch"], unique.join("\n") + "\n");
    const contents = new Map<string, Buffer>();
    let offset = 0;
    for (const oid of unique) {
      const newline = out.indexOf(10, offset);
      if (newline === -1) break;
      const [, , size] = out.subarray(offset, newline).toString().split(" ");
      const start = newline + 1;
      const end = start + Number(size);
      contents.set(oid, out.subarray(start, end));
      offset = end + 1;
    }
    return contents;
  }

  /**
   * Lines added and removed (null for binary content), per path after the commit, for files not compared
   * here: git's `--numstat` over just those paths (old and new, so renames still pair).
   */
  async function numstat(id: string, from: string, to: string, files: RawChange[]) {
    const stats = new Map<string, { additions: number; deletions: number } | null>();
    if (files.length === 0) return stats;
    const paths = [...new Set(files.flatMap((file) => [file.path, file.oldPath ?? file.path]))];
    const out = await git(
      id,
      ["diff-tree", "-r", "-z", "-M", "--numstat", "--end-of-options", from, to, "--", ...paths],
      undefined,
      LITERAL_PATHS,
    );
    const tokens = out.toString("utf8").split("\0");
    for (let i = 0; i < tokens.length; i++) {
      const [added = "", removed = "", path = ""] = (tokens[i] ?? "").split("\t");
      if (added === "" && removed === "") continue;
      // A rename leaves the path empty and gives the old and new path as the next two fields.
      const newPath = path === "" ? ((i += 2), tokens[i] ?? "") : path;
      stats.set(newPath, added === "-" ? null : { additions: Number(added), deletions: Number(removed) });
    }
    return stats;
  }

  return {
    /** The commit's parents, first parent first. */
    async parents(id: string, commit: string): Promise<string[]> {
      const out = await git(id, ["rev-list", "--parents", "-n1", "--end-of-options", commit]);
      return out.toString().trim().split(" ").slice(1).filter(Boolean);
    },

    /** What `commit` changed against `parent` (null: against nothing, for a first commit), within `limits`. */
    async diff(id: string, commit: string, parent: string | null, limits: DiffLimits): Promise<CommitDiff> {
      if (!HEX_OID.test(commit) || (parent !== null && !HEX_OID.test(parent)))
        throw new Error("A diff takes resolved commit ids.");
      const from = parent ?? (await git(id, ["hash-object", "-t", "tree", "--stdin"], "")).toString().trim();
      const raw = await git(id, [
        "diff-tree",
        "-r",
        "-z",
        "-M",
        "--raw",
        "--no-commit-id",
        "--end-of-options",
        from,
        commit,
      ]);
      const all = parseRawChanges(raw.toString("utf8"));
      const listed = all.slice(0, limits.maxFiles);
      const blobs = listed.flatMap((change) =>
        [
          change.oldMode === SUBMODULE_MODE ? null : change.oldOid,
          change.newMode === SUBMODULE_MODE ? null : change.newOid,
        ].filter((oid): oid is string => oid !== null),
      );
      const sizes = await sizesOf(id, [...new Set(blobs)]);
      const small = await contentsOf(
        id,
        blobs.filter((oid) => (sizes.get(oid) ?? Infinity) <= MAX_POINTER_SIZE),
      );
      const pointer = (oid: string | null) => {
        const content = oid ? small.get(oid) : undefined;
        return content ? parseLfsPointer(content) : null;
      };

      // Decide per file what is shown; text files are compared while the budget lasts.
      let budget = limits.maxTotalBytes;
      const files: DiffFile[] = [];
      const compared: Array<{ file: DiffFile; change: RawChange }> = [];
      const uncompared: Array<{ file: DiffFile; change: RawChange }> = [];
      for (const change of listed) {
        const oldSize = change.oldOid ? sizes.get(change.oldOid) : undefined;
        const newSize = change.newOid ? sizes.get(change.newOid) : undefined;
        const file: DiffFile = {
          path: change.path,
          ...(change.oldPath !== undefined ? { oldPath: change.oldPath } : {}),
          status: change.status,
          kind: "text",
          ...(oldSize !== undefined ? { oldSize } : {}),
          ...(newSize !== undefined ? { newSize } : {}),
        };
        files.push(file);
        if (change.oldMode === SUBMODULE_MODE || change.newMode === SUBMODULE_MODE) {
          file.kind = "binary";
          continue;
        }
        const oldPointer = pointer(change.oldOid);
        const newPointer = pointer(change.newOid);
        if (oldPointer || newPointer) {
          file.kind = "lfs";
          file.lfs = { old: oldPointer, new: newPointer };
          continue;
        }
        const largest = Math.max(oldSize ?? 0, newSize ?? 0);
        const weight = (oldSize ?? 0) + (newSize ?? 0);
        if (largest > limits.maxFileBytes) {
          file.omitted = "file_too_large";
          uncompared.push({ file, change });
        } else if (weight > budget) {
          file.omitted = "diff_too_large";
          uncompared.push({ file, change });
        } else {
          budget -= weight;
          compared.push({ file, change });
        }
      }

      const contents = await contentsOf(
        id,
        compared.flatMap(({ change }) =>
          [change.oldOid, change.newOid].filter((oid): oid is string => oid !== null),
        ),
      );
      const queue = [...compared];
      const worker = async () => {
        for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
          const { file, change } = next;
          const before = change.oldOid ? contents.get(change.oldOid) : undefined;
          const after = change.newOid ? contents.get(change.newOid) : undefined;
          if ((before && isBinary(before)) || (after && isBinary(after))) {
            file.kind = "binary";
            continue;
          }
          let hunks: DiffHunk[];
          if (!before) hunks = wholeFileHunk(after ?? Buffer.alloc(0), "added");
          else if (!after) hunks = wholeFileHunk(before, "removed");
          else if (change.oldOid === change.newOid) hunks = [];
          else {
            const patch = await git(id, [
              "diff",
              "--no-color",
              "--no-ext-diff",
              "--no-textconv",
              "-U3",
              "--end-of-options",
              change.oldOid ?? "",
              change.newOid ?? "",
            ]);
            hunks = parseUnifiedHunks(patch.toString("utf8"));
          }
          file.hunks = hunks;
          file.additions = count(hunks, "added");
          file.deletions = count(hunks, "removed");
        }
      };
      await Promise.all(Array.from({ length: DIFF_CONCURRENCY }, worker));

      const stats = await numstat(
        id,
        from,
        commit,
        uncompared.map(({ change }) => change),
      );
      for (const { file } of uncompared) {
        const stat = stats.get(file.path);
        if (stat === null) {
          file.kind = "binary";
          delete file.omitted;
        } else if (stat) {
          file.additions = stat.additions;
          file.deletions = stat.deletions;
        }
      }

      return {
        commit,
        parent,
        files,
        totalFiles: all.length,
        truncated: all.length > files.length,
        limits: { ...limits },
      };
    },
  };
}

export type CommitDiffReader = ReturnType<typeof createCommitDiff>;
