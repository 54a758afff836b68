import { randomBytes } from "node:crypto";
import {
  MAX_COMMENT_BYTES,
  type DiscussionDetails,
  type DiscussionEvent,
  type DiscussionList,
  type DiscussionListQuery,
  type DiscussionStatus,
  type DiscussionSummary,
  type Reaction,
} from "@hub/api";
import type { Action } from "../../../auth/authorize.js";
import type { Authorize } from "../../../auth/authorizer.js";
import type { Principal } from "../../../auth/credential.js";
import type { Db } from "../../../db/database.js";
import type { DiscussionRow } from "../../../db/schema.js";
import type { PullRequests, PushablePullRequests } from "../../../domain/pull-requests.js";
import type { DiscussionActivity, DiscussionListener } from "../../../domain/discussion-activity.js";
import type { DiscussionSnapshot, RepoEvent, RepoEvents } from "../../../domain/repo-events.js";
import {
  repoResource,
  repoWebUrl,
  type FoundRepo,
  type RefUpdate,
  type RepoLookup,
} from "../../../domain/repositories.js";
import { HubError, badRequest, conflict } from "../../../errors.js";
import {
  MergeConflictError,
  pullRequestNumber,
  pullRequestRef,
  type PullRequestGit,
} from "../../../git/pull-requests.js";
import { ZERO_OID, type RepoFiles } from "../../../git/repo-files.js";
import type { RepoStorage } from "../../../git/repo-storage.js";
import { avatarUrlOf } from "../../accounts/profile/avatar-url.js";
import {
  CLOSED_STATUSES,
  OPEN_STATUSES,
  discussionsRepository as repo_,
  type DiscussionFilter,
  type DiscussionWithAuthor,
  type EventWithAuthor,
} from "./discussions.repository.js";

/** Discussions per page of a listing, as the Hugging Face Hub pages them. */
export const DISCUSSION_PAGE_SIZE = 50;
/** Attempts at taking the next number when another discussion takes it first. */
const NUMBER_ATTEMPTS = 5;
/** Attempts at a merge whose target branch moved while it was made. */
const MERGE_ATTEMPTS = 3;
/** `@handle` mentions in a comment: an account's handle after `@`, not inside a word or an e-mail address. */
const MENTION = /(?<![\w.@/-])@([a-z0-9][a-z0-9-]{0,38})(?![\w-])/gi;

export interface DiscussionsServiceDeps {
  db: Db;
  clock: () => Date;
  repos: Pick<RepoLookup, "refsUpdated">;
  storage: RepoStorage;
  repoFiles: RepoFiles;
  git: PullRequestGit;
  authorize: Authorize;
  events: RepoEvents;
  publicUrl: string;
  /** Told of every activity after webhooks are (the notifications area). */
  listeners?: DiscussionListener[];
}

interface CommentData {
  raw: string;
  edited: boolean;
  hidden: boolean;
  hiddenBy?: string;
  numEdits: number;
}

const newId = () => randomBytes(12).toString("hex");

function checkCommentSize(text: string, field: string): void {
  if (Buffer.byteLength(text, "utf8") > MAX_COMMENT_BYTES)
    throw badRequest(
      "comment_too_long",
      `${field} is ${Buffer.byteLength(text, "utf8")} bytes; keep it under 64 KiB (split it, or attach a file to the repository and link it).`,
      field,
    );
}

function cleanTitle(title: string): string {
  const clean = title.replace(/\s+/g, " ").trim();
  if (clean === "")
    throw badRequest("invalid_request", "The title is empty; give the discussion a title.", "title");
  return clean;
}

/** The handles a comment mentions, lower-cased and without repeats. */
export function mentionedHandles(text: string): string[] {
  const found = new Set<string>();
  // Code spans and blocks are not mentions.
  const prose = text.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
  for (const match of prose.matchAll(MENTION)) found.add((match[1] ?? "").toLowerCase());
  return [...found];
}

/**
 * Discussions and pull requests of a repository: numbered per repository,
 * each with its timeline. A pull request's commits live on `refs/pr/{num}`;
 * merging moves its target branch by compare-and-swap, as every write does.
 */
