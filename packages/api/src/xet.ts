import { Type, type Static } from "@sinclair/typebox";

/**
 * The answer of `GET /api/{type}s/{owner}/{name}/xet-read-token/{rev}` and `…/xet-write-token/{rev}`: a
 * short-lived bearer token for the Xet CAS at `casUrl`, which clients ask for again shortly before `exp`
 * (https://huggingface.co/docs/xet/auth).
 */
export const XetToken = Type.Object(
  {
    accessToken: Type.String({ description: "The bearer token the CAS takes (Authorization: Bearer …)." }),
    casUrl: Type.String({ description: "The CAS's base URL; clients append /v1/…." }),
    exp: Type.Integer({ description: "When the token expires, in seconds since the epoch." }),
  },
  { title: "XetToken" },
);
export type XetToken = Static<typeof XetToken>;

/** The answer of `POST {casUrl}/v1/xorbs/default/{hash}`. */
export const XetXorbUploaded = Type.Object(
  { was_inserted: Type.Boolean({ description: "false when the CAS held the xorb already." }) },
  { title: "XetXorbUploaded" },
);
export type XetXorbUploaded = Static<typeof XetXorbUploaded>;

/** The answer of `POST {casUrl}/v1/shards`: 1 (SyncPerformed) once its files are registered. */
export const XetShardUploaded = Type.Object(
  { result: Type.Union([Type.Literal(0), Type.Literal(1)]) },
  { title: "XetShardUploaded" },
);
export type XetShardUploaded = Static<typeof XetShardUploaded>;

const XetRange = Type.Object({ start: Type.Integer(), end: Type.Integer() });

/** The answer of `GET {casUrl}/v1/reconstructions/{file_hash}` (QueryReconstructionResponse). */
export const XetReconstruction = Type.Object(
  {
    offset_into_first_range: Type.Integer(),
    terms: Type.Array(Type.Object({ hash: Type.String(), unpacked_length: Type.Integer(), range: XetRange })),
    fetch_info: Type.Record(
      Type.String(),
      Type.Array(Type.Object({ range: XetRange, url: Type.String(), url_range: XetRange })),
    ),
  },
  { title: "XetReconstruction" },
);
export type XetReconstruction = Static<typeof XetReconstruction>;
