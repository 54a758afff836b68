import type { Principal } from "../../../auth/credential.js";
import { cachedRead } from "../../../db/cached-read.js";
import type { Db, DbOrTx } from "../../../db/database.js";
import type { WriteLocks } from "../../../db/write-locks.js";
import { HubError, badRequest, entryNotFound, revisionNotFound } from "../../../errors.js";

import { lfsMatcher } from "../../../git/gitattributes.js";
import { lfsObjectsRepository } from "../../../git/lfs/lfs-objects.repository.js";
import type { ObjectStore } from "../../../git/lfs/object-store.js";
import { MAX_POINTER_SIZE, lfsPointer, parseLfsPointer } from "../../../git/lfs-pointer.js";
import type { ObjectReader } from "../../../git/object-reader.js";
import { pathProblem } from "../../../git/path-rules.js";
import {
  BranchMovedError,
  MissingEntryError,
  RejectedPathError,
  type FileOperation,
  type RepoFiles,
  type TreeEntry,
} from "../../../git/repo-files.js";
import type { RepoStorage } from "../../../git/repo-storage.js";
import { usersRepository } from "../../accounts/account/users.repository.js";
import type { ReposService } from "../repos/repos.service.js";
import type { FoundRepo } from "../../../domain/repositories.js";
import type { PullRequests } from "../../../domain/pull-requests.js";
import { pullRequestNumber } from "../../../git/pull-requests.js";
import { ZERO_OID } from "../../../git/repo-files.js";

