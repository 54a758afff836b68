import { Type, type Static } from "@sinclair/typebox";
import { DiscussionStatus } from "./discussions.js";
import { REPO_TYPES, RepoTypeSchema as RepoType } from "./repos.js";

/**
 * The notifications inbox: what happened in the discussions and pull requests
 * an account owns, watches, took part in or was mentioned in, one entry per
 * account and activity, with why it reached the account.
 */

/** Why a notification reached the account, strongest first: one entry per activity keeps the strongest. */
export const NOTIFICATION_REASONS = ["mention", "participating", "owner", "watching"] as const;
export const NotificationReason = Type.Union(
  NOTIFICATION_REASONS.map((reason) => Type.Literal(reason)),
  {
    title: "NotificationReason",
    description:
      "mention: @handle in a comment or description; participating: you opened the thread or wrote in it; owner: a new thread on your repository (or your organization's, as a writer or admin); watching: you watch the repository.",
  },
);
export type NotificationReason = Static<typeof NotificationReason>;

/** What happened: a thread opened, a comment, a status change, a merge, a rename, commits pushed to a pull request. */
export const NOTIFICATION_ACTIVITIES = ["created", "comment", "status", "title", "merged", "commit"] as const;
export const NotificationActivity = Type.Union(
  NOTIFICATION_ACTIVITIES.map((activity) => Type.Literal(activity)),
  { title: "NotificationActivity" },
);
export type NotificationActivity = Static<typeof NotificationActivity>;

export const Notification = Type.Object(
  {
    id: Type.String(),
    reason: NotificationReason,
    activity: NotificationActivity,
    read: Type.Boolean(),
    createdAt: Type.String({ format: "date-time" }),
    repo: Type.Object({ name: Type.String(), type: RepoType }),
    discussion: Type.Object({
      num: Type.Integer({ minimum: 1 }),
      title: Type.String({ description: "The title as it is now." }),
      status: DiscussionStatus,
      isPullRequest: Type.Boolean(),
    }),
    actor: Type.Optional(
      Type.Object(
        { name: Type.String() },
        { description: "Who did it; absent once that account is deleted." },
      ),
    ),
    url: Type.String({ description: "The discussion's web page, at the event when there is one." }),
  },
  { title: "Notification" },
);
export type Notification = Static<typeof Notification>;

/** `{type}/{owner}/{name}`, the type singular as `repo.type` gives it (model, dataset, space, mcp). */
const REPO_FILTER_PATTERN = `^(${REPO_TYPES.join("|")})/[^/]+/[^/]+$`;

/** The filters a listing, the unread count and marking all read share. */
const filterProperties = {
  repo: Type.Optional(
    Type.String({
      pattern: REPO_FILTER_PATTERN,
      maxLength: 200,
      description: "Only this repository: {type}/{owner}/{name}, e.g. model/alice/bert.",
    }),
  ),
  repoType: Type.Optional(RepoType),
  repoName: Type.Optional(
    Type.String({
      pattern: "^[^/]+/[^/]+$",
      maxLength: 200,
      description: "With repoType: only this repository, {owner}/{name}.",
    }),
  ),
  kind: Type.Optional(
    Type.Union([Type.Literal("discussion"), Type.Literal("pull_request")], {
      description: "Only discussions, or only pull requests.",
    }),
  ),
};

export const NotificationFilters = Type.Object(filterProperties, {
  additionalProperties: false,
  title: "NotificationFilters",
});
export type NotificationFilters = Static<typeof NotificationFilters>;

export const NotificationListQuery = Type.Object(
  {
    ...filterProperties,
    p: Type.Optional(Type.Integer({ minimum: 0, maximum: 100000, description: "Page index, from 0." })),
    unread: Type.Optional(
      Type.Union([Type.Literal("1"), Type.Literal("true"), Type.Literal("0"), Type.Literal("false")], {
        description: "1: only unread notifications.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type NotificationListQuery = Static<typeof NotificationListQuery>;

export const NotificationCountQuery = Type.Object(filterProperties, { additionalProperties: false });
export type NotificationCountQuery = Static<typeof NotificationCountQuery>;

export const NotificationList = Type.Object(
  {
    notifications: Type.Array(Notification),
    count: Type.Integer({ minimum: 0, description: "Notifications matching the filters, on every page." }),
    unreadCount: Type.Integer({ minimum: 0, description: "How many of those are unread." }),
    start: Type.Integer({ minimum: 0, description: "The index of the first one on this page." }),
  },
  { title: "NotificationList" },
);
export type NotificationList = Static<typeof NotificationList>;

export const UnreadCount = Type.Object(
  { unreadCount: Type.Integer({ minimum: 0 }) },
  { title: "NotificationUnreadCount" },
);
export type UnreadCount = Static<typeof UnreadCount>;

export const NotificationIdParams = Type.Object({ id: Type.String({ pattern: "^[0-9a-f]{24}$" }) });
export type NotificationIdParams = Static<typeof NotificationIdParams>;

/** Marking every notification read, or those the filters select; the body may be left out. */
export const ReadAllRequest = Type.Union([NotificationFilters, Type.Null()]);
export type ReadAllRequest = Static<typeof ReadAllRequest>;

export const ReadAllResult = Type.Object(
  { marked: Type.Integer({ minimum: 0, description: "Notifications that were unread and now are read." }) },
  { title: "NotificationsReadAll" },
);
export type ReadAllResult = Static<typeof ReadAllResult>;

/** `watch`: hear of every discussion of the repository; `mute`: hear of none (mentions still reach you). */
export const WATCH_MODES = ["watch", "mute"] as const;
export const WatchMode = Type.Union(
  WATCH_MODES.map((mode) => Type.Literal(mode)),
  { title: "WatchMode" },
);
export type WatchMode = Static<typeof WatchMode>;

export const WatchRequest = Type.Object({ mode: WatchMode }, { additionalProperties: false });
export type WatchRequest = Static<typeof WatchRequest>;

export const RepoWatch = Type.Object(
  {
    mode: Type.Union([WatchMode, Type.Null()], {
      description:
        "null: neither watched nor muted (you hear of what you own, take part in or are mentioned in).",
    }),
  },
  { title: "RepoWatch" },
);
export type RepoWatch = Static<typeof RepoWatch>;
