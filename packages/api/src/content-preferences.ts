import { Type, type Static } from "@sinclair/typebox";
import { RepoListItem } from "./repos.js";

/** Kinds of content an account can ask not to be shown. `not-for-all-audiences` is the tag the Hub ecosystem marks adult content with. */
export const CONTENT_FILTERS = [
  "not-for-all-audiences",
  "gated",
  "without-license",
  "without-model-card",
] as const;
export type ContentFilter = (typeof CONTENT_FILTERS)[number];

const Tag = Type.String({
  pattern: "^[A-Za-z0-9][A-Za-z0-9:._/+-]{0,99}$",
  description: "A repository tag, e.g. `text-generation` or `license:mit`.",
});
const Language = Type.String({
  pattern: "^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})?$",
  description: "An ISO 639 language code, optionally with a region (BCP 47), e.g. `en` or `pt-BR`.",
});

const explicit = {
  hiddenTags: Type.Array(Tag, {
    maxItems: 100,
    uniqueItems: true,
    description: "Tags whose repositories are not shown.",
  }),
  languages: Type.Array(Language, {
    maxItems: 20,
    uniqueItems: true,
    description: "Languages of content preferred, most preferred first.",
  }),
  contentFilters: Type.Array(Type.Union(CONTENT_FILTERS.map((f) => Type.Literal(f))), {
    uniqueItems: true,
    description: "Kinds of content not to show.",
  }),
};

/** One interest learned from the account's activity. */
export const LearnedInterest = Type.Object(
  {
    tag: Type.String(),
    score: Type.Integer({ description: "Downloads of repositories carrying the tag." }),
    repositories: Type.Integer({ description: "Distinct repositories carrying the tag." }),
  },
  { title: "LearnedInterest" },
);
export type LearnedInterest = Static<typeof LearnedInterest>;

/** `GET /api/me/content-preferences`: the explicit preferences and the interests learned from activity. */
export const ContentPreferences = Type.Object(
  {
    ...explicit,
    learnedInterests: Type.Array(LearnedInterest, {
      description:
        "Tags (from the README's YAML front matter) of the repositories the account downloaded, strongest first, hidden tags left out.",
    }),
    updatedAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
      description: "When the explicit part last changed; null if never.",
    }),
  },
  { title: "ContentPreferences" },
);
export type ContentPreferences = Static<typeof ContentPreferences>;

/** `PUT /api/me/content-preferences`: replaces the explicit part; fields left out become empty. Open (F). */
export const UpdateContentPreferences = Type.Object(
  {
    hiddenTags: Type.Optional(explicit.hiddenTags),
    languages: Type.Optional(explicit.languages),
    contentFilters: Type.Optional(explicit.contentFilters),
  },
  { title: "UpdateContentPreferences", additionalProperties: true },
);
export type UpdateContentPreferences = Static<typeof UpdateContentPreferences>;

const REPO_KINDS = ["model", "dataset", "space", "mcp"] as const;

export const SUPPRESSION_KINDS = ["repository", "author", "tag"] as const;
export type SuppressionKind = (typeof SUPPRESSION_KINDS)[number];

/** Something the account asked not to be recommended. */
export const RecommendationSuppression = Type.Object(
  {
    id: Type.String({ format: "uuid" }),
    kind: Type.Union(SUPPRESSION_KINDS.map((k) => Type.Literal(k))),
    value: Type.String({
      description:
        "`{type}/{owner}/{name}` for a repository (e.g. `model/acme/bert`), a handle for an author, a tag.",
    }),
    createdAt: Type.String({ format: "date-time" }),
  },
  { title: "RecommendationSuppression" },
);
export type RecommendationSuppression = Static<typeof RecommendationSuppression>;

export const RecommendationSuppressionList = Type.Object(
  { suppressions: Type.Array(RecommendationSuppression) },
  { title: "RecommendationSuppressionList" },
);
export type RecommendationSuppressionList = Static<typeof RecommendationSuppressionList>;

/** `POST /api/me/recommendation-suppressions`; open like the spec's other account bodies. */
export const CreateRecommendationSuppression = Type.Object(
  {
    kind: Type.Union(SUPPRESSION_KINDS.map((k) => Type.Literal(k))),
    value: Type.String({ minLength: 1, maxLength: 200 }),
    repoType: Type.Optional(
      Type.Union(
        REPO_KINDS.map((t) => Type.Literal(t)),
        {
          description: "For a repository: its kind (`model` when left out); `value` is then `owner/name`.",
        },
      ),
    ),
  },
  { title: "CreateRecommendationSuppression", additionalProperties: true },
);
export type CreateRecommendationSuppression = Static<typeof CreateRecommendationSuppression>;

/** `GET /api/me/recommendations`: which kind, and how many. */
export const RecommendationsQuery = Type.Object(
  {
    type: Type.Optional(
      Type.Union([Type.Literal("model"), Type.Literal("dataset"), Type.Literal("space")], {
        description: "The kind of repository recommended (`model` when left out).",
      }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, description: "At most this many (10)." })),
  },
  { additionalProperties: false },
);
export type RecommendationsQuery = Static<typeof RecommendationsQuery>;

/** One recommended repository: its listing entry and why it was chosen. */
export const Recommendation = Type.Composite(
  [
    RepoListItem,
    Type.Object({
      reasons: Type.Array(Type.String(), {
        description:
          "The preferred languages and learned interests (tags) it carries; empty when it is only trending.",
      }),
    }),
  ],
  { title: "Recommendation" },
);
export type Recommendation = Static<typeof Recommendation>;