/** What may name a revision: a ref name or commit id, never an expression git would evaluate over the history. */
/** Up to this many paths, paths-info reads each through the object reader instead of spawning `ls-tree`. */
const READER_PATHS = 64;
const REVISION = /^(?!-)(?!.*@\{)(?!.*\.\.)[^\s:\\^~?*[\0]{1,255}$/;

const BRANCH_NAME = /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*\.lock$)[A-Za-z0-9._/-]{1,200}(?<!\/)$/;

/** Whether a path can name a file or folder of a repository: relative, inside it, not git's own directory. */
export function isRepositoryPath(path: string): boolean {
  const parts = path.split("/");
  return (
    path.length > 0 &&
    path.length <= 1024 &&
    !path.startsWith("/") &&
    !path.includes("\0") &&
    !parts.some((part) => part === "" || part === "." || part === ".." || part.toLowerCase() === ".git")
  );
}

/** The 400 for a path git would refuse to store, naming the path and why. */
function rejectedPath(path: string, reason: string, field?: string): HubError {
  return badRequest(
    "invalid_path",
    `${quoted(path)} cannot be stored: ${reason}. Nothing was committed.`,
    field,
  );
}

/** A path quoted for a message, cut to a readable length. */
function quoted(path: string): string {
  return JSON.stringify(path.length > 200 ? `${path.slice(0, 200)}…` : path);
}

/** Rejects, before anything is written, a path git would refuse to store in a tree (see git/path-rules.ts). */
export function checkWritePath(path: string, field = "path"): string {
  const problem = pathProblem(path);
  if (problem) throw rejectedPath(path, problem, field);
  return path;
}

/** Rejects a repository path that is empty, absolute, climbs out, or names git's own directory. */
export function checkPath(path: string, field = "path"): string {
  if (!isRepositoryPath(path)) {
    throw badRequest(
      "invalid_path",
      `"${path}" is not a valid file path: use relative paths without "", ".", ".." or ".git" segments.`,
      field,
    );
  }
  return path;
}

/** One line of the NDJSON commit body, as the Hugging Face clients send it. */
interface CommitLine {
  key?: unknown;
  value?: Record<string, unknown>;
}

export interface FilesServiceDeps {
  db: Db;
  /** Long-lived object lookups for the read path (revisions, entries, blobs). */
  reader: ObjectReader;
  repos: ReposService;
  storage: RepoStorage;
  files: RepoFiles;
  store: ObjectStore;
  maxGitBlobBytes: number;
  /** Who may write to `refs/pr/{num}`, and opening pull requests for `create_pr`. */
  pullRequests: PullRequests;
  /** Serializes writes to one repository across every process of the deployment. */
  writeLocks: WriteLocks;
}

/** How often a commit is rebuilt on a head a push moved while it was made, before it answers 409. */
const COMMIT_ATTEMPTS = 4;

/** The Hugging Face-compatible file API over a repository: revisions, trees, preupload, commits and downloads. */
export function createFilesService({
  db,
  reader,
  repos,
  storage,
  files,
  store,
  maxGitBlobBytes,
  pullRequests,
  writeLocks,
}: FilesServiceDeps) {
  /**
   * The commit a revision names, or null. A revision is a ref name, a
   * commit id or `HEAD` (the default branch); nothing git would read as an
   * expression over the history (`:/text`, `a:b`) is looked up.
   */
  async function commitOf(repo: FoundRepo, revision: string): Promise<string | null> {
    const ref = revision === "HEAD" || revision === "" ? repo.row.default_branch : revision;
    if (!REVISION.test(ref)) return null;
    return cachedCommit(db, repo.row.id, ref);
  }

  /*
   * What a revision names, and a commit's file, are kept until the database
   * next notes a change (`db/cached-read.ts`). Refs move only with a touch of
   * the repository's row (`refsUpdated`, before the push or commit answers),
   * which retires them in every process, as it retires a candidate that named
   * nothing yet.
   */
  const cachedCommit = cachedRead("revision", async (_db: DbOrTx, repositoryId: string, ref: string) => {
    const found = await reader.info(repositoryId, `${ref}^{commit}`);
    return found?.type === "commit" ? found.oid : null;
  });

  const cachedEntry = cachedRead(
    "tree entry",
    async (_db: DbOrTx, repositoryId: string, commit: string, path: string) => {
      const found = await reader.info(repositoryId, `${commit}:${path}`);
      if (found?.type !== "blob") return null;
      const entry = { type: "file" as const, path, oid: found.oid, size: found.size };
      if (found.size > MAX_POINTER_SIZE) return entry;
      const content = (await reader.contents(repositoryId, found.oid))?.content ?? Buffer.alloc(0);
      const pointer = parseLfsPointer(content);
      return pointer
        ? {
            ...entry,
            size: pointer.size,
            lfs: { oid: pointer.oid, size: pointer.size, pointerSize: found.size },
          }
        : { ...entry, content };
    },
  );

  /** A path at a commit as a tree entry (a folder, or a file with its LFS object), or null; kept like entries. */
  const cachedPathInfo = cachedRead(
    "path info",
    async (_db: DbOrTx, repositoryId: string, commit: string, path: string): Promise<TreeEntry | null> => {
      const found = await reader.info(repositoryId, `${commit}:${path}`);
      if (found?.type === "tree") return { type: "directory", path, oid: found.oid, size: 0 };
      if (found?.type !== "blob") return null;
      const entry = await cachedEntry(db, repositoryId, commit, path);
      if (!entry) return null;
      return {
        type: "file",
        path,
        oid: entry.oid,
        size: entry.size,
        ...("lfs" in entry && entry.lfs ? { lfs: entry.lfs } : {}),
      };
    },
  );

  async function resolve(repo: FoundRepo, revision: string): Promise<string> {
    const sha = await commitOf(repo, revision);
    if (!sha) throw revisionNotFound(revision, repo.fullName);
    return sha;
  }

  async function branchHead(repo: FoundRepo, branch: string): Promise<string> {
    const sha = BRANCH_NAME.test(branch)
      ? await storage.resolveRef(repo.row.id, `refs/heads/${branch}`)
      : null;
    if (!sha) throw revisionNotFound(branch, repo.fullName);
    return sha;
  }

  /** The commit a write to a branch or to a pull request's `refs/pr/{num}` builds on. */
  async function writableHead(repo: FoundRepo, revision: string): Promise<string> {
    if (pullRequestNumber(revision) === null) return branchHead(repo, revision);
    const head = await storage.resolveRef(repo.row.id, revision);
    if (!head) throw revisionNotFound(revision, repo.fullName);
    return head;
  }

  return {
    resolve,

    /**
     * What `paths` are at a commit (missing ones left out), in the order asked. A few paths are read through
     * the repository's long-lived object reader; many at once through one `ls-tree`.
     */
    async pathsInfo(repo: FoundRepo, commit: string, paths: string[]): Promise<TreeEntry[]> {
      const unique = [...new Set(paths)];
      if (unique.length > READER_PATHS) return files.pathsInfo(repo.row.id, commit, unique);
      const entries = await Promise.all(unique.map((path) => cachedPathInfo(db, repo.row.id, commit, path)));
      // In git's tree order, as `ls-tree` answers: bytewise, a folder sorting as its name and a slash.
      const key = (entry: TreeEntry) =>
        Buffer.from(entry.type === "directory" ? `${entry.path}/` : entry.path);
      return entries
        .filter((entry): entry is TreeEntry => entry !== null)
        .sort((a, b) => Buffer.compare(key(a), key(b)));
    },

    /**
     * Splits `<revision>/<path>` where the revision may itself hold slashes
     * (`refs/pr/1`, `refs/convert/parquet`): the longest prefix that resolves wins.
     */
    async splitRevisionPath(
      repo: FoundRepo,
      joined: string,
    ): Promise<{ revision: string; commit: string; path: string }> {
      const parts = joined.split("/");
      const longest = Math.min(parts.length, 4);
      const takes = Array.from({ length: longest }, (_, i) => longest - i);
      // Every candidate is asked at once (one pipe, no round trip each); the longest that resolves wins.
      const commits = await Promise.all(
        takes.map((take) => {
          const revision = parts.slice(0, take).join("/");
          return revision ? commitOf(repo, revision) : null;
        }),
      );
      for (const [index, take] of takes.entries()) {
        const commit = commits[index];
        if (commit)
          return { revision: parts.slice(0, take).join("/"), commit, path: parts.slice(take).join("/") };
      }
      throw revisionNotFound(parts[0] ?? "", repo.fullName);
    },

    /** Decides per file whether it travels through LFS: over the size limit, or tracked by `.gitattributes`. */
    async preupload(
      repo: FoundRepo,
      branch: string,
      items: Array<{ path: string; size: number }>,
      gitAttributes?: string,
    ) {
      const head = await writableHead(repo, branch);
      let attributes = gitAttributes;
      if (attributes === undefined) {
        const entry = (await files.pathsInfo(repo.row.id, head, [".gitattributes"]))[0];
        attributes = entry ? (await files.readBlob(repo.row.id, entry.oid)).toString("utf8") : "";
      }
      const tracked = lfsMatcher(attributes);
      return items.map(({ path, size }) => {
        checkWritePath(path, "files.path");
        const lfs = size > 0 && (size > maxGitBlobBytes || tracked(path));
        return { path, uploadMode: lfs ? ("lfs" as const) : ("regular" as const), shouldIgnore: false };
      });
    },

    /**
     * Applies an NDJSON commit body to a branch, or to a pull request's
     * `refs/pr/{num}` (its author or the repository's writers), and returns the
     * new commit; with `createPr` the commit opens a new pull request against
     * the branch instead of moving it.
     */
    async commit(
      repo: FoundRepo,
      principal: Principal,
      branch: string,
      ndjson: string,
      { createPr = false }: { createPr?: boolean } = {},
    ) {
      const prNumber = pullRequestNumber(branch);
      if (prNumber !== null && createPr) throw revisionNotFound(branch, repo.fullName);
      if (prNumber !== null) await pullRequests.authorizeWrite(repo, principal, prNumber);
      const lines = ndjson
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line, index) => {
          let parsed: unknown;
          try {
            parsed = JSON.parse(line);
          } catch {
            throw badRequest("invalid_commit", `Line ${index + 1} of the commit is not JSON.`);
          }
          if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
            throw badRequest(
              "invalid_commit",
              `Line ${index + 1} of the commit must be a JSON object with "key" and "value".`,
            );
          }
          return parsed as CommitLine;
        });
      const header = lines[0];
      if (header?.key !== "header" || typeof header.value?.summary !== "string") {
        throw badRequest(
          "invalid_commit",
          'The first line must be {"key":"header","value":{"summary":...}}.',
          "summary",
        );
      }
      const description = typeof header.value.description === "string" ? header.value.description : "";
      if (header.value.summary.includes("\0") || description.includes("\0")) {
        throw badRequest(
          "invalid_commit",
          "The commit summary and description may not hold NUL characters.",
          "summary",
        );
      }
      // The branch must exist and parentCommit be well formed before anything else is read; the head the
      // commit builds on is read again under the repository's write lock.
      await writableHead(repo, branch);
      const parent = header.value.parentCommit;
      if (
        parent !== undefined &&
        parent !== null &&
        (typeof parent !== "string" || !/^[0-9a-f]{5,40}$/.test(parent))
      )
        throw badRequest("invalid_commit", "parentCommit must be 5 to 40 hex characters.", "parentCommit");
      const operations: FileOperation[] = [];
      const lfsFiles: Array<{ path: string; oid: string; size?: number }> = [];
      for (const [index, line] of lines.slice(1).entries()) {
        const value = line.value ?? {};
        const sent = typeof value.path === "string" ? value.path : "";
        const field = `line ${index + 2}.path`;
        // Writes must be storable; deletes may name any path a push stored.
        const path =
          line.key === "file" || line.key === "lfsFile"
            ? checkWritePath(sent, field)
            : checkPath(sent, field);
        if (line.key === "file") {
          if (value.encoding !== "base64" || typeof value.content !== "string")
            throw badRequest(
              "invalid_commit",
              `${path}: send file content as base64 with encoding "base64".`,
            );
          const content = Buffer.from(value.content, "base64");
          if (content.length > maxGitBlobBytes) {
            throw badRequest(
              "file_too_large",
              `${path} is over ${maxGitBlobBytes} bytes; upload it through LFS (preupload says "lfs" for it).`,
            );
          }
          operations.push({ kind: "write", path, content });
        } else if (line.key === "lfsFile") {
          if (typeof value.oid !== "string" || !/^[0-9a-f]{64}$/.test(value.oid))
            throw badRequest("invalid_commit", `${path}: lfsFile needs a sha256 oid.`);
          lfsFiles.push({
            path,
            oid: value.oid,
            size: typeof value.size === "number" ? value.size : undefined,
          });
        } else if (line.key === "deletedFile") {
          operations.push({ kind: "delete", path });
        } else if (line.key === "deletedFolder") {
          operations.push({ kind: "deleteFolder", path });
        } else {
          throw badRequest(
            "invalid_commit",
            `Line ${index + 2} has an unknown key "${String(line.key)}"; use file, lfsFile, deletedFile or deletedFolder.`,
          );
        }
      }
      // The JavaScript client never calls verify, so every LFS file must be checked here.
      const linked = await lfsObjectsRepository.linked(
        db,
        repo.row.id,
        lfsFiles.map((f) => f.oid),
      );
      for (const file of lfsFiles) {
        const size = linked.get(file.oid);
        if (
          size === undefined ||
          (file.size !== undefined && file.size !== size) ||
          (await store.size(file.oid)) !== size
        ) {
          throw new HubError(
            422,
            "lfs_object_missing",
            `${file.path}: LFS object ${file.oid} was not uploaded to this repository; upload it through the batch API first.`,
          );
        }
        operations.push({ kind: "write", path: file.path, content: Buffer.from(lfsPointer(file.oid, size)) });
      }
      const user = await usersRepository.findById(db, principal.userId);
      const body = description ? `\n\n${description}` : "";
      const title = header.value.summary;
      const message = `${title}${body}\n`;
      const author = {
        name: user?.fullname || principal.handle,
        email: user?.email ?? `${principal.handle}@users.noreply`,
      };
      // Commits to one repository take turns across every process (a PostgreSQL advisory lock), each on the
      // head as it is once its turn came, so concurrent commits all land instead of failing on each other.
      return writeLocks.withLock(repo.row.id, async () => {
        const pinned = typeof parent === "string";
        for (let attempt = 1; ; attempt++) {
          let head = await writableHead(repo, branch);
          if (typeof parent === "string") {
            if (createPr) {
              // A pull request starts from the commit named, wherever the branch has moved since.
              const based = await files.resolveObject(repo.row.id, `${parent}^{commit}`);
              if (!based)
                throw badRequest(
                  "invalid_commit",
                  `parentCommit ${parent} names no commit of ${repo.fullName}.`,
                  "parentCommit",
                );
              head = based;
            } else if (!head.startsWith(parent)) {
              throw new HubError(
                412,
                "parent_commit_mismatch",
                `${branch} is at ${head}, not ${parent}: fetch the branch again and redo your change.`,
              );
            }
          }
          const opened = createPr
            ? await pullRequests.openForCommit(repo, principal, {
                title,
                description,
                targetBranch: branch,
              })
            : null;
          const target = opened
            ? { ref: `refs/pr/${opened.num}`, expected: ZERO_OID }
            : prNumber !== null
              ? { ref: branch, expected: head }
              : { ref: `refs/heads/${branch}`, expected: head };
          try {
            const commitOid = await files.commit(repo.row.id, {
              branch,
              head,
              target,
              message,
              author,
              operations,
            });
            await repos.refsUpdated(
              repo,
              [{ ref: target.ref, oldSha: target.expected, newSha: commitOid }],
              principal.handle,
            );
            await opened?.announce();
            return {
              commitUrl: `${repos.webUrl(repo.type, repo.fullName)}/commit/${commitOid}`,
              commitOid,
              ...(opened ? { pullRequestUrl: opened.url } : {}),
            };
          } catch (err) {
            await opened?.abandon();
            if (err instanceof MissingEntryError) throw entryNotFound(err.path, head);
            if (err instanceof RejectedPathError) throw rejectedPath(err.path, err.reason);
            // Only a push (which git serializes by itself) moves the branch under the lock: build on its head.
            if (err instanceof BranchMovedError && !pinned && !opened && attempt < COMMIT_ATTEMPTS) continue;
            if (err instanceof BranchMovedError)
              throw new HubError(
                409,
                "branch_moved",
                `${branch} moved while this commit was made; retry it on the new head.`,
              );
            throw err;
          }
        }
      });
    },

    /** The size of an LFS object as uploaded through this repository, or undefined when it was not. */
    async linkedSize(repo: FoundRepo, oid: string): Promise<number | undefined> {
      return (await lfsObjectsRepository.linked(db, repo.row.id, [oid])).get(oid);
    },

    /**
     * One file of a commit, or EntryNotFound; a small file comes with its
     * content (read anyway to tell an LFS pointer), so a download reads it once.
     */
    async entry(repo: FoundRepo, commit: string, path: string): Promise<TreeEntry & { content?: Buffer }> {
      checkPath(path);
      const entry = await cachedEntry(db, repo.row.id, commit, path);
      if (!entry) throw entryNotFound(path, commit);
      return entry;
    },

    /** A blob's content. */
    async blob(repo: FoundRepo, oid: string): Promise<Buffer> {
      return (await reader.contents(repo.row.id, oid))?.content ?? Buffer.alloc(0);
    },
  };
}

export type FilesService = ReturnType<typeof createFilesService>;
