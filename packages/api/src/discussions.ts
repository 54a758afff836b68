import { Type, type Static } from "@sinclair/typebox";
import { RepoTypeSchema as RepoType } from "./repos.js";

/**
 * Discussions and pull requests, on the wire the Hugging Face clients use
 * (`get_repo_discussions`, `get_discussion_details`, `create_discussion`,
 * `comment_discussion`, `merge_pull_request`…): numbered per repository in one
 * sequence, a pull request being the ref `refs/pr/{num}`.
 */
export const DISCUSSION_STATUSES = ["draft", "open", "closed", "merged"] as const;
export const DiscussionStatus = Type.Union(
  DISCUSSION_STATUSES.map((status) => Type.Literal(status)),
  { title: "DiscussionStatus" },
);
export type DiscussionStatus = Static<typeof DiscussionStatus>;

/** The longest title, and the longest comment (64 KiB is refused). */
export const MAX_DISCUSSION_TITLE = 200;
export const MAX_COMMENT_BYTES = 64 * 1024 - 1;

export const REACTIONS = ["🔥", "🚀", "👀", "❤️", "🤗", "😎", "➕", "🧠", "👍", "🤝", "😔", "🤯"] as const;
export const Reaction = Type.Union(
  REACTIONS.map((reaction) => Type.Literal(reaction)),
  { title: "Reaction" },
);
export type Reaction = Static<typeof Reaction>;

/** Who wrote something; absent once the account is deleted (the clients then say "deleted"). */
export const DiscussionAuthor = Type.Object(
  {
    name: Type.String(),
    fullname: Type.Optional(Type.String()),
    avatarUrl: Type.Optional(Type.String()),
    type: Type.Literal("user"),
  },
  { title: "DiscussionAuthor" },
);

export const DiscussionSummary = Type.Object(
  {
    num: Type.Integer({ minimum: 1 }),
    title: Type.String(),
    status: DiscussionStatus,
    isPullRequest: Type.Boolean(),
    createdAt: Type.String({ format: "date-time" }),
    author: Type.Optional(DiscussionAuthor),
    repo: Type.Object({ name: Type.String(), type: RepoType }),
    numComments: Type.Integer({ minimum: 0 }),
    topReactions: Type.Array(Type.Object({ reaction: Reaction, count: Type.Integer({ minimum: 1 }) })),
    pinned: Type.Boolean(),
  },
  { title: "DiscussionSummary" },
);
export type DiscussionSummary = Static<typeof DiscussionSummary>;

export const DiscussionList = Type.Object(
  {
    discussions: Type.Array(DiscussionSummary),
    count: Type.Integer({ minimum: 0, description: "Discussions matching the filters, on every page." }),
    start: Type.Integer({ minimum: 0, description: "The index of the first one on this page." }),
    numClosedDiscussions: Type.Integer({ minimum: 0 }),
  },
  { title: "DiscussionList" },
);
export type DiscussionList = Static<typeof DiscussionList>;

export const DiscussionListQuery = Type.Object(
  {
    p: Type.Optional(Type.Integer({ minimum: 0, maximum: 100000, description: "Page index, from 0." })),
    type: Type.Optional(
      Type.Union([Type.Literal("all"), Type.Literal("discussion"), Type.Literal("pull_request")]),
    ),
    status: Type.Optional(Type.Union([Type.Literal("all"), Type.Literal("open"), Type.Literal("closed")])),
    author: Type.Optional(Type.String({ maxLength: 96 })),
    search: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: true },
);
export type DiscussionListQuery = Static<typeof DiscussionListQuery>;

const ReactionCount = Type.Object({
  reaction: Reaction,
  users: Type.Array(Type.String(), { description: "Handles of those who reacted." }),
  count: Type.Integer({ minimum: 1 }),
});

const CommentData = Type.Object({
  edited: Type.Boolean(),
  hidden: Type.Boolean(),
  hiddenBy: Type.Optional(Type.String()),
  latest: Type.Object({
    raw: Type.String({ description: "The Markdown as written; empty once hidden." }),
    updatedAt: Type.String({ format: "date-time" }),
    author: Type.Optional(DiscussionAuthor),
  }),
  numEdits: Type.Integer({ minimum: 0 }),
  reactions: Type.Array(ReactionCount),
});

