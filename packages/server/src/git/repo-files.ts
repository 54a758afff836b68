import { randomBytes } from "node:crypto";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { GitCommandError, runGit } from "./git-command.js";
import { MAX_POINTER_SIZE, parseLfsPointer } from "./lfs-pointer.js";
import { gitattributesProblem, gitmodulesProblem, pathProblem, specialFileOf } from "./path-rules.js";
import type { RepoStorage } from "./repo-storage.js";

/** A file or directory of a commit's tree, as the tree and paths-info APIs show it. */
export interface TreeEntry {
  type: "file" | "directory";
  path: string;
  /** The git blob or tree id. */
  oid: string;
  size: number;
  lfs?: { oid: string; size: number; pointerSize: number };
}

/** One change of a commit made through the HTTP API. */
export type FileOperation =
  | { kind: "write"; path: string; content: Buffer }
  | { kind: "delete"; path: string }
  | { kind: "deleteFolder"; path: string };

export class BranchMovedError extends Error {}
/** A path git would refuse in a tree (or drop from it); nothing was written to the branch. */
export class RejectedPathError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path}: ${reason}`);
  }
}
export class MissingEntryError extends Error {
  constructor(readonly path: string) {
    super(`A file with this name doesn't exist: ${path}`);
  }
}

/** A commit as the history lists it. */
export interface LogEntry {
  id: string;
  authorName: string;
  authorEmail: string;
  date: string;
  message: string;
}

/** The commit that last changed a path, as `expand=true` on trees and paths-info shows it. */
export interface LastCommit {
  id: string;
  title: string;
  date: string;
}

/** How many `git log` processes one request runs at once to find last commits. */
const LAST_COMMIT_CONCURRENCY = 4;

/** The object id git uses for "no object": a ref that did not exist before, or no longer does. */
export const ZERO_OID = "0".repeat(40);

/** The caller as git's author and committer. */
function identityEnv(author: { name: string; email: string }): Record<string, string> {
  return {
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_COMMITTER_NAME: author.name,
    GIT_COMMITTER_EMAIL: author.email,
  };
}
const LITERAL_PATHS = { GIT_LITERAL_PATHSPECS: "1" };

