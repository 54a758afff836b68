import { spawn } from "node:child_process";
import { GitCommandError, gitEnvironment, runGit } from "./git-command.js";
import type { RepoStorage } from "./repo-storage.js";

/** The most of a pull request's diff a details answer carries. */
export const MAX_DIFF_BYTES = 2 * 1024 * 1024;

/** A merge git could not make without a person: the paths both sides changed differently. */
export class MergeConflictError extends Error {
  constructor(readonly paths: string[]) {
    super(`Merge conflicts in ${paths.join(", ")}`);
  }
}

/** The ref a pull request's commits live on. */
export function pullRequestRef(num: number): string {
  return `refs/pr/${num}`;
}

/** The pull request number a ref names, or null. */
export function pullRequestNumber(ref: string): number | null {
  const match = /^refs\/pr\/([1-9][0-9]{0,9})$/.exec(ref);
  return match ? Number(match[1]) : null;
}

/**
 * What pull requests need of git, all without a work tree: the commits a pull
 * request adds, its diff against the target, conflicts, and merging it with
 * git's own merge machinery (`merge-tree --write-tree`, git 2.38 and newer).
 */
export function createPullRequestGit(storage: RepoStorage) {
  const git = (id: string, args: string[], input?: string, env?: Record<string, string>) =>
    runGit(args, { cwd: storage.pathOf(id), input, env });

  async function mergeBase(id: string, a: string, b: string): Promise<string | null> {
    try {
      return (await git(id, ["merge-base", "--end-of-options", a, b])).toString().trim() || null;
    } catch (err) {
      if (err instanceof GitCommandError && err.exitCode === 1) return null;
      throw err;
    }
  }

  /**
   * `merge-tree --write-tree`: the merged tree, or the conflicting paths. Exit
   * status 1 is a merge with conflicts, and its output (the tree, then the
   * conflicting paths, then an empty field and messages) is still on stdout.
   */
  function mergeTree(
    id: string,
    base: string,
    head: string,
  ): Promise<{ tree: string | null; conflicts: string[] }> {
    const args = ["merge-tree", "--write-tree", "--name-only", "-z", "--end-of-options", base, head];
    return new Promise((resolve, reject) => {
      const child = spawn("git", args, {
        cwd: storage.pathOf(id),
        env: gitEnvironment(),
        stdio: ["ignore", "pipe", "pipe"],
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
      child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
      child.once("error", reject);
      child.once("close", (code) => {
        const fields = Buffer.concat(out).toString("utf8").split("\0");
        if (code === 0) return resolve({ tree: fields[0] ?? "", conflicts: [] });
        if (code !== 1) return reject(new GitCommandError(args, code, Buffer.concat(err).toString("utf8")));
        const end = fields.indexOf("", 1);
        resolve({ tree: null, conflicts: [...new Set(fields.slice(1, end === -1 ? undefined : end))] });
      });
    });
  }

  return {
    mergeBase,

    /** Commits on `head` and not on `base`, oldest first, with their subjects. */
    async commitsBetween(
      id: string,
      base: string | null,
      head: string,
    ): Promise<Array<{ oid: string; subject: string }>> {
      // Both ends are commit ids the hub resolved, so the range expression is git's and nobody else's.
      const range = base ? [`${base}..${head}`] : [head];
      const out = await git(id, ["log", "--reverse", "--format=%H%x1f%s", "--end-of-options", ...range]);
      return out
        .toString("utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          const [oid = "", subject = ""] = line.split("\x1f");
          return { oid, subject };
        });
    },

    /** Whether `ancestor` is in the history of `commit`. */
    async isAncestor(id: string, ancestor: string, commit: string): Promise<boolean> {
      try {
        await git(id, ["merge-base", "--is-ancestor", "--end-of-options", ancestor, commit]);
        return true;
      } catch (err) {
        if (err instanceof GitCommandError && err.exitCode === 1) return false;
        throw err;
      }
    },

    /** The unified diff a pull request makes (from its merge base with the target), cut at MAX_DIFF_BYTES. */
    async diff(id: string, base: string, head: string): Promise<{ text: string; truncated: boolean }> {
      const from = (await mergeBase(id, base, head)) ?? base;
      const out = await git(id, [
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--full-index",
        "--end-of-options",
        from,
        head,
      ]);
      if (out.length <= MAX_DIFF_BYTES) return { text: out.toString("utf8"), truncated: false };
      const cut = out.subarray(0, MAX_DIFF_BYTES);
      const lastLine = cut.lastIndexOf(0x0a);
      return { text: cut.subarray(0, lastLine + 1).toString("utf8"), truncated: true };
    },

    /** The files merging `head` into `base` would conflict on (none when it merges cleanly). */
    async conflicts(id: string, base: string, head: string): Promise<string[]> {
      return (await mergeTree(id, base, head)).conflicts;
    },

    /**
     * The commit a merge of `head` into `base` makes: `head` itself when the
     * target can fast-forward, else a merge commit git writes without a work
     * tree. Throws MergeConflictError naming the files when git cannot merge.
     * Moves nothing: the caller moves the branch by compare-and-swap.
     */
    async merge(
      id: string,
      input: { base: string; head: string; message: string; committer: { name: string; email: string } },
    ): Promise<{ commit: string; fastForward: boolean }> {
      if (await this.isAncestor(id, input.base, input.head)) return { commit: input.head, fastForward: true };
      const { tree, conflicts } = await mergeTree(id, input.base, input.head);
      if (tree === null) throw new MergeConflictError(conflicts);
      const env = {
        GIT_AUTHOR_NAME: input.committer.name,
        GIT_AUTHOR_EMAIL: input.committer.email,
        GIT_COMMITTER_NAME: input.committer.name,
        GIT_COMMITTER_EMAIL: input.committer.email,
      };
      const commit = (
        await git(
          id,
          ["commit-tree", tree, "-p", input.base, "-p", input.head, "-F", "-"],
          input.message,
          env,
        )
      )
        .toString()
        .trim();
      return { commit, fastForward: false };
    },
  };
}

export type PullRequestGit = ReturnType<typeof createPullRequestGit>;