const eventBase = {
  id: Type.String(),
  createdAt: Type.String({ format: "date-time" }),
  author: Type.Optional(DiscussionAuthor),
};

export const DiscussionEvent = Type.Union(
  [
    Type.Object({ ...eventBase, type: Type.Literal("comment"), data: CommentData }),
    Type.Object({
      ...eventBase,
      type: Type.Literal("status-change"),
      data: Type.Object({ status: DiscussionStatus }),
    }),
    Type.Object({
      ...eventBase,
      type: Type.Literal("commit"),
      data: Type.Object({ subject: Type.String(), oid: Type.String() }),
    }),
    Type.Object({
      ...eventBase,
      type: Type.Literal("title-change"),
      data: Type.Object({ from: Type.String(), to: Type.String() }),
    }),
  ],
  { title: "DiscussionEvent" },
);
export type DiscussionEvent = Static<typeof DiscussionEvent>;
export type CommentEvent = Extract<DiscussionEvent, { type: "comment" }>;

export const DiscussionDetails = Type.Intersect(
  [
    DiscussionSummary,
    Type.Object({
      events: Type.Array(DiscussionEvent),
      changes: Type.Optional(
        Type.Object({
          base: Type.String({ description: "The branch the pull request targets (refs/heads/…)." }),
          head: Type.String({ description: "The commit refs/pr/{num} points to." }),
          mergeCommitId: Type.Optional(Type.String()),
        }),
      ),
      filesWithConflicts: Type.Optional(Type.Array(Type.String())),
      diff: Type.Optional(
        Type.String({ description: "With ?diff=1: the unified diff against the target branch." }),
      ),
      diffTruncated: Type.Optional(Type.Boolean()),
    }),
  ],
  { title: "DiscussionDetails" },
);
export type DiscussionDetails = Static<typeof DiscussionDetails>;

export const CreateDiscussionRequest = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: MAX_DISCUSSION_TITLE }),
    description: Type.Optional(Type.String({ maxLength: 64 * 1024 })),
    pullRequest: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type CreateDiscussionRequest = Static<typeof CreateDiscussionRequest>;

export const CreatedDiscussion = Type.Object({
  num: Type.Integer({ minimum: 1 }),
  url: Type.String(),
  pullRequest: Type.Boolean(),
  ref: Type.Optional(Type.String({ description: "refs/pr/{num}, for a pull request." })),
});

export const CommentRequest = Type.Object(
  { comment: Type.String({ minLength: 1, maxLength: 64 * 1024 }) },
  { additionalProperties: false },
);
export const EditCommentRequest = Type.Object(
  { content: Type.String({ minLength: 1, maxLength: 64 * 1024 }) },
  { additionalProperties: false },
);
export const TitleRequest = Type.Object(
  { title: Type.String({ minLength: 1, maxLength: MAX_DISCUSSION_TITLE }) },
  { additionalProperties: false },
);
export const StatusRequest = Type.Object(
  {
    status: Type.Union([Type.Literal("open"), Type.Literal("closed"), Type.Literal("draft")]),
    comment: Type.Optional(Type.String({ maxLength: 64 * 1024 })),
  },
  { additionalProperties: false },
);
export const MergeRequest = Type.Union([
  Type.Object(
    { comment: Type.Optional(Type.String({ maxLength: 64 * 1024 })) },
    { additionalProperties: false },
  ),
  Type.Null(),
]);
export const ReactionRequest = Type.Object({ reaction: Reaction }, { additionalProperties: false });

export const NewMessage = Type.Object({ newMessage: DiscussionEvent });
export const NewTitle = Type.Object({ newTitle: DiscussionEvent });
export const NewStatus = Type.Object({ newStatus: DiscussionEvent });
export const UpdatedComment = Type.Object({ updatedComment: DiscussionEvent });
export const Merged = Type.Object({ status: Type.Literal("merged"), mergeCommitId: Type.String() });

export const DiscussionParams = Type.Object({
  owner: Type.String(),
  name: Type.String(),
  num: Type.Integer({ minimum: 1, maximum: 2147483647 }),
});
export const CommentParams = Type.Object({
  owner: Type.String(),
  name: Type.String(),
  num: Type.Integer({ minimum: 1, maximum: 2147483647 }),
  commentId: Type.String({ pattern: "^[0-9a-f]{24}$" }),
});
