import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { runGit } from "./git-command.js";
import type { RefUpdate } from "../domain/repositories.js";
import { POST_RECEIVE_HOOK } from "./hooks/post-receive.js";
import { PRE_RECEIVE_HOOK } from "./hooks/pre-receive.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The identity the hub commits as when it writes to a repository itself. */
const HUB_IDENTITY = {
  GIT_AUTHOR_NAME: "Hub",
  GIT_AUTHOR_EMAIL: "hub@localhost",
  GIT_COMMITTER_NAME: "Hub",
  GIT_COMMITTER_EMAIL: "hub@localhost",
};

/**
 * Bare git repositories on local disk. A repository lives at a path derived
 * from its database id (`repositories/ab/<uuid>.git`), never from its name, so
 * renames move nothing and no name can reach outside the root.
 */
export function createRepoStorage(dataDir: string) {
  const root = path.join(dataDir, "repositories");
  const hooksDir = path.join(dataDir, "hooks");
  const pushRecords = path.join(dataDir, "tmp", "pushes");

  function pathOf(id: string): string {
    if (!UUID.test(id)) throw new Error(`Not a repository id: ${id}`);
    return path.join(root, id.slice(0, 2), `${id}.git`);
  }

  return {
    pathOf,
    /** The directory git's `core.hooksPath` points at for every push. */
    hooksDir,

    /**
     * Writes the hook scripts that enforce the push policy and record pushes; called once at start-up. Each is
     * replaced whole (rename), so a push another process runs meanwhile never reads a half-written policy.
     */
    async installHooks(): Promise<void> {
      await mkdir(hooksDir, { recursive: true });
      await mkdir(pushRecords, { recursive: true });
      for (const [name, script] of [
        ["pre-receive", PRE_RECEIVE_HOOK],
        ["post-receive", POST_RECEIVE_HOOK],
      ] as const) {
        // Written beside and renamed in: another process of the deployment may be running a push with it.
        const hook = path.join(hooksDir, name);
        const staged = `${hook}.${randomBytes(6).toString("hex")}.tmp`;
        await writeFile(staged, script);
        await chmod(staged, 0o755);
        await rename(staged, hook);
      }
    },

    /**
     * A place for one push's post-receive hook to list the refs it updated:
     * `env` goes to receive-pack, `updates()` reads (and removes) the list once
     * git has exited.
     */
    pushRecord() {
      const file = path.join(pushRecords, randomBytes(12).toString("hex"));
      return {
        env: { HUB_PUSH_RECORD: file },
        async updates(): Promise<RefUpdate[]> {
          const text = await readFile(file, "utf8").catch((err: NodeJS.ErrnoException) => {
            if (err.code === "ENOENT") return "";
            throw err;
          });
          await rm(file, { force: true });
          return text
            .split("\n")
            .map((line) => line.trim().split(" "))
            .filter((parts): parts is [string, string, string] => parts.length === 3)
            .map(([oldSha, newSha, ref]) => ({ ref, oldSha, newSha }));
        },
      };
    },

    /**
     * Creates a bare repository whose first commit on the default branch holds
     * the given files. It is built beside its final place and renamed in, so a
     * crash leaves either nothing or a whole repository.
     */
    async create(id: string, defaultBranch: string, files: Record<string, string>): Promise<void> {
      const target = pathOf(id);
      const staging = `${target}.creating-${randomBytes(4).toString("hex")}`;
      await mkdir(path.dirname(target), { recursive: true });
      try {
        await runGit(["init", "--bare", "--quiet", `--initial-branch=${defaultBranch}`, staging], {
          cwd: root,
        });
        for (const [key, value] of [
          ["receive.fsckObjects", "true"],
          ["uploadpack.allowFilter", "true"],
          ["core.logAllRefUpdates", "true"],
        ] as const) {
          await runGit(["config", key, value], { cwd: staging });
        }
        const entries: string[] = [];
        for (const [name, content] of Object.entries(files)) {
          const blob = (await runGit(["hash-object", "-w", "--stdin"], { cwd: staging, input: content }))
            .toString()
            .trim();
          entries.push(`100644 blob ${blob}\t${name}\n`);
        }
        const tree = (await runGit(["mktree"], { cwd: staging, input: entries.join("") })).toString().trim();
        const commit = (
          await runGit(["commit-tree", tree, "-m", "Initial commit"], { cwd: staging, env: HUB_IDENTITY })
        )
          .toString()
          .trim();
        await runGit(["update-ref", `refs/heads/${defaultBranch}`, commit], { cwd: staging });
        await rename(staging, target);
      } catch (err) {
        await rm(staging, { recursive: true, force: true });
        throw err;
      }
    },

    /**
     * Copies every branch and tag of one repository into another (replacing
     * the target's own) with git's local fetch, and returns the refs the
     * target then has with their commits.
     */
    async copyRefs(fromId: string, toId: string): Promise<Array<{ ref: string; sha: string }>> {
      await runGit(
        [
          "fetch",
          "--quiet",
          "--no-tags",
          "--force",
          "--end-of-options",
          pathOf(fromId),
          "+refs/heads/*:refs/heads/*",
          "+refs/tags/*:refs/tags/*",
        ],
        { cwd: pathOf(toId) },
      );
      const out = await runGit(
        ["for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags"],
        {
          cwd: pathOf(toId),
        },
      );
      return out
        .toString("utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          const [ref = "", sha = ""] = line.split(" ");
          return { ref, sha };
        });
    },

    /** Whether pushes may rewrite history (receive.denyNonFastForwards, which git enforces itself). */
    async setForcePushDenied(id: string, denied: boolean): Promise<void> {
      await runGit(["config", "receive.denyNonFastForwards", denied ? "true" : "false"], { cwd: pathOf(id) });
    },

    /** Removes a repository from disk: renamed away first, so it vanishes at once. */
    async remove(id: string): Promise<void> {
      const target = pathOf(id);
      const doomed = `${target}.deleting-${randomBytes(4).toString("hex")}`;
      await rename(target, doomed).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== "ENOENT") throw err;
      });
      await rm(doomed, { recursive: true, force: true });
    },

    /** The commit a ref resolves to, or null when the repository has no such ref. */
    async resolveRef(id: string, ref: string): Promise<string | null> {
      try {
        const out = await runGit(
          ["rev-parse", "--verify", "--quiet", "--end-of-options", `${ref}^{commit}`],
          {
            cwd: pathOf(id),
          },
        );
        return out.toString().trim() || null;
      } catch {
        return null;
      }
    },

    /** Every file path at a commit, for the repository info's siblings. */
    async listFiles(id: string, commit: string): Promise<string[]> {
      const out = await runGit(["ls-tree", "-r", "-z", "--name-only", "--end-of-options", commit], {
        cwd: pathOf(id),
      });
      return out.toString("utf8").split("\0").filter(Boolean);
    },
  };
}

export type RepoStorage = ReturnType<typeof createRepoStorage>;
