import { Type, type Static } from "@sinclair/typebox";

/**
 * The Git LFS wire shapes: the batch API
 * (https://github.com/git-lfs/git-lfs/blob/main/docs/api/batch.md), the basic
 * transfer's verify call (https://github.com/git-lfs/git-lfs/blob/main/docs/api/basic-transfers.md),
 * the locking API (https://github.com/git-lfs/git-lfs/blob/main/docs/api/locking.md) and the
 * Hugging Face multipart transfer's completion. git-lfs and the Hugging Face clients write the
 * requests, so they may carry fields this hub does not read (`additionalProperties`).
 */

/** The most objects one batch request may name. */
export const LFS_MAX_OBJECTS_PER_BATCH = 1000;

/** The branch a request is made for, as git-lfs sends it; read by no check of this hub yet. */
const LfsRef = Type.Object({ name: Type.String() }, { additionalProperties: true });

/**
 * `POST …/info/lfs/objects/batch`. An object's oid and size are checked one by one
 * (the answer gives each bad object its own 422), so here they only need their types;
 * `multipart` is the Hugging Face transfer that sends large objects in parts; `xet`
 * (offered by the JavaScript client and Python releases 0.36 to 1.19) uploads through the
 * hub's Xet CAS instead (docs/xet.md).
 */
export const LfsBatchRequest = Type.Object(
  {
    operation: Type.Union([Type.Literal("upload"), Type.Literal("download")]),
    transfers: Type.Optional(
      Type.Union(
        [
          Type.Array(Type.String(), { maxItems: 0 }),
          Type.Array(Type.String(), {
            contains: Type.Union([Type.Literal("basic"), Type.Literal("multipart")]),
          }),
        ],
        {
          description: 'The transfers the client offers; a non-empty list must name "basic" or "multipart".',
        },
      ),
    ),
    objects: Type.Array(
      Type.Object({ oid: Type.String(), size: Type.Number() }, { additionalProperties: true }),
      { maxItems: LFS_MAX_OBJECTS_PER_BATCH },
    ),
    ref: Type.Optional(LfsRef),
    hash_algo: Type.Optional(Type.String()),
  },
  { additionalProperties: true, title: "LfsBatchRequest" },
);
export type LfsBatchRequest = Static<typeof LfsBatchRequest>;

/** An action of a batch answer. For a multipart upload, `header` holds `chunk_size` and one URL per part ("00001", ...). */
export const LfsAction = Type.Object(
  {
    href: Type.String(),
    header: Type.Optional(Type.Record(Type.String(), Type.String())),
    expires_in: Type.Optional(Type.Integer()),
  },
  { title: "LfsAction" },
);
export type LfsAction = Static<typeof LfsAction>;

/** One object of a batch answer: no `actions` when the hub already has it, or an `error`. */
export const LfsBatchObject = Type.Object(
  {
    oid: Type.String(),
    size: Type.Number(),
    authenticated: Type.Optional(Type.Boolean()),
    actions: Type.Optional(
      Type.Object({
        upload: Type.Optional(LfsAction),
        verify: Type.Optional(LfsAction),
        download: Type.Optional(LfsAction),
      }),
    ),
    error: Type.Optional(Type.Object({ code: Type.Integer(), message: Type.String() })),
  },
  { title: "LfsBatchObject" },
);
export type LfsBatchObject = Static<typeof LfsBatchObject>;

/** The batch answer. */
export const LfsBatchResponse = Type.Object(
  {
    transfer: Type.Optional(
      Type.Union([Type.Literal("basic"), Type.Literal("multipart"), Type.Literal("xet")], {
        description:
          '"xet" when the client offered it and the repository takes Xet uploads: each object to upload then has an `upload` action whose href is the xet-write-token route and whose header carries X-Xet-Cas-Url, X-Xet-Access-Token, X-Xet-Token-Expiration and X-Xet-Session-Id.',
      }),
    ),
    objects: Type.Array(LfsBatchObject),
    hash_algo: Type.Optional(Type.Literal("sha256")),
  },
  { title: "LfsBatchResponse" },
);
export type LfsBatchResponse = Static<typeof LfsBatchResponse>;

/** The body of a `verify` action: the object the client uploaded. */
export const LfsVerifyRequest = Type.Object(
  { oid: Type.String(), size: Type.Integer() },
  { additionalProperties: true, title: "LfsVerifyRequest" },
);
export type LfsVerifyRequest = Static<typeof LfsVerifyRequest>;

