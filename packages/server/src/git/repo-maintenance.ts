import { randomBytes } from "node:crypto";
import { mkdir, readdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import { GitCommandError, runGit } from "./git-command.js";
import { MAX_POINTER_SIZE, parseLfsPointer } from "./lfs-pointer.js";
import type { RepoStorage } from "./repo-storage.js";

/** Where an LFS object is used: the first path a pointer to it was found at, and the pointer's blob. */
export interface LfsUse {
  path: string;
  blob: string;
}

/** The refs whose history the hub keeps: branches, tags, conversions and pull requests. */
const KEPT_REFS = ["refs/heads", "refs/tags", "refs/convert", "refs/pr"];

/** A ref moved while history was rewritten; nothing was changed. */
export class HistoryMovedError extends Error {}

/** Storage upkeep of a repository: what its history points to in LFS, its size on disk, and rewriting history. */
export function createRepoMaintenance(storage: RepoStorage, scratchDir: string) {
  const git = (id: string, args: string[], input?: string | Buffer, env?: Record<string, string>) =>
    runGit(args, { cwd: storage.pathOf(id), input, env });

  /** The refs the hub keeps, with the objects they name (annotated tags unpeeled). */
  async function keptRefs(id: string): Promise<Array<{ ref: string; object: string; type: string }>> {
    const out = await git(id, [
      "for-each-ref",
      "--format=%(refname)%00%(objectname)%00%(objecttype)",
      ...KEPT_REFS,
    ]);
    return out
      .toString("utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const [ref = "", object = "", type = ""] = line.split("\0");
        return { ref, object, type };
      });
  }

  /** Blobs small enough to be pointers, among `oid path` lines, read in one process, parsed. */
  async function pointersAmong(id: string, listed: Array<{ oid: string; path: string }>) {
    const uses = new Map<string, LfsUse>();
    if (listed.length === 0) return uses;
    const checked = (
      await git(
        id,
        ["cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"],
        listed.map((entry) => entry.oid).join("\n") + "\n",
      )
    )
      .toString("utf8")
      .split("\n");
    const candidates = listed.filter((_, index) => {
      const [, type, size] = (checked[index] ?? "").split(" ");
      return type === "blob" && Number(size) <= MAX_POINTER_SIZE;
    });
    if (candidates.length === 0) return uses;
    const out = await git(id, ["cat-file", "--batch"], candidates.map((c) => c.oid).join("\n") + "\n");
    let offset = 0;
    for (const candidate of candidates) {
      const newline = out.indexOf(10, offset);
      const size = Number(out.subarray(offset, newline).toString().split(" ")[2]);
      const start = newline + 1;
      const pointer = parseLfsPointer(out.subarray(start, start + size));
      offset = start + size + 1;
      if (pointer && !uses.has(pointer.oid))
        uses.set(pointer.oid, { path: candidate.path, blob: candidate.oid });
    }
    return uses;
  }

  /** Rewrites a commit object onto a new tree and parents, keeping its authorship, dates and message; drops any signature. */
  function rewrittenCommit(raw: string, tree: string, parents: string[]): string {
    const split = raw.indexOf("\n\n");
    const headers = (split === -1 ? raw : raw.slice(0, split)).split("\n");
    const message = split === -1 ? "" : raw.slice(split);
    const kept: string[] = [`tree ${tree}`, ...parents.map((parent) => `parent ${parent}`)];
    let inSignature = false;
    for (const header of headers) {
      if (header.startsWith(" ")) {
        if (!inSignature) kept.push(header);
        continue;
      }
      inSignature = header.startsWith("gpgsig");
      if (inSignature || header.startsWith("tree ") || header.startsWith("parent ")) continue;
      kept.push(header);
    }
    return `${kept.join("\n")}${message}`;
  }

  return {
    /**
     * The LFS objects the kept refs point to: `reachable` through any commit
     * of their history, or `tips` in the trees the refs name now.
     */
    async lfsUses(id: string, scope: "reachable" | "tips"): Promise<Map<string, LfsUse>> {
      const refs = await keptRefs(id);
      if (refs.length === 0) return new Map();
      const listed: Array<{ oid: string; path: string }> = [];
      if (scope === "reachable") {
        // `rev-list --objects` prints "oid path" for every tree and blob of the history, each once.
        const out = await git(
          id,
          ["rev-list", "--objects", "--stdin"],
          refs.map((r) => r.object).join("\n") + "\n",
        );
        for (const line of out.toString("utf8").split("\n")) {
          const space = line.indexOf(" ");
          if (space > 0 && space < line.length - 1)
            listed.push({ oid: line.slice(0, space), path: line.slice(space + 1) });
        }
      } else {
        for (const { object } of refs) {
          const out = await git(id, ["ls-tree", "-r", "-z", "--end-of-options", `${object}^{tree}`]);
          for (const line of out.toString("utf8").split("\0").filter(Boolean)) {
            const tab = line.indexOf("\t");
            const [, type, oid] = line.slice(0, tab).split(" ");
            if (type === "blob" && oid) listed.push({ oid, path: line.slice(tab + 1) });
          }
        }
      }
      return pointersAmong(id, listed);
    },

    /** Bytes the repository's git directory takes on disk. */
    async diskUsage(id: string): Promise<number> {
      let total = 0;
      const pending = [storage.pathOf(id)];
      for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
        const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
        for (const entry of entries) {
          const full = path.join(dir, entry.name);
          if (entry.isDirectory()) pending.push(full);
          else if (entry.isFile()) total += (await stat(full)).size;
        }
      }
      return total;
    },

    /** Whether pushes may not rewrite history (the repository's denyForcePush setting). */
    async forcePushDenied(id: string): Promise<boolean> {
      try {
        const out = await git(id, ["config", "--bool", "--get", "receive.denyNonFastForwards"]);
        return out.toString().trim() === "true";
      } catch (err) {
        if (err instanceof GitCommandError && err.exitCode === 1) return false;
        throw err;
      }
    },

    /**
     * Replaces a branch's history by one parentless commit holding its files,
     * if the branch still points at `head`; returns the new commit.
     */
    async squash(
      id: string,
      input: { branch: string; head: string; message: string; author: { name: string; email: string } },
    ): Promise<string> {
      const env = {
        GIT_AUTHOR_NAME: input.author.name,
        GIT_AUTHOR_EMAIL: input.author.email,
        GIT_COMMITTER_NAME: input.author.name,
        GIT_COMMITTER_EMAIL: input.author.email,
      };
      const commit = (
        await git(id, ["commit-tree", `${input.head}^{tree}`, "-F", "-"], `${input.message}\n`, env)
      )
        .toString()
        .trim();
      try {
        await git(id, ["update-ref", `refs/heads/${input.branch}`, commit, input.head]);
      } catch (err) {
        if (err instanceof GitCommandError) throw new HistoryMovedError(input.branch);
        throw err;
      }
      return commit;
    },

    /**
     * Rewrites the history of every kept ref without the given blobs (LFS
     * pointers to objects being deleted): each commit that held one is
     * recreated without it, with its authorship, dates and message, and the
     * commits after it onto the new ones. All refs move in one transaction,
     * each only if it has not moved meanwhile. Returns the refs that moved.
     */
    async rewriteWithout(
      id: string,
      blobs: Set<string>,
    ): Promise<Array<{ ref: string; oldSha: string; newSha: string }>> {
      const refs = await keptRefs(id);
      if (refs.length === 0 || blobs.size === 0) return [];
      const order = (
        await git(
          id,
          ["rev-list", "--reverse", "--topo-order", "--parents", "--stdin"],
          refs.map((r) => r.object).join("\n") + "\n",
        )
      )
        .toString("utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => line.split(" "));
      await mkdir(scratchDir, { recursive: true });
      const index = path.join(scratchDir, `rewrite-${randomBytes(8).toString("hex")}`);
      const rewritten = new Map<string, string>();
      try {
        for (const [commit = "", ...parents] of order) {
          const newParents = parents.map((parent) => rewritten.get(parent) ?? parent);
          const listing = (await git(id, ["ls-tree", "-r", "-z", "--end-of-options", commit]))
            .toString("utf8")
            .split("\0")
            .filter(Boolean);
          const doomed = listing
            .filter((line) => blobs.has(line.slice(0, line.indexOf("\t")).split(" ")[2] ?? ""))
            .map((line) => line.slice(line.indexOf("\t") + 1));
          const parentsChanged = newParents.some((parent, i) => parent !== parents[i]);
          if (doomed.length === 0 && !parentsChanged) continue;
          const raw = (await git(id, ["cat-file", "commit", commit])).toString("utf8");
          let tree = /^tree ([0-9a-f]+)$/m.exec(raw)?.[1] ?? "";
          if (doomed.length > 0) {
            const env = { GIT_INDEX_FILE: index, GIT_LITERAL_PATHSPECS: "1" };
            await git(id, ["read-tree", commit], undefined, env);
            // Mode 0 removes an index entry; git needs no work tree for it.
            await git(
              id,
              ["update-index", "-z", "--index-info"],
              doomed.map((file) => `0 ${"0".repeat(40)}\t${file}`).join("\0") + "\0",
              env,
            );
            tree = (await git(id, ["write-tree"], undefined, env)).toString().trim();
          }
          const created = (
            await git(
              id,
              ["hash-object", "-t", "commit", "-w", "--stdin"],
              rewrittenCommit(raw, tree, newParents),
            )
          )
            .toString()
            .trim();
          rewritten.set(commit, created);
        }
      } finally {
        await rm(index, { force: true });
      }
      const moves: Array<{ ref: string; oldSha: string; newSha: string }> = [];
      for (const { ref, object, type } of refs) {
        if (type === "commit") {
          const moved = rewritten.get(object);
          if (moved) moves.push({ ref, oldSha: object, newSha: moved });
          continue;
        }
        if (type !== "tag") continue;
        // An annotated tag is recreated on the rewritten commit, with its tagger and message (its signature no longer holds).
        const raw = (await git(id, ["cat-file", "tag", object])).toString("utf8");
        const target = /^object ([0-9a-f]+)$/m.exec(raw)?.[1] ?? "";
        const moved = rewritten.get(target);
        if (!moved) continue;
        const unsigned = raw
          .replace(/^object [0-9a-f]+$/m, `object ${moved}`)
          .replace(/-----BEGIN PGP SIGNATURE-----[\s\S]*$/, "");
        const tag = (await git(id, ["hash-object", "-t", "tag", "-w", "--stdin"], unsigned))
          .toString()
          .trim();
        moves.push({ ref, oldSha: object, newSha: tag });
      }
      if (moves.length === 0) return [];
      const transaction = [
        "start",
        ...moves.map((m) => `update ${m.ref} ${m.newSha} ${m.oldSha}`),
        "commit",
        "",
      ];
      try {
        await git(id, ["update-ref", "--stdin"], transaction.join("\n"));
      } catch (err) {
        if (err instanceof GitCommandError) throw new HistoryMovedError(err.stderr);
        throw err;
      }
      return moves;
    },
  };
}

export type RepoMaintenance = ReturnType<typeof createRepoMaintenance>;