export function createDiscussionsService(deps: DiscussionsServiceDeps) {
  const { db, clock, storage, repoFiles, git, authorize, events, publicUrl } = deps;
  const listeners = deps.listeners ?? [];

  const apiUrl = (repo: FoundRepo, num: number) =>
    `${publicUrl}/api/${repo.type}s/${repo.fullName}/discussions/${num}`;
  const webUrl = (repo: FoundRepo, num: number) =>
    `${repoWebUrl(publicUrl, repo.type, repo.fullName)}/discussions/${num}`;

  function author(handle: string | null, fullname: string | null) {
    if (handle === null) return undefined;
    return {
      name: handle,
      type: "user" as const,
      avatarUrl: avatarUrlOf(publicUrl, handle, null),
      ...(fullname ? { fullname } : {}),
    };
  }

  function snapshot(row: DiscussionRow): DiscussionSnapshot {
    return {
      id: row.id,
      num: row.num,
      title: row.title,
      status: row.status,
      isPullRequest: row.is_pull_request === 1,
      authorId: row.author_id,
      targetBranch: row.target_branch,
    };
  }

  async function find(repo: FoundRepo, num: number): Promise<DiscussionWithAuthor> {
    const row = await repo_.find(db, repo.row.id, num);
    if (!row)
      throw new HubError(
        404,
        "discussion_not_found",
        `Discussion #${num} of ${repo.fullName} does not exist.`,
      );
    return row;
  }

  async function findPullRequest(repo: FoundRepo, num: number): Promise<DiscussionWithAuthor> {
    const row = await find(repo, num);
    if (row.is_pull_request !== 1)
      throw badRequest(
        "not_pull_request",
        `#${num} of ${repo.fullName} is a discussion, not a pull request: it has no commits to write or merge.`,
      );
    return row;
  }

  /**
   * The caller's own things need `community:write`, which every route that
   * reaches here has already decided; other people's also need a role, asked
   * of the one decision now.
   */
  async function allow(principal: Principal, repo: FoundRepo, own: boolean, others: Action): Promise<void> {
    if (!own) await authorize(principal, others, repoResource(repo));
  }

  async function publish(event: RepoEvent, activity: Omit<DiscussionActivity, "repo"> | null): Promise<void> {
    await events.publish(event);
    if (!activity) return;
    for (const listener of listeners) await listener.discussionActivity({ ...activity, repo: event.repo });
  }

  /** Tells webhooks and listeners that a discussion was opened or changed. */
  async function announce(
    repo: FoundRepo,
    principal: Principal,
    action: "create" | "update",
    discussion: DiscussionRow,
    kind: DiscussionActivity["kind"],
    eventId: string | null,
    mentions: string[] = [],
  ): Promise<void> {
    await publish(
      { scope: "discussion", action, repo, actor: principal.handle, discussion: snapshot(discussion) },
      { discussion, kind, eventId, actorId: principal.userId, mentions },
    );
  }

  /** A new comment's stored data. */
  const freshComment = (raw: string): CommentData => ({ raw, edited: false, hidden: false, numEdits: 0 });

  async function addEvent(
    discussion: DiscussionRow,
    type: DiscussionEvent["type"],
    authorId: string | null,
    data: object,
  ): Promise<string> {
    const now = clock().toISOString();
    for (let attempt = 0; ; attempt++) {
      const id = newId();
      try {
        await db.transaction().execute(async (tx) => {
          const seq = await repo_.nextSeq(tx, discussion.id);
          await repo_.insertEvent(tx, {
            id,
            discussion_id: discussion.id,
            seq,
            type,
            author_id: authorId,
            data: JSON.stringify(data),
            created_at: now,
            updated_at: now,
          });
          await repo_.update(tx, discussion.id, { updated_at: now });
        });
        return id;
      } catch (err) {
        // Two events written at once may pick the same place in the timeline: the second takes the next.
        if (attempt >= NUMBER_ATTEMPTS) throw err;
      }
    }
  }

  async function toEvent(row: EventWithAuthor): Promise<DiscussionEvent> {
    return (await toEvents([row]))[0] as DiscussionEvent;
  }

  async function toEvents(rows: EventWithAuthor[]): Promise<DiscussionEvent[]> {
    const comments = rows.filter((row) => row.type === "comment").map((row) => row.id);
    const reactions = await repo_.reactions(db, comments);
    return rows.map((row): DiscussionEvent => {
      const base = {
        id: row.id,
        createdAt: row.created_at,
        ...(row.author_handle === null ? {} : { author: author(row.author_handle, row.author_fullname) }),
      };
      const data = JSON.parse(row.data) as Record<string, unknown>;
      switch (row.type) {
        case "comment": {
          const comment = data as unknown as CommentData;
          const counts = new Map<string, string[]>();
          for (const reaction of reactions.filter((r) => r.event_id === row.id)) {
            counts.set(reaction.reaction, [...(counts.get(reaction.reaction) ?? []), reaction.handle]);
          }
          return {
            ...base,
            type: "comment",
            data: {
              edited: comment.edited,
              hidden: comment.hidden,
              ...(comment.hiddenBy ? { hiddenBy: comment.hiddenBy } : {}),
              latest: {
                raw: comment.hidden ? "" : comment.raw,
                updatedAt: row.updated_at,
                ...(base.author ? { author: base.author } : {}),
              },
              numEdits: comment.numEdits,
              reactions: [...counts].map(([reaction, users]) => ({
                reaction: reaction as Reaction,
                users,
                count: users.length,
              })),
            },
          };
        }
        case "status-change":
          return { ...base, type: "status-change", data: { status: data.status as DiscussionStatus } };
        case "commit":
          return { ...base, type: "commit", data: { subject: String(data.subject), oid: String(data.oid) } };
        default:
          return { ...base, type: "title-change", data: { from: String(data.from), to: String(data.to) } };
      }
    });
  }

  function summaryOf(
    repo: FoundRepo,
    row: DiscussionWithAuthor,
    numComments: number,
    reactions: Array<{ reaction: string; n: number }>,
  ): DiscussionSummary {
    return {
      num: row.num,
      title: row.title,
      status: row.status as DiscussionStatus,
      isPullRequest: row.is_pull_request === 1,
      createdAt: row.created_at,
      ...(row.author_handle === null ? {} : { author: author(row.author_handle, row.author_fullname) }),
      repo: { name: repo.fullName, type: repo.type },
      numComments,
      topReactions: reactions
        .sort((a, b) => b.n - a.n)
        .slice(0, 3)
        .map((r) => ({ reaction: r.reaction as Reaction, count: r.n })),
      pinned: row.pinned === 1,
    };
  }

  /** The accounts a text mentions, but the writer: their ids. */
  async function mentionsIn(text: string, writerId: string): Promise<string[]> {
    return (await repo_.usersByHandle(db, mentionedHandles(text)))
      .filter((user) => user.id !== writerId)
      .map((user) => user.id);
  }

  /**
   * Adds a comment event, after checking its size. A plain comment tells the
   * listeners (with its mentions); the note of a status change or a merge
   * leaves that to the activity it comes with.
   */
  async function comment(
    repo: FoundRepo,
    discussion: DiscussionRow,
    principal: Principal,
    text: string,
    kind: DiscussionActivity["kind"] = "comment",
  ): Promise<string> {
    checkCommentSize(text, "comment");
    const id = await addEvent(discussion, "comment", principal.userId, freshComment(text));
    const mentions = kind === "comment" ? await mentionsIn(text, principal.userId) : [];
    await publish(
      {
        scope: "discussion.comment",
        action: "create",
        repo,
        actor: principal.handle,
        discussion: snapshot(discussion),
        comment: { id, authorId: principal.userId, content: text, hidden: false },
      },
      kind === "comment" ? { discussion, kind, eventId: id, actorId: principal.userId, mentions } : null,
    );
    return id;
  }

  async function eventAnswer(discussion: DiscussionRow, eventId: string): Promise<DiscussionEvent> {
    const row = await repo_.event(db, discussion.id, eventId);
    if (!row) throw new Error("The event just written is missing.");
    return toEvent(row);
  }

  /** Creates the discussion row under the next free number of the repository. */
  async function insertDiscussion(
    repo: FoundRepo,
    fields: Pick<DiscussionRow, "title" | "author_id" | "is_pull_request" | "status" | "target_branch">,
  ): Promise<DiscussionRow> {
    const now = clock().toISOString();
    for (let attempt = 0; ; attempt++) {
      try {
        return await db.transaction().execute(async (tx) => {
          const row: DiscussionRow = {
            id: newId(),
            repository_id: repo.row.id,
            num: await repo_.nextNumber(tx, repo.row.id),
            merge_commit: null,
            pinned: 0,
            created_at: now,
            updated_at: now,
            ...fields,
          };
          await repo_.insert(tx, row);
          return row;
        });
      } catch (err) {
        if (attempt >= NUMBER_ATTEMPTS) throw err;
      }
    }
  }

  /** The head of a branch, or the 409 saying the repository has nothing to start a pull request from. */
  async function branchHead(repo: FoundRepo, branch: string): Promise<string> {
    const head = await storage.resolveRef(repo.row.id, `refs/heads/${branch}`);
    if (!head)
      throw conflict(
        "empty_repository",
        `${repo.fullName} has no commit on ${branch} to start a pull request from; push a first commit.`,
      );
    return head;
  }

  const service = {
    async list(repo: FoundRepo, query: DiscussionListQuery): Promise<DiscussionList> {
      const filter: DiscussionFilter = {};
      if (query.type === "discussion") filter.isPullRequest = false;
      if (query.type === "pull_request") filter.isPullRequest = true;
      if (query.status === "open") filter.statuses = OPEN_STATUSES;
      if (query.status === "closed") filter.statuses = CLOSED_STATUSES;
      if (query.search) filter.search = query.search;
      const start = (query.p ?? 0) * DISCUSSION_PAGE_SIZE;
      if (query.author) {
        const user = await repo_.userByHandle(db, query.author.toLowerCase());
        if (!user) return { discussions: [], count: 0, start, numClosedDiscussions: 0 };
        filter.authorId = user.id;
      }
      const [count, rows, numClosedDiscussions] = await Promise.all([
        repo_.count(db, repo.row.id, filter),
        repo_.page(db, repo.row.id, filter, start, DISCUSSION_PAGE_SIZE),
        repo_.count(db, repo.row.id, { ...filter, statuses: CLOSED_STATUSES }),
      ]);
      const ids = rows.map((row) => row.id);
      const [comments, reactions] = await Promise.all([
        repo_.commentCounts(db, ids),
        repo_.reactionCounts(db, ids),
      ]);
      return {
        discussions: rows.map((row) =>
          summaryOf(
            repo,
            row,
            comments.get(row.id) ?? 0,
            reactions.filter((r) => r.discussion_id === row.id),
          ),
        ),
        count,
        start,
        numClosedDiscussions,
      };
    },

    async details(
      repo: FoundRepo,
      principal: Principal | null,
      num: number,
      withDiff: boolean,
    ): Promise<DiscussionDetails> {
      const row = await find(repo, num);
      const eventRows = await repo_.events(db, row.id);
      const [comments, reactions] = await Promise.all([
        repo_.commentCounts(db, [row.id]),
        repo_.reactionCounts(db, [row.id]),
      ]);
      const details: DiscussionDetails = {
        ...summaryOf(repo, row, comments.get(row.id) ?? 0, reactions),
        events: await toEvents(eventRows),
      };
      if (row.is_pull_request !== 1 || row.target_branch === null) return details;
      const head = (await storage.resolveRef(repo.row.id, pullRequestRef(num))) ?? ZERO_OID;
      const base = await storage.resolveRef(repo.row.id, `refs/heads/${row.target_branch}`);
      details.changes = {
        base: `refs/heads/${row.target_branch}`,
        head,
        ...(row.merge_commit ? { mergeCommitId: row.merge_commit } : {}),
      };
      const open = OPEN_STATUSES.includes(row.status);
      details.filesWithConflicts =
        open && base && head !== ZERO_OID ? await git.conflicts(repo.row.id, base, head) : [];
      if (withDiff && head !== ZERO_OID) {
        // The diff shows file contents: a gated repository's gate guards it as it guards downloads.
        await authorize(principal, "repo:download", repoResource(repo));
        // A merged pull request's diff is against the branch as it was when it was merged (kept on its merge event).
        const merged = eventRows.find(
          (event) => event.type === "status-change" && event.data.includes('"merged"'),
        );
        const mergedOnto = merged ? (JSON.parse(merged.data) as { base?: string }).base : undefined;
        const from = mergedOnto ?? base ?? head;
        const diff = await git.diff(repo.row.id, from, head);
        details.diff = diff.text;
        if (diff.truncated) details.diffTruncated = true;
      }
      return details;
    },

    async create(
      repo: FoundRepo,
      principal: Principal,
      input: { title: string; description?: string; pullRequest?: boolean },
    ): Promise<{ num: number; url: string; pullRequest: boolean; ref?: string }> {
      const title = cleanTitle(input.title);
      const description = input.description ?? "";
      checkCommentSize(description, "description");
      const pullRequest = input.pullRequest === true;
      const target = repo.row.default_branch;
      const head = pullRequest ? await branchHead(repo, target) : null;
      const row = await insertDiscussion(repo, {
        title,
        author_id: principal.userId,
        is_pull_request: pullRequest ? 1 : 0,
        // Pull requests opened through the API start as drafts, as on the Hugging Face Hub.
        status: pullRequest ? "draft" : "open",
        target_branch: pullRequest ? target : null,
      });
      let refUpdate: RefUpdate | null = null;
      if (head) {
        const ref = pullRequestRef(row.num);
        try {
          await repoFiles.setRef(repo.row.id, ref, head, ZERO_OID);
        } catch (err) {
          await repo_.delete(db, row.id);
          throw err;
        }
        refUpdate = { ref, oldSha: ZERO_OID, newSha: head };
      }
      await addEvent(row, "comment", principal.userId, freshComment(description));
      if (refUpdate) await deps.repos.refsUpdated(repo, [refUpdate], principal.handle);
      const mentions = await mentionsIn(description, principal.userId);
      await announce(repo, principal, "create", row, "created", null, mentions);
      return {
        num: row.num,
        url: webUrl(repo, row.num),
        pullRequest,
        ...(pullRequest ? { ref: pullRequestRef(row.num) } : {}),
      };
    },

    async comment(repo: FoundRepo, principal: Principal, num: number, text: string) {
      const row = await find(repo, num);
      const id = await comment(repo, row, principal, text);
      return { newMessage: await eventAnswer(row, id) };
    },

    async editComment(
      repo: FoundRepo,
      principal: Principal,
      num: number,
      commentId: string,
      content: string,
    ) {
      checkCommentSize(content, "content");
      const row = await find(repo, num);
      const event = await commentEvent(row, commentId);
      await allow(principal, repo, event.author_id === principal.userId, "discussion:moderate");
      const data = JSON.parse(event.data) as CommentData;
      if (data.hidden)
        throw conflict("comment_hidden", "The comment is hidden; a hidden comment can no longer be edited.");
      const now = clock().toISOString();
      const next: CommentData = { ...data, raw: content, edited: true, numEdits: data.numEdits + 1 };
      await repo_.updateEvent(db, event.id, JSON.stringify(next), now);
      await publish(
        {
          scope: "discussion.comment",
          action: "update",
          repo,
          actor: principal.handle,
          discussion: snapshot(row),
          comment: { id: event.id, authorId: event.author_id, content, hidden: false },
        },
        null,
      );
      return { updatedComment: await eventAnswer(row, event.id) };
    },

    async hideComment(repo: FoundRepo, principal: Principal, num: number, commentId: string) {
      const row = await find(repo, num);
      const event = await commentEvent(row, commentId);
      await allow(principal, repo, event.author_id === principal.userId, "discussion:moderate");
      const data = JSON.parse(event.data) as CommentData;
      if (!data.hidden) {
        const next: CommentData = { ...data, hidden: true, hiddenBy: principal.handle };
        await repo_.updateEvent(db, event.id, JSON.stringify(next), clock().toISOString());
        await publish(
          {
            scope: "discussion.comment",
            action: "update",
            repo,
            actor: principal.handle,
            discussion: snapshot(row),
            comment: { id: event.id, authorId: event.author_id, content: "", hidden: true },
          },
          null,
        );
      }
      return { updatedComment: await eventAnswer(row, event.id) };
    },

    async react(
      repo: FoundRepo,
      principal: Principal,
      num: number,
      commentId: string,
      reaction: Reaction,
      on: boolean,
    ) {
      const row = await find(repo, num);
      const event = await commentEvent(row, commentId);
      if (on)
        await repo_.addReaction(db, {
          event_id: event.id,
          user_id: principal.userId,
          reaction,
          created_at: clock().toISOString(),
        });
      else await repo_.removeReaction(db, event.id, principal.userId, reaction);
      return { updatedComment: await eventAnswer(row, event.id) };
    },

    async rename(repo: FoundRepo, principal: Principal, num: number, title: string) {
      const row = await find(repo, num);
      await allow(principal, repo, row.author_id === principal.userId, "discussion:moderate");
      const clean = cleanTitle(title);
      if (clean === row.title)
        throw conflict("status_unchanged", `#${num} is already titled "${clean}".`, "title");
      await repo_.update(db, row.id, { title: clean, updated_at: clock().toISOString() });
      const id = await addEvent(row, "title-change", principal.userId, { from: row.title, to: clean });
      const updated = { ...row, title: clean };
      await announce(repo, principal, "update", updated, "title", id);
      return { newTitle: await eventAnswer(row, id) };
    },

    async setStatus(
      repo: FoundRepo,
      principal: Principal,
      num: number,
      status: "open" | "closed" | "draft",
      note?: string,
    ) {
      const row = await find(repo, num);
      await allow(principal, repo, row.author_id === principal.userId, "discussion:manage");
      if (note) checkCommentSize(note, "comment");
      if (row.status === "merged")
        throw conflict("discussion_closed", `#${num} is merged; a merged pull request keeps its status.`);
      if (status === "draft" && row.is_pull_request !== 1)
        throw badRequest("invalid_status", "Only pull requests can be drafts; use open or closed.", "status");
      if (row.status === status)
        throw conflict("status_unchanged", `#${num} is already ${status}.`, "status");
      const swapped = await repo_.swapStatus(db, row.id, row.status, {
        status,
        updated_at: clock().toISOString(),
      });
      if (!swapped)
        throw conflict("status_unchanged", `#${num} changed status meanwhile; reload it and retry.`);
      if (note) await comment(repo, row, principal, note, "status");
      const id = await addEvent(row, "status-change", principal.userId, { status });
      const updated = { ...row, status };
      const mentions = note ? await mentionsIn(note, principal.userId) : [];
      await announce(repo, principal, "update", updated, "status", id, mentions);
      return { newStatus: await eventAnswer(row, id) };
    },

    /**
     * Merges a pull request into its target branch: a fast-forward when the
     * branch has not moved since, else a merge commit made without a work
     * tree. The branch moves by compare-and-swap; when it moved meanwhile the
     * merge is made again on its new head, so nothing pushed is lost.
     */
    /** The merge route has decided `repo:write`. */
    async merge(repo: FoundRepo, principal: Principal, num: number, note?: string) {
      const row = await findPullRequest(repo, num);
      if (note) checkCommentSize(note, "comment");
      if (!OPEN_STATUSES.includes(row.status) || row.target_branch === null)
        throw conflict(
          "discussion_closed",
          `#${num} is ${row.status}; only an open (or draft) pull request can be merged${row.status === "closed" ? ": reopen it first" : ""}.`,
        );
      const head = await storage.resolveRef(repo.row.id, pullRequestRef(num));
      if (!head) throw conflict("nothing_to_merge", `refs/pr/${num} is missing; push commits to it first.`);
      const branch = row.target_branch;
      const committer = {
        name: principal.fullname || principal.handle,
        email: `${principal.handle}@users.noreply`,
      };
      for (let attempt = 1; ; attempt++) {
        const base = await branchHead(repo, branch);
        if (await git.isAncestor(repo.row.id, head, base))
          throw conflict(
            "nothing_to_merge",
            `refs/pr/${num} holds no commit ${branch} lacks; push commits to refs/pr/${num} first.`,
          );
        let merged: { commit: string; fastForward: boolean };
        try {
          merged = await git.merge(repo.row.id, {
            base,
            head,
            message: `Merge pull request #${num}: ${row.title}\n`,
            committer,
          });
        } catch (err) {
          if (err instanceof MergeConflictError)
            throw new HubError(
              409,
              "merge_conflict",
              `#${num} conflicts with ${branch} in ${err.paths.join(", ")}: merge ${branch} into refs/pr/${num} and resolve them, then merge again.`,
              { field: "filesWithConflicts" },
            );
          throw err;
        }
        try {
          await repoFiles.setRef(repo.row.id, `refs/heads/${branch}`, merged.commit, base);
        } catch (err) {
          if (attempt < MERGE_ATTEMPTS) continue;
          throw new HubError(
            409,
            "branch_moved",
            `${branch} kept moving while #${num} was merged; merge it again.`,
            {
              cause: err,
            },
          );
        }
        const now = clock().toISOString();
        await repo_.update(db, row.id, { status: "merged", merge_commit: merged.commit, updated_at: now });
        await deps.repos.refsUpdated(
          repo,
          [{ ref: `refs/heads/${branch}`, oldSha: base, newSha: merged.commit }],
          principal.handle,
        );
        if (note) await comment(repo, row, principal, note, "merged");
        const id = await addEvent(row, "status-change", principal.userId, { status: "merged", base });
        const updated = { ...row, status: "merged", merge_commit: merged.commit };
        const mentions = note ? await mentionsIn(note, principal.userId) : [];
        await announce(repo, principal, "update", updated, "merged", id, mentions);
        return { status: "merged" as const, mergeCommitId: merged.commit };
      }
    },

    /** Records commits that arrived on `refs/pr/{num}` refs (a push, an API commit) on their timelines. */
    async refsMoved(repo: FoundRepo, updates: RefUpdate[], actor: string | null): Promise<void> {
      for (const update of updates) {
        const num = pullRequestNumber(update.ref);
        if (num === null || update.newSha === ZERO_OID) continue;
        const row = await repo_.find(db, repo.row.id, num);
        if (!row || row.target_branch === null) continue;
        const base = await storage.resolveRef(repo.row.id, `refs/heads/${row.target_branch}`);
        const known = await repo_.commitOids(db, row.id);
        const from = update.oldSha === ZERO_OID ? base : update.oldSha;
        const commits = (await git.commitsBetween(repo.row.id, from, update.newSha)).filter(
          (commit) => !known.has(commit.oid) && commit.oid !== base,
        );
        const actorRow = actor === null ? undefined : await repo_.userByHandle(db, actor);
        let last: string | null = null;
        for (const commit of commits) {
          last = await addEvent(row, "commit", actorRow?.id ?? null, commit);
        }
        // The commits a pull request is opened with (create_pr=1 makes its ref) are news of its opening, told once.
        if (last !== null && update.oldSha !== ZERO_OID)
          for (const listener of listeners)
            await listener.discussionActivity({
              repo,
              discussion: row,
              kind: "commit",
              eventId: last,
              actorId: actorRow?.id ?? null,
              mentions: [],
            });
      }
    },
  };

  async function commentEvent(row: DiscussionRow, commentId: string): Promise<EventWithAuthor> {
    const event = await repo_.event(db, row.id, commentId);
    if (!event || event.type !== "comment")
      throw new HubError(
        404,
        "comment_not_found",
        `The comment ${commentId} is not in discussion #${row.num}.`,
      );
    return event;
  }

  /** Pull requests as the file API and the git transports need them. */
  const pullRequests: PullRequests = {
    async authorizeWrite(repo, principal, num) {
      const row = await findPullRequest(repo, num);
      await allow(principal, repo, row.author_id === principal.userId, "repo:write");
      if (!OPEN_STATUSES.includes(row.status))
        throw conflict(
          "discussion_closed",
          `#${num} is ${row.status}; ${row.status === "closed" ? "reopen it before writing to it" : "open a new pull request instead"}.`,
        );
    },

    // The commit route has decided `community:write` for a create_pr commit.
    async openForCommit(repo, principal, input) {
      const row = await insertDiscussion(repo, {
        title: cleanTitle(input.title),
        author_id: principal.userId,
        is_pull_request: 1,
        status: "open",
        target_branch: input.targetBranch,
      });
      await addEvent(row, "comment", principal.userId, freshComment(input.description));
      return {
        num: row.num,
        url: webUrl(repo, row.num),
        abandon: () => repo_.delete(db, row.id).then(() => undefined),
        announce: async () =>
          announce(
            repo,
            principal,
            "create",
            row,
            "created",
            null,
            await mentionsIn(input.description, principal.userId),
          ),
      };
    },

    async pushable(repo, principal, mayWriteBranches) {
      const rows = await repo_.pullRequestStatuses(db, repo.row.id);
      const answer: PushablePullRequests = { allowed: [], notYours: [], merged: [], closed: [] };
      for (const row of rows) {
        if (row.status === "merged") answer.merged.push(row.num);
        else if (!OPEN_STATUSES.includes(row.status)) answer.closed.push(row.num);
        else if (mayWriteBranches || row.author_id === principal.userId) answer.allowed.push(row.num);
        else answer.notYours.push(row.num);
      }
      return answer;
    },
  };

  return { ...service, pullRequests, apiUrl };
}

export type DiscussionsService = ReturnType<typeof createDiscussionsService>;