/** Reads trees and blobs of a repository, and commits to it without a work tree. */
export function createRepoFiles(storage: RepoStorage, scratchDir: string) {
  const git = (id: string, args: string[], input?: string | Buffer, env?: Record<string, string>) =>
    runGit(args, { cwd: storage.pathOf(id), input, env });

  /**
   * Refuses, before anything is written, a file git's fsck would refuse: a
   * path it will not store, a `.gitmodules` that would make git run an option
   * or a command, a `.gitattributes` line git will not read.
   */
  async function checkWrite(id: string, file: string, content: Buffer): Promise<void> {
    const problem = pathProblem(file);
    if (problem) throw new RejectedPathError(file, problem);
    const special = specialFileOf(file.slice(file.lastIndexOf("/") + 1));
    if (special === ".gitattributes") {
      const attributes = gitattributesProblem(content);
      if (attributes) throw new RejectedPathError(file, attributes);
    }
    if (special === ".gitmodules") {
      // git's own config parser reads it, so what is checked is what git would use.
      let listed: Buffer;
      try {
        listed = await git(id, ["config", "--file", "-", "--list", "-z"], content);
      } catch (err) {
        if (err instanceof GitCommandError)
          throw new RejectedPathError(file, "git cannot parse it as a .gitmodules file");
        throw err;
      }
      const entries = listed
        .toString("utf8")
        .split("\0")
        .filter(Boolean)
        .map((entry) => {
          const newline = entry.indexOf("\n");
          return newline === -1
            ? { key: entry, value: "" }
            : { key: entry.slice(0, newline), value: entry.slice(newline + 1) };
        });
      const modules = gitmodulesProblem(entries);
      if (modules) throw new RejectedPathError(file, modules);
    }
  }

  /** Raw object contents (blobs, commits) by id, in one git process. */
  async function readObjects(id: string, oids: string[]): Promise<Map<string, Buffer>> {
    if (oids.length === 0) return new Map();
    const out = await git(id, ["cat-file", "--batch"], oids.join("\n") + "\n");
    const objects = new Map<string, Buffer>();
    let offset = 0;
    for (const oid of oids) {
      const newline = out.indexOf(10, offset);
      const [, , size] = out.subarray(offset, newline).toString().split(" ");
      const start = newline + 1;
      const end = start + Number(size);
      objects.set(oid, out.subarray(start, end));
      offset = end + 1;
    }
    return objects;
  }

  /** Adds the LFS object each small blob points to, if it is a pointer. */
  async function withLfs(id: string, entries: TreeEntry[]): Promise<TreeEntry[]> {
    const small = entries.filter((e) => e.type === "file" && e.size <= MAX_POINTER_SIZE).map((e) => e.oid);
    if (small.length === 0) return entries;
    const blobs = await readObjects(id, [...new Set(small)]);
    return entries.map((entry) => {
      const pointer =
        entry.type === "file" && entry.size <= MAX_POINTER_SIZE
          ? parseLfsPointer(blobs.get(entry.oid) ?? "")
          : null;
      return pointer
        ? {
            ...entry,
            size: pointer.size,
            lfs: { oid: pointer.oid, size: pointer.size, pointerSize: entry.size },
          }
        : entry;
    });
  }

  /** Commits of the history of a commit, newest first, without counting them all. */
  async function logEntries(id: string, commit: string, skip: number, limit: number): Promise<LogEntry[]> {
    const out = await git(id, [
      "log",
      "-z",
      `--skip=${skip}`,
      `-n${limit}`,
      "--format=%H%x1f%an%x1f%ae%x1f%aI%x1f%B",
      "--end-of-options",
      commit,
    ]);
    return out
      .toString("utf8")
      .split("\0")
      .filter(Boolean)
      .map((record) => {
        const [sha = "", name = "", email = "", date = "", message = ""] = record.split("\x1f");
        return { id: sha, authorName: name, authorEmail: email, date, message: message.trimEnd() };
      });
  }

  function parseLsTree(out: Buffer, prefix: string): TreeEntry[] {
    return out
      .toString("utf8")
      .split("\0")
      .filter(Boolean)
      .map((line) => {
        const tab = line.indexOf("\t");
        const [, type, oid, size] = line.slice(0, tab).split(/\s+/);
        const name = line.slice(tab + 1);
        return {
          type: type === "tree" ? ("directory" as const) : ("file" as const),
          path: prefix ? `${prefix}/${name}` : name,
          oid: oid ?? "",
          size: type === "tree" ? 0 : Number(size),
        };
      })
      .filter((entry) => entry.oid.length > 0);
  }

  return {
    /**
     * The entries under `dir` at a commit (all of them, depth first, when
     * recursive); null when `dir` is not a directory there.
     */
    async listTree(id: string, commit: string, dir: string, recursive: boolean): Promise<TreeEntry[] | null> {
      const treeish = dir ? `${commit}:${dir}` : `${commit}^{tree}`;
      let out: Buffer;
      try {
        out = await git(id, [
          "ls-tree",
          "-z",
          "-l",
          ...(recursive ? ["-r", "-t"] : []),
          "--end-of-options",
          treeish,
        ]);
      } catch (err) {
        if (err instanceof GitCommandError) return null;
        throw err;
      }
      return withLfs(id, parseLsTree(out, dir));
    },

    /** The entries at exactly these paths of a commit; missing paths are left out. */
    async pathsInfo(id: string, commit: string, paths: string[]): Promise<TreeEntry[]> {
      if (paths.length === 0) return [];
      const out = await git(
        id,
        ["ls-tree", "-z", "-l", "--end-of-options", commit, "--", ...paths],
        undefined,
        LITERAL_PATHS,
      );
      return withLfs(id, parseLsTree(out, ""));
    },

    /** Branches, tags, conversions and pull-request refs with the commits they point to (tags peeled). */
    async refs(id: string): Promise<Array<{ ref: string; commit: string }>> {
      const out = await git(id, [
        "for-each-ref",
        "--format=%(refname)%00%(objectname)%00%(*objectname)",
        "refs/heads",
        "refs/tags",
        "refs/convert",
        "refs/pr",
      ]);
      return out
        .toString("utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          const [ref = "", object = "", peeled = ""] = line.split("\0");
          return { ref, commit: peeled || object };
        });
    },

    /** Creates or moves a ref; `expected` is the value it must have now (all zeros: must not exist). */
    async setRef(id: string, ref: string, commit: string, expected: string | null): Promise<void> {
      await git(id, ["update-ref", ref, commit, ...(expected === null ? [] : [expected])]);
    },

    /** A parentless commit with no files, for an empty branch. */
    async emptyCommit(id: string, message: string, author: { name: string; email: string }): Promise<string> {
      const tree = (await git(id, ["mktree"], "")).toString().trim();
      return (await git(id, ["commit-tree", tree, "-F", "-"], `${message}\n`, identityEnv(author)))
        .toString()
        .trim();
    },

    /** The object a ref names, unpeeled (a tag object for annotated tags). */
    async resolveObject(id: string, ref: string): Promise<string | null> {
      try {
        return (
          (await git(id, ["rev-parse", "--verify", "--quiet", "--end-of-options", ref])).toString().trim() ||
          null
        );
      } catch {
        return null;
      }
    },

    async deleteRef(id: string, ref: string, expected: string): Promise<void> {
      await git(id, ["update-ref", "-d", ref, expected]);
    },

    /** Whether git accepts the name as a ref (https://git-scm.com/docs/git-check-ref-format). */
    async validRefName(id: string, ref: string): Promise<boolean> {
      try {
        await git(id, ["check-ref-format", ref]);
        return true;
      } catch {
        return false;
      }
    },

    /** Creates an annotated tag object and returns its id. */
    async createTagObject(
      id: string,
      input: { tag: string; commit: string; message: string; tagger: { name: string; email: string } },
    ): Promise<string> {
      const now = Math.floor(Date.now() / 1000);
      const text = `object ${input.commit}\ntype commit\ntag ${input.tag}\ntagger ${input.tagger.name} <${input.tagger.email}> ${now} +0000\n\n${input.message}\n`;
      return (await git(id, ["mktag"], text)).toString().trim();
    },

    /** A page of the history of a commit, newest first, and how many commits it has in all. */
    async log(id: string, commit: string, skip: number, limit: number) {
      const [countOut, commits] = await Promise.all([
        git(id, ["rev-list", "--count", "--end-of-options", commit]),
        logEntries(id, commit, skip, limit),
      ]);
      return { total: Number(countOut.toString().trim()), commits };
    },

    logEntries,

    /**
     * The commit that last changed each path (a file, or anything under a
     * folder) in the history of a commit, with git's own history
     * simplification; a path no commit touched is left out.
     */
    async lastCommits(id: string, commit: string, paths: string[]): Promise<Map<string, LastCommit>> {
      const found = new Map<string, LastCommit>();
      const queue = [...new Set(paths)];
      const worker = async () => {
        for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
          const out = await git(
            id,
            ["log", "-1", "--format=%H%x1f%s%x1f%cI", "--end-of-options", commit, "--", next],
            undefined,
            LITERAL_PATHS,
          );
          const [sha = "", title = "", date = ""] = out.toString("utf8").trim().split("\x1f");
          // The clients parse dates in UTC with milliseconds (`…T01:02:03.000Z`).
          if (sha) found.set(next, { id: sha, title, date: new Date(date).toISOString() });
        }
      };
      await Promise.all(Array.from({ length: LAST_COMMIT_CONCURRENCY }, worker));
      return found;
    },

    /** The files that differ between two commits (no rename detection), as git's status letter and path. */
    async changedPaths(id: string, from: string, to: string): Promise<{ status: string; path: string }[]> {
      const out = (
        await git(id, [
          "diff-tree",
          "-r",
          "-z",
          "--no-renames",
          "--name-status",
          "--end-of-options",
          from,
          to,
        ])
      )
        .toString("utf8")
        .split("\0");
      const changes: { status: string; path: string }[] = [];
      for (let i = 0; i + 1 < out.length; i += 2)
        changes.push({ status: out[i] ?? "", path: out[i + 1] ?? "" });
      return changes;
    },

    /** Raw commit objects by id, in one git process: what signature checks read. */
    rawCommits: (id: string, commits: string[]) => readObjects(id, commits),

    /** The content of a blob. */
    async readBlob(id: string, oid: string): Promise<Buffer> {
      return (await readObjects(id, [oid])).get(oid) ?? Buffer.alloc(0);
    },

    /**
     * Commits the operations on top of the branch head and moves the branch,
     * only if it still points where it did (compare-and-swap), so concurrent
     * writers serialize and the loser learns it lost rather than overwriting.
     */
    async commit(
      id: string,
      input: {
        branch: string;
        head: string;
        /** The ref to move, when not the branch (`refs/pr/{num}`), and the value it must have now. */
        target?: { ref: string; expected: string };
        message: string;
        author: { name: string; email: string };
        operations: FileOperation[];
      },
    ): Promise<string> {
      await mkdir(scratchDir, { recursive: true });
      const index = path.join(scratchDir, `index-${randomBytes(8).toString("hex")}`);
      const env = { ...LITERAL_PATHS, GIT_INDEX_FILE: index };
      try {
        await git(id, ["read-tree", input.head], undefined, env);
        const lines: string[] = [];
        const written: string[] = [];
        for (const operation of input.operations) {
          if (operation.kind === "write") {
            await checkWrite(id, operation.path, operation.content);
            const blob = (await git(id, ["hash-object", "-w", "--stdin"], operation.content))
              .toString()
              .trim();
            lines.push(`100644 ${blob}\t${operation.path}`);
            written.push(operation.path);
            continue;
          }
          const pathspec =
            operation.kind === "deleteFolder" ? `${operation.path.replace(/\/$/, "")}/` : operation.path;
          const present = (await git(id, ["ls-files", "-z", "--", pathspec], undefined, env))
            .toString()
            .split("\0")
            .filter(Boolean);
          const exact = operation.kind === "delete" ? present.filter((p) => p === operation.path) : present;
          if (exact.length === 0) throw new MissingEntryError(operation.path);
          for (const file of exact) lines.push(`0 ${ZERO_OID}\t${file}`);
        }
        if (lines.length > 0)
          await git(id, ["update-index", "-z", "--index-info"], lines.join("\0") + "\0", env);
        if (written.length > 0) {
          // git skips, with only a warning, a path it will not check out; a path the caller sent is never dropped silently.
          const indexed = new Set((await git(id, ["ls-files", "-z"], undefined, env)).toString().split("\0"));
          const dropped = written.find((file) => !indexed.has(file));
          if (dropped !== undefined) throw new RejectedPathError(dropped, "git refuses to store this path");
        }
        const tree = (await git(id, ["write-tree"], undefined, env)).toString().trim();
        const commit = (
          await git(
            id,
            ["commit-tree", tree, "-p", input.head, "-F", "-"],
            input.message,
            identityEnv(input.author),
          )
        )
          .toString()
          .trim();
        try {
          const target = input.target ?? { ref: `refs/heads/${input.branch}`, expected: input.head };
          await git(id, ["update-ref", target.ref, commit, target.expected]);
        } catch (err) {
          if (err instanceof GitCommandError)
            throw new BranchMovedError(`Branch ${input.branch} moved while committing.`);
          throw err;
        }
        return commit;
      } finally {
        await rm(index, { force: true });
      }
    },
  };
}

export type RepoFiles = ReturnType<typeof createRepoFiles>;