/** The body that completes a multipart upload: each part's number (from 1) and the ETag its upload answered. */
export const LfsCompleteRequest = Type.Object(
  {
    oid: Type.String(),
    parts: Type.Array(
      Type.Object({ partNumber: Type.Integer(), etag: Type.String() }, { additionalProperties: true }),
    ),
  },
  { additionalProperties: true, title: "LfsCompleteRequest" },
);
export type LfsCompleteRequest = Static<typeof LfsCompleteRequest>;

/** What the verify and complete calls answer when they succeed. */
export const LfsMessage = Type.Object({ message: Type.String() }, { title: "LfsMessage" });
export type LfsMessage = Static<typeof LfsMessage>;

/** Every LFS error body: what git-lfs prints, and the request id to quote to the operator. */
export const LfsError = Type.Object(
  { message: Type.String(), request_id: Type.Optional(Type.String()) },
  { title: "LfsError" },
);
export type LfsError = Static<typeof LfsError>;

/** A lock on one file of a repository. */
export const LfsLock = Type.Object(
  {
    id: Type.String(),
    path: Type.String(),
    locked_at: Type.String({ format: "date-time" }),
    owner: Type.Object({ name: Type.String() }),
  },
  { title: "LfsLock" },
);
export type LfsLock = Static<typeof LfsLock>;

/** `POST …/info/lfs/locks`: the file to lock. */
export const LfsCreateLockRequest = Type.Object(
  { path: Type.String({ minLength: 1, maxLength: 1024 }), ref: Type.Optional(LfsRef) },
  { additionalProperties: true, title: "LfsCreateLockRequest" },
);
export type LfsCreateLockRequest = Static<typeof LfsCreateLockRequest>;

/** The lock created or removed, or (with 409 and a `message`) the lock that holds the file already. */
export const LfsLockAnswer = Type.Object(
  { lock: LfsLock, message: Type.Optional(Type.String()) },
  { title: "LfsLockAnswer" },
);
export type LfsLockAnswer = Static<typeof LfsLockAnswer>;

/** `GET …/info/lfs/locks`: filters and the page; `limit` is clamped to 1–1000 (100 when absent or not a number). */
export const LfsListLocksQuery = Type.Object(
  {
    path: Type.Optional(Type.String()),
    id: Type.Optional(Type.String()),
    cursor: Type.Optional(Type.String()),
    limit: Type.Optional(Type.String()),
    refspec: Type.Optional(Type.String()),
  },
  { additionalProperties: true, title: "LfsListLocksQuery" },
);
export type LfsListLocksQuery = Static<typeof LfsListLocksQuery>;

/** A page of locks; `next_cursor` is there when more follow. */
export const LfsLockList = Type.Object(
  { locks: Type.Array(LfsLock), next_cursor: Type.Optional(Type.String()) },
  { title: "LfsLockList" },
);
export type LfsLockList = Static<typeof LfsLockList>;

/** `POST …/info/lfs/locks/verify`: the page of locks a push checks itself against. */
export const LfsVerifyLocksRequest = Type.Object(
  {
    cursor: Type.Optional(Type.String()),
    limit: Type.Optional(Type.Integer()),
    ref: Type.Optional(LfsRef),
  },
  { additionalProperties: true, title: "LfsVerifyLocksRequest" },
);
export type LfsVerifyLocksRequest = Static<typeof LfsVerifyLocksRequest>;

/** The caller's own locks and everyone else's, one page of them. */
export const LfsLockVerifyList = Type.Object(
  {
    ours: Type.Array(LfsLock),
    theirs: Type.Array(LfsLock),
    next_cursor: Type.Optional(Type.String()),
  },
  { title: "LfsLockVerifyList" },
);
export type LfsLockVerifyList = Static<typeof LfsLockVerifyList>;

/** `POST …/info/lfs/locks/{id}/unlock`: `force` breaks another member's lock (administrators only). */
export const LfsUnlockRequest = Type.Object(
  { force: Type.Optional(Type.Boolean()), ref: Type.Optional(LfsRef) },
  { additionalProperties: true, title: "LfsUnlockRequest" },
);
export type LfsUnlockRequest = Static<typeof LfsUnlockRequest>;
