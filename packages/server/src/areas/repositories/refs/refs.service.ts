import type { CommitDiff, CommitItem } from "@hub/api";
import type { Principal } from "../../../auth/credential.js";
import { cachedRead } from "../../../db/cached-read.js";
import type { Db, DbOrTx } from "../../../db/database.js";
import { HubError, badRequest, conflict, revisionNotFound } from "../../../errors.js";
import { GitCommandError } from "../../../git/git-command.js";
import { parseCommitObject } from "../../../git/commit-object.js";
import { DEFAULT_DIFF_LIMITS, type CommitDiffReader } from "../../../git/commit-diff.js";
import { ZERO_OID, type LogEntry, type RepoFiles } from "../../../git/repo-files.js";
import { usersRepository } from "../../accounts/account/users.repository.js";
import type { FilesService } from "../files/files.service.js";
import type { CommitSignatures } from "../../accounts/keys/commit-signatures.js";
import type { ReposService } from "../repos/repos.service.js";
import type { FoundRepo } from "../../../domain/repositories.js";

/** Names the hub keeps for itself, or that git would read as options or revisions. */
const NAME = /^(?!-)(?!refs\/)(?!HEAD$)[A-Za-z0-9._/-]{1,200}$/;

export interface RefItem {
  name: string;
  ref: string;
  targetCommit: string;
}

/** Identity text for git headers: no angle brackets or line breaks can reach them. */
const clean = (text: string) => text.replace(/[<>\r\n]/g, "").trim() || "unknown";

