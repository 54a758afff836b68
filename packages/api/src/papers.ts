import { Type, type Static } from "@sinclair/typebox";
import { RepoListItem } from "./repos.js";

/** Text on one line: no control characters. */
const LINE = "^[^\\u0000-\\u001f\\u007f]*$";
/** Text that may span lines: tabs and line breaks, no other control characters. */
const TEXT = "^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]*$";

/** The longest title, author name, author list and abstract a paper record holds. */
export const PAPER_LIMITS = { title: 300, authorName: 200, authors: 1000, summary: 5000 } as const;

const ArxivIdInput = Type.String({
  minLength: 1,
  maxLength: 64,
  description:
    "An arXiv identifier: `YYMM.NNNNN` (from 2015; `YYMM.NNNN` from April 2007 to 2014) or `archive/YYMMNNN` " +
    "(`archive.SC/YYMMNNN` with a subject class, before April 2007), optionally with a version (`v2`) and an " +
    "`arXiv:` prefix. Stored normalised (`hep-th/9901001`, subject class dropped), the version kept apart.",
});

const Title = Type.String({
  minLength: 1,
  maxLength: PAPER_LIMITS.title,
  pattern: LINE,
  description: `The paper's title, up to ${PAPER_LIMITS.title} characters.`,
});
const AuthorName = Type.String({
  minLength: 1,
  maxLength: PAPER_LIMITS.authorName,
  pattern: LINE,
  description: "An author's name as the paper prints it.",
});
const Authors = Type.Array(AuthorName, {
  minItems: 1,
  maxItems: PAPER_LIMITS.authors,
  uniqueItems: true,
  description: `The authors in the paper's order, 1 to ${PAPER_LIMITS.authors} distinct names.`,
});
const Summary = Type.String({
  maxLength: PAPER_LIMITS.summary,
  pattern: TEXT,
  description: `The abstract, up to ${PAPER_LIMITS.summary} characters.`,
});
const PublishedOn = Type.String({
  format: "date",
  description: "The day arXiv announced the paper (`YYYY-MM-DD`); not before its identifier's month.",
});

/**
 * The metadata a paper record holds. The hub has no internet, so it comes
 * from the account that first submits or claims the paper; only its editors
 * change it later (`PATCH /api/papers/{arxivId}`).
 */
const metadataFields = {
  title: Type.Optional(Title),
  authors: Type.Optional(Authors),
  summary: Type.Optional(Summary),
  publishedAt: Type.Optional(PublishedOn),
};

const UserRef = Type.Object(
  {
    user: Type.String({ description: "The account's handle." }),
    fullname: Type.String(),
    avatarUrl: Type.String(),
  },
  { title: "PaperUser" },
);

/** An author of a paper; `user` is the account that claimed the name, when its claim is visible. */
export const PaperAuthor = Type.Object(
  {
    name: Type.String(),
    user: Type.Optional(UserRef),
  },
  { title: "PaperAuthor" },
);
export type PaperAuthor = Static<typeof PaperAuthor>;

const summaryFields = {
  id: Type.String({ description: "The normalised arXiv identifier, without version." }),
  version: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
    description: "The arXiv version the metadata describes, when one was given.",
  }),
  title: Type.String(),
  authors: Type.Array(PaperAuthor),
  summary: Type.String({ description: "The abstract." }),
  publishedAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
    description: "When arXiv announced it (midnight UTC of the day given), if known.",
  }),
  url: Type.String({ description: "The paper's page on arXiv." }),
  createdAt: Type.String({ format: "date-time", description: "When the hub first recorded it." }),
  updatedAt: Type.String({ format: "date-time" }),
};

/** A paper record, as account lists and the public profile show it. */
export const PaperSummary = Type.Object(summaryFields, { title: "PaperSummary" });
export type PaperSummary = Static<typeof PaperSummary>;

/**
 * `GET /api/daily_papers`: a submission to the hub's papers page, as
 * `huggingface_hub`'s list_daily_papers reads it (the paper nested, the
 * submission's time and submitter beside it).
 */
export const DailyPaper = Type.Object(
  {
    paper: PaperSummary,
    title: Type.String(),
    submittedOnDailyAt: Type.String({ format: "date-time" }),
    submittedOnDailyBy: UserRef,
  },
  { title: "DailyPaper" },
);
export type DailyPaper = Static<typeof DailyPaper>;

/** The query of `GET /api/daily_papers`; `date`, `week` and `month` pick the submissions' period (one at most). */
export const DailyPapersQuery = Type.Object(
  {
    date: Type.Optional(Type.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}$", description: "YYYY-MM-DD (UTC)." })),
    week: Type.Optional(Type.String({ pattern: "^\\d{4}-W\\d{2}$", description: "ISO week, YYYY-Www." })),
    month: Type.Optional(Type.String({ pattern: "^\\d{4}-\\d{2}$", description: "YYYY-MM (UTC)." })),
    submitter: Type.Optional(
      Type.String({ maxLength: 100, description: "Only this account's submissions." }),
    ),
    sort: Type.Optional(Type.String({ description: "publishedAt (the default: newest submission first)." })),
    p: Type.Optional(Type.Integer({ minimum: 0, description: "Page number, from 0." })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: "Papers per page (50)." })),
  },
  { title: "DailyPapersQuery" },
);
export type DailyPapersQuery = Static<typeof DailyPapersQuery>;

