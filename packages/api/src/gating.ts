import { Type, type Static } from "@sinclair/typebox";
import { GatedSetting, RepoTypeSchema } from "./repos.js";

/** Where an access request stands: waiting for review, accepted (may download), or rejected. */
export const ACCESS_REQUEST_STATUSES = ["pending", "accepted", "rejected"] as const;
export type AccessRequestStatus = (typeof ACCESS_REQUEST_STATUSES)[number];

export const AccessRequestStatusSchema = Type.Union(
  ACCESS_REQUEST_STATUSES.map((status) => Type.Literal(status)),
  { description: "pending, accepted or rejected." },
);

/** An account handle, as the review endpoints name the requester. */
const HANDLE = Type.String({
  pattern: "^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$",
  description: "The requester's username.",
});

/** Answers a requester gives the repository's writers (who they are, what they will do with it). */
export const AccessRequestFields = Type.Record(
  Type.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}$" }),
  Type.Union([Type.String({ maxLength: 2000 }), Type.Number(), Type.Boolean()]),
  {
    maxProperties: 20,
    additionalProperties: false,
    description:
      "Free-form answers for the repository's writers: up to 20 names (letters, digits, space, `_.-`, up to 64 characters) with a text (up to 2000 characters), number or boolean each.",
  },
);
export type AccessRequestFields = Static<typeof AccessRequestFields>;

/** `POST /api/{type}s/{owner}/{name}/ask-access`; open (F). */
export const AskAccessRequest = Type.Object(
  { fields: Type.Optional(AccessRequestFields) },
  { title: "AskAccessRequest", additionalProperties: true },
);
export type AskAccessRequest = Static<typeof AskAccessRequest>;

/**
 * One access request as the repository's writers see it, in the Hugging Face
 * shape (`huggingface_hub` reads `requestId`, `user.user`, `user.fullname`, `user.email`,
 * `status`, `timestamp` and `fields`); the hub adds when and why it was decided.
 */
export const AccessRequest = Type.Object(
  {
    requestId: Type.String({
      description:
        "Names the request in `handle` instead of `user` (huggingface_hub 2 requires it): the requester's account id, unique among the repository's requests.",
    }),
    user: Type.Object({
      user: Type.String({ description: "Username." }),
      fullname: Type.String(),
      email: Type.String({ description: "Shared with the repository's writers when asking." }),
    }),
    status: AccessRequestStatusSchema,
    timestamp: Type.String({ format: "date-time", description: "When access was asked for (or granted)." }),
    fields: Type.Optional(AccessRequestFields),
    decidedAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
      description: "When a writer (or `auto` mode) last decided; null while never reviewed.",
    }),
    rejectionReason: Type.Union([Type.String(), Type.Null()]),
  },
  { title: "AccessRequest" },
);
export type AccessRequest = Static<typeof AccessRequest>;

/**
 * `POST …/user-access-request/handle`: move a request to another list, as `huggingface_hub` sends it,
 * naming the request by exactly one of `user` or `requestId`.
 */
export const HandleAccessRequest = Type.Object(
  {
    user: Type.Optional(HANDLE),
    requestId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: "An access request's `requestId`." }),
    ),
    status: AccessRequestStatusSchema,
    rejectionReason: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: "Shown to the requester; only with `status: rejected`.",
      }),
    ),
  },
  { title: "HandleAccessRequest", additionalProperties: true },
);
export type HandleAccessRequest = Static<typeof HandleAccessRequest>;

/** `POST …/user-access-request/grant`: accept a user who did not ask. */
export const GrantAccessRequest = Type.Object(
  { user: HANDLE },
  { title: "GrantAccessRequest", additionalProperties: true },
);
export type GrantAccessRequest = Static<typeof GrantAccessRequest>;

/** One of the caller's own access requests, as `GET /api/me/gated-repositories` lists it. */
export const GatedRepositoryRequest = Type.Object(
  {
    repoType: RepoTypeSchema,
    repoId: Type.String({ description: "`<owner>/<name>`, as the repository is called now." }),
    gated: GatedSetting,
    status: AccessRequestStatusSchema,
    requestedAt: Type.String({ format: "date-time" }),
    decidedAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
    rejectionReason: Type.Union([Type.String(), Type.Null()]),
    fields: Type.Optional(AccessRequestFields),
  },
  { title: "GatedRepositoryRequest" },
);
export type GatedRepositoryRequest = Static<typeof GatedRepositoryRequest>;

export const GatedRepositoryList = Type.Object(
  { requests: Type.Array(GatedRepositoryRequest, { description: "Newest request first." }) },
  { title: "GatedRepositoryList" },
);
export type GatedRepositoryList = Static<typeof GatedRepositoryList>;

/** `GET /api/{type}s/{owner}/{name}/auth-check[/write]`: the access the caller was found to have. */
export const AuthCheck = Type.Object(
  {
    id: Type.String({ description: "`<owner>/<name>`." }),
    gated: GatedSetting,
    access: Type.Union([Type.Literal("read"), Type.Literal("write")], {
      description: "`read`: may download the files; `write`: may also change the repository.",
    }),
  },
  { title: "AuthCheck" },
);
export type AuthCheck = Static<typeof AuthCheck>;