/** Branches, tags and history of a repository. */
export function createRefsService({
  db,
  files,
  repos,
  repoFiles,
  signatures,
  commitDiff,
}: {
  db: Db;
  files: FilesService;
  repos: ReposService;
  repoFiles: RepoFiles;
  signatures: CommitSignatures;
  commitDiff: CommitDiffReader;
}) {
  /**
   * A repository's refs, kept until the database next notes a change: refs move only with a touch of the
   * repository's row (`refsUpdated`, before a push or commit answers), as `files.service.ts` explains.
   */
  const cachedRefs = cachedRead("refs", (_db: DbOrTx, repositoryId: string) => repoFiles.refs(repositoryId));

  async function checkName(repo: FoundRepo, kind: "heads" | "tags", name: string): Promise<string> {
    const ref = `refs/${kind}/${name}`;
    if (!NAME.test(name) || !(await repoFiles.validRefName(repo.row.id, ref))) {
      throw badRequest(
        "invalid_ref_name",
        `"${name}" is not a valid ${kind === "heads" ? "branch" : "tag"} name; names may not start with "-" or "refs/".`,
        "name",
      );
    }
    return ref;
  }

  /**
   * Refuses a new ref that would be both a name and a folder of names: git
   * stores `refs/heads/main` as a file, so `main/sub` cannot sit beside it,
   * nor `main` beside `main/sub`. Retrying never helps; the message says so.
   */
  async function checkNoNameConflict(repo: FoundRepo, ref: string, kind: "branch" | "tag"): Promise<void> {
    const clash = (await repoFiles.refs(repo.row.id)).find(
      (existing) => existing.ref.startsWith(`${ref}/`) || ref.startsWith(`${existing.ref}/`),
    );
    if (!clash) return;
    const shortName = (full: string) => full.replace(/^refs\/(heads|tags)\//, "");
    throw conflict(
      "ref_name_conflict",
      `A ${kind} cannot be called ${shortName(ref)} while ${shortName(clash.ref)} exists: git stores a ref name as a file, so one name cannot also be a folder of names. Retrying will not help; choose another name or delete ${shortName(clash.ref)} first.`,
      kind === "branch" ? "name" : "tag",
    );
  }

  /** Runs a compare-and-swap on a ref; losing to a concurrent writer is a 409, not a failure of the hub. */
  async function swap(message: string, update: () => Promise<void>): Promise<void> {
    try {
      await update();
    } catch (err) {
      if (err instanceof GitCommandError) throw conflict("ref_changed", message);
      throw err;
    }
  }

  /** The caller as a git identity. */
  async function identityOf(principal: Principal) {
    const user = await usersRepository.findById(db, principal.userId);
    return { name: clean(user?.fullname ?? principal.handle), email: clean(user?.email ?? principal.handle) };
  }

  /** Log entries as the API shows them, each with its signature checked now, against the keys registered now. */
  async function commitItems(repo: FoundRepo, entries: LogEntry[]): Promise<CommitItem[]> {
    const raw = await repoFiles.rawCommits(
      repo.row.id,
      entries.map((entry) => entry.id),
    );
    const verify = signatures.verifier();
    return Promise.all(
      entries.map(async (entry) => ({
        id: entry.id,
        title: entry.message.split("\n")[0] ?? "",
        message: entry.message,
        date: new Date(entry.date).toISOString(),
        authors: [{ user: entry.authorName }],
        signature: await verify(parseCommitObject(raw.get(entry.id) ?? Buffer.alloc(0))),
      })),
    );
  }

  async function current(repo: FoundRepo, ref: string): Promise<string | null> {
    return (await repoFiles.refs(repo.row.id)).find((r) => r.ref === ref)?.commit ?? null;
  }

  return {
    /** Every branch, tag, conversion (and pull-request ref on request) with its commit. */
    async list(repo: FoundRepo, includePullRequests: boolean) {
      const refs = await cachedRefs(db, repo.row.id);
      const pick = (prefix: string) =>
        refs
          .filter((r) => r.ref.startsWith(prefix))
          .map((r): RefItem => ({ name: r.ref.slice(prefix.length), ref: r.ref, targetCommit: r.commit }));
      return {
        branches: pick("refs/heads/"),
        tags: pick("refs/tags/"),
        converts: pick("refs/convert/"),
        ...(includePullRequests ? { pullRequests: pick("refs/pr/") } : {}),
      };
    },

    /** Creates a branch at a revision (the default branch's head when none is given). */
    async createBranch(
      repo: FoundRepo,
      principal: Principal,
      name: string,
      options: { startingPoint?: string; overwrite: boolean; empty: boolean },
    ) {
      const ref = await checkName(repo, "heads", name);
      const { overwrite } = options;
      const commit = options.empty
        ? await repoFiles.emptyCommit(repo.row.id, `Create empty branch ${name}`, await identityOf(principal))
        : await files.resolve(repo, options.startingPoint ?? repo.row.default_branch);
      const existing = await current(repo, ref);
      if (existing && !overwrite)
        throw conflict("branch_exists", `Branch ${name} already exists; pass overwrite to move it.`, "name");
      if (!existing) await checkNoNameConflict(repo, ref, "branch");
      await swap(`Branch ${name} changed meanwhile; retry.`, () =>
        repoFiles.setRef(repo.row.id, ref, commit, existing ?? ZERO_OID),
      );
      await repos.refsUpdated(
        repo,
        [{ ref, oldSha: existing ?? ZERO_OID, newSha: commit }],
        principal.handle,
      );
    },

    async deleteBranch(repo: FoundRepo, principal: Principal, name: string) {
      if (name === repo.row.default_branch)
        throw badRequest("default_branch", `${name} is the default branch and cannot be deleted.`, "name");
      const ref = await checkName(repo, "heads", name);
      const existing = await current(repo, ref);
      if (!existing) throw revisionNotFound(name, repo.fullName);
      await swap(`Branch ${name} changed meanwhile; retry.`, () =>
        repoFiles.deleteRef(repo.row.id, ref, existing),
      );
      await repos.refsUpdated(repo, [{ ref, oldSha: existing, newSha: ZERO_OID }], principal.handle);
    },

    /** Tags a revision; with a message the tag is annotated, signed by the caller's identity. */
    async createTag(
      repo: FoundRepo,
      principal: Principal,
      revision: string,
      tag: string,
      message: string | undefined,
    ) {
      const ref = await checkName(repo, "tags", tag);
      const commit = await files.resolve(repo, revision);
      if (await current(repo, ref))
        throw conflict(
          "tag_exists",
          `Tag ${tag} already exists; delete it first or choose another name.`,
          "tag",
        );
      await checkNoNameConflict(repo, ref, "tag");
      let target = commit;
      if (message) {
        target = await repoFiles.createTagObject(repo.row.id, {
          tag,
          commit,
          message,
          tagger: await identityOf(principal),
        });
      }
      await swap(`Tag ${tag} was created meanwhile; choose another name.`, () =>
        repoFiles.setRef(repo.row.id, ref, target, ZERO_OID),
      );
      await repos.refsUpdated(repo, [{ ref, oldSha: ZERO_OID, newSha: target }], principal.handle);
    },

    async deleteTag(repo: FoundRepo, principal: Principal, tag: string) {
      const ref = await checkName(repo, "tags", tag);
      const existing = (await repoFiles.refs(repo.row.id)).find((r) => r.ref === ref);
      if (!existing)
        throw new HubError(404, "tag_not_found", `Tag ${tag} does not exist in ${repo.fullName}.`, {
          headers: { "x-error-code": "RevisionNotFound", "x-error-message": "Invalid rev id" },
        });
      const object = (await repoFiles.resolveObject(repo.row.id, ref)) ?? existing.commit;
      await swap(`Tag ${tag} changed meanwhile; retry.`, () => repoFiles.deleteRef(repo.row.id, ref, object));
      await repos.refsUpdated(repo, [{ ref, oldSha: object, newSha: ZERO_OID }], principal.handle);
    },

    /** A page of history at a revision and the total count. */
    async commits(repo: FoundRepo, revision: string, page: number, limit: number) {
      const commit = await files.resolve(repo, revision);
      const { total, commits } = await repoFiles.log(repo.row.id, commit, page * limit, limit);
      return { total, items: await commitItems(repo, commits) };
    },

    /** One commit, by any revision that names it. */
    async commit(repo: FoundRepo, revision: string): Promise<CommitItem> {
      const commit = await files.resolve(repo, revision);
      const [item] = await commitItems(repo, await repoFiles.logEntries(repo.row.id, commit, 0, 1));
      if (!item) throw revisionNotFound(revision, repo.fullName);
      return item;
    },

    /** What a commit changed against its first parent, file by file, cut at the diff limits. */
    async diff(repo: FoundRepo, revision: string): Promise<CommitDiff> {
      const commit = await files.resolve(repo, revision);
      const [parent = null] = await commitDiff.parents(repo.row.id, commit);
      return commitDiff.diff(repo.row.id, commit, parent, DEFAULT_DIFF_LIMITS);
    },
  };
}

export type RefsService = ReturnType<typeof createRefsService>;