/**
 * `GET /api/papers/{arxivId}`: the paper with its claimed authors and the
 * repositories whose cards cite it, shaped as `huggingface_hub`'s
 * `paper_info` reads it (`linkedModels`, `numTotalModels`, ...,
 * `submittedOnDailyBy`).
 */
export const Paper = Type.Object(
  {
    ...summaryFields,
    submittedOnDailyAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
      description: "When it was submitted to the hub's papers page; null if it was only claimed.",
    }),
    submittedOnDailyBy: Type.Union([UserRef, Type.Null()]),
    linkedModels: Type.Array(RepoListItem),
    numTotalModels: Type.Integer({ minimum: 0 }),
    linkedDatasets: Type.Array(RepoListItem),
    numTotalDatasets: Type.Integer({ minimum: 0 }),
    linkedSpaces: Type.Array(RepoListItem),
    numTotalSpaces: Type.Integer({ minimum: 0 }),
    linkedMcps: Type.Array(RepoListItem),
    numTotalMcps: Type.Integer({ minimum: 0 }),
  },
  {
    title: "Paper",
    description:
      "Linked repositories are those whose README (on the default branch) cites the paper by an `arxiv:<id>` tag " +
      "or an arxiv.org `/abs/` or `/pdf/` link, and that the caller may read; each list holds the 100 most " +
      "recently changed, `numTotal*` counts them all.",
  },
);
export type Paper = Static<typeof Paper>;

/** `PATCH /api/papers/{arxivId}`: fields given replace the stored ones. Open like the account bodies. */
export const UpdatePaper = Type.Object(
  {
    ...metadataFields,
    version: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1, maximum: 999 }), Type.Null()], {
        description: "The arXiv version the metadata now describes; null for none.",
      }),
    ),
  },
  { title: "UpdatePaper", additionalProperties: true },
);
export type UpdatePaper = Static<typeof UpdatePaper>;

/** Whether a submission's paper has been claimed by one of its authors yet. */
export const SUBMISSION_STATUSES = ["unclaimed", "claimed"] as const;
export type SubmissionStatus = (typeof SUBMISSION_STATUSES)[number];

/** A paper the account submitted to the hub's papers page. */
export const PaperSubmission = Type.Object(
  {
    id: Type.String({ format: "uuid" }),
    arxivId: Type.String(),
    status: Type.Union(
      SUBMISSION_STATUSES.map((s) => Type.Literal(s)),
      {
        description:
          "`unclaimed` until an account claims authorship of the paper, `claimed` after; the submitter edits " +
          "the paper's metadata only while it is unclaimed.",
      },
    ),
    claims: Type.Integer({ minimum: 0, description: "Accounts that claimed authorship." }),
    mayEdit: Type.Boolean({ description: "Whether the submitter may still edit the paper's metadata." }),
    createdAt: Type.String({ format: "date-time" }),
    paper: PaperSummary,
  },
  { title: "PaperSubmission" },
);
export type PaperSubmission = Static<typeof PaperSubmission>;

export const PaperSubmissionList = Type.Object(
  { submissions: Type.Array(PaperSubmission, { description: "Newest first." }) },
  { title: "PaperSubmissionList" },
);
export type PaperSubmissionList = Static<typeof PaperSubmissionList>;

/**
 * `POST /api/me/paper-submissions`: puts a paper on the hub's papers page.
 * The metadata is required when the hub does not know the paper yet; when it
 * does, the stored metadata stays (its editors change it). Open (F).
 */
export const CreatePaperSubmission = Type.Object(
  { arxivId: ArxivIdInput, ...metadataFields },
  { title: "CreatePaperSubmission", additionalProperties: true },
);
export type CreatePaperSubmission = Static<typeof CreatePaperSubmission>;

/** The account's claim to be one of a paper's authors. */
export const PaperClaim = Type.Object(
  {
    id: Type.String({ format: "uuid" }),
    arxivId: Type.String(),
    authorName: Type.String({ description: "Which of the paper's authors the account is." }),
    visible: Type.Boolean({ description: "Whether the public profile and the paper show the claim." }),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
    paper: PaperSummary,
  },
  { title: "PaperClaim" },
);
export type PaperClaim = Static<typeof PaperClaim>;

export const PaperClaimList = Type.Object(
  { claims: Type.Array(PaperClaim, { description: "Newest first." }) },
  { title: "PaperClaimList" },
);
export type PaperClaimList = Static<typeof PaperClaimList>;

/**
 * `POST /api/me/papers`: claims authorship. `authorName` must be one of the
 * paper's authors and not claimed by another account. A paper the hub does
 * not know yet is recorded from the metadata given; for a known one the
 * metadata is not used. Open (F).
 */
export const CreatePaperClaim = Type.Object(
  {
    arxivId: ArxivIdInput,
    authorName: AuthorName,
    visible: Type.Optional(
      Type.Boolean({ description: "Show it on the public profile; true when left out." }),
    ),
    ...metadataFields,
  },
  { title: "CreatePaperClaim", additionalProperties: true },
);
export type CreatePaperClaim = Static<typeof CreatePaperClaim>;

/** `PATCH /api/me/papers/{claimId}`; open (F). */
export const UpdatePaperClaim = Type.Object(
  { visible: Type.Boolean({ description: "Show the claim on the public profile and the paper." }) },
  { title: "UpdatePaperClaim", additionalProperties: true },
);
export type UpdatePaperClaim = Static<typeof UpdatePaperClaim>;
