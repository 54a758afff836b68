import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { AccountKey } from "./keys.js";

/** The kinds of repository the hub hosts. */
export const REPO_TYPES = ["model", "dataset", "space", "mcp"] as const;
export type RepoType = (typeof REPO_TYPES)[number];

export const RepoTypeSchema = Type.Union(
  REPO_TYPES.map((type) => Type.Literal(type)),
  { description: "model, dataset, space or mcp." },
);

/** `<owner>/<name>`: a lower-case handle, then a lower-case name of up to 96 characters. */
export const REPO_ID_PATTERN = "^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?/[a-z0-9][a-z0-9._-]{0,95}$";

/** `POST /api/repos`, as the spec gives it. */
export const CreateRepoRequest = Type.Object(
  {
    repo_id: Type.String({ pattern: REPO_ID_PATTERN, description: "`<owner>/<name>`." }),
    repo_type: Type.Optional(RepoTypeSchema),
    private: Type.Optional(Type.Boolean({ description: "Defaults to false." })),
  },
  { additionalProperties: false, title: "CreateRepoRequest" },
);
export type CreateRepoRequest = Static<typeof CreateRepoRequest>;

/** A repository as create returns it: where to browse, clone and push it. */
export const RepoSummary = Type.Object(
  {
    id: Type.String({ description: "`<owner>/<name>`." }),
    _id: Type.String({ format: "uuid" }),
    type: RepoTypeSchema,
    private: Type.Boolean(),
    url: Type.String({ description: "Web URL." }),
    git_url: Type.String({ description: "HTTPS clone URL." }),
    ssh_url: Type.String({ description: "SSH clone URL." }),
    default_branch: Type.String(),
    created_at: Type.String({ format: "date-time" }),
  },
  { title: "RepoSummary" },
);
export type RepoSummary = Static<typeof RepoSummary>;

/** The SDKs a Space can be made with; the hub keeps it and shows it, it does not run Spaces. */
export const SPACE_SDKS = ["gradio", "streamlit", "docker", "static"] as const;
export const SpaceSdk = Type.Union(
  SPACE_SDKS.map((sdk) => Type.Literal(sdk)),
  { description: "A Space's SDK; given when the Space is created, ignored for models and datasets." },
);
export type SpaceSdk = Static<typeof SpaceSdk>;

/**
 * `POST /api/repos/create`, the shape the Hugging Face clients send. Open: the
 * clients add fields (sdk, license, resourceGroupId, ...) that the hub ignores.
 */
export const HfCreateRepoRequest = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    organization: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    type: Type.Optional(RepoTypeSchema),
    visibility: Type.Optional(
      Type.Union([Type.Literal("public"), Type.Literal("private"), Type.Literal("protected")]),
    ),
    private: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    sdk: Type.Optional(SpaceSdk),
  },
  { additionalProperties: true, title: "HfCreateRepoRequest" },
);
export type HfCreateRepoRequest = Static<typeof HfCreateRepoRequest>;

export const HfCreateRepoResponse = Type.Object(
  {
    url: Type.String({ description: "Web URL on the hub's public base URL." }),
    id: Type.String({ description: "`<owner>/<name>`." }),
    name: Type.String(),
  },
  { title: "HfCreateRepoResponse" },
);
export type HfCreateRepoResponse = Static<typeof HfCreateRepoResponse>;

/** A 409 on create still names the repository's URL: the Python client reads it with `exist_ok`. */
export const RepoConflict = Type.Object(
  {
    error: Type.String(),
    code: Type.String(),
    url: Type.Optional(Type.String({ description: "The existing repository, when that is the conflict." })),
  },
  { title: "RepoConflict" },
);

/** `POST /api/{type}s/{id}/duplicate`, as `huggingface_hub`'s duplicate_repo sends it. */
export const DuplicateRepoRequest = Type.Object(
  {
    repository: Type.String({ description: "The copy's `<namespace>/<name>`." }),
    visibility: Type.Optional(
      Type.Union([Type.Literal("public"), Type.Literal("private"), Type.Literal("protected")], {
        description: "The copy's visibility; the source's when left out.",
      }),
    ),
    private: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  },
  { additionalProperties: true, title: "DuplicateRepoRequest" },
);
export type DuplicateRepoRequest = Static<typeof DuplicateRepoRequest>;

/** `DELETE /api/repos/delete`, with a JSON body as the Hugging Face clients send it. */
export const HfDeleteRepoRequest = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    organization: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    type: Type.Optional(RepoTypeSchema),
  },
  { additionalProperties: true, title: "HfDeleteRepoRequest" },
);
export type HfDeleteRepoRequest = Static<typeof HfDeleteRepoRequest>;

/** How a gated repository admits downloaders: requests accepted at once, or reviewed by its writers. */
export const GATE_MODES = ["auto", "manual"] as const;
export type GateMode = (typeof GATE_MODES)[number];

/** A repository's gating as Hugging Face shows and sets it: `false`, or the mode. */
export const GatedSetting = Type.Union(
  [Type.Literal(false), ...GATE_MODES.map((mode) => Type.Literal(mode))],
  {
    description:
      "`false`: anyone who may read downloads. `auto` or `manual`: files, git and LFS downloads need an accepted access request (accepted at once in `auto`, reviewed in `manual`); metadata stays visible.",
  },
);
export type GatedSetting = Static<typeof GatedSetting>;

/** A file of a repository in its info; size, blobId and lfs come with `blobs=true`. */
export const RepoSibling = Type.Object(
  {
    rfilename: Type.String(),
    size: Type.Optional(Type.Integer({ description: "The file's size (the object's, for an LFS file)." })),
    blobId: Type.Optional(Type.String({ description: "The git blob id." })),
    lfs: Type.Optional(
      Type.Object({ sha256: Type.String(), size: Type.Integer(), pointerSize: Type.Integer() }),
    ),
  },
  { title: "RepoSibling" },
);

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const JsonObject = Type.Record(Type.String(), Type.Unknown());

/**
 * What discovery knows of a repository (its card's front matter and files, indexed at each push to its
 * default branch, and its counts), as the Hugging Face Hub names these fields. Listings and info carry some by
 * default and the rest when `expand` names them; fields the hub keeps nothing for are null.
 */
export const RepoDiscoveryFields = {
  likes: Type.Optional(Type.Integer({ minimum: 0 })),
  downloads: Type.Optional(Type.Integer({ minimum: 0, description: "Downloads in the last 30 days." })),
  downloadsAllTime: Type.Optional(Type.Integer({ minimum: 0 })),
  trendingScore: Type.Optional(Type.Number()),
  tags: Type.Optional(
    Type.Array(Type.String(), {
      description:
        "The card's tags, its task, library and languages, `license:`, `dataset:`, `base_model:` tags, and `safetensors`, `gguf`, `onnx` from its files.",
    }),
  ),
  pipeline_tag: Type.Optional(nullable(Type.String())),
  library_name: Type.Optional(nullable(Type.String())),
  cardData: Type.Optional(nullable(JsonObject)),
  config: Type.Optional(nullable(JsonObject)),
  safetensors: Type.Optional(
    nullable(
      Type.Object({
        parameters: Type.Record(Type.String(), Type.Integer()),
        total: Type.Integer(),
      }),
    ),
  ),
  gguf: Type.Optional(nullable(JsonObject)),
  "model-index": Type.Optional(nullable(Type.Array(Type.Unknown()))),
  baseModels: Type.Optional(
    nullable(
      Type.Object({
        relation: Type.String(),
        models: Type.Array(Type.Object({ id: Type.String() })),
      }),
    ),
  ),
  childrenModelCount: Type.Optional(Type.Integer({ minimum: 0 })),
  spaces: Type.Optional(Type.Array(Type.String())),
  models: Type.Optional(Type.Array(Type.String())),
  datasets: Type.Optional(Type.Array(Type.String())),
  widgetData: Type.Optional(Type.Unknown()),
  transformersInfo: Type.Optional(Type.Unknown()),
  mask_token: Type.Optional(Type.Unknown()),
  inference: Type.Optional(Type.Unknown()),
  inferenceProviderMapping: Type.Optional(Type.Array(Type.Unknown())),
  evalResults: Type.Optional(Type.Unknown()),
  resourceGroup: Type.Optional(Type.Unknown()),
  runtime: Type.Optional(Type.Unknown()),
  region: Type.Optional(Type.Unknown()),
  subdomain: Type.Optional(Type.Unknown()),
  disabled: Type.Optional(Type.Boolean()),
  citation: Type.Optional(nullable(Type.String())),
  description: Type.Optional(nullable(Type.String())),
  paperswithcode_id: Type.Optional(nullable(Type.String())),
  mainSize: Type.Optional(Type.Integer({ minimum: 0 })),
  cardProblems: Type.Optional(
    Type.Array(Type.String(), {
      description:
        "What is wrong with the card's YAML front matter at the default branch (invalid YAML, not a mapping, a field of the wrong type); empty when nothing is. The push that brought it was kept.",
    }),
  ),
};

/** `GET /api/{type}s/{owner}/{name}`: what the Hugging Face clients read of a repository. */
export const RepoInfo = Type.Object(
  {
    _id: Type.String({ format: "uuid" }),
    id: Type.String({ description: "`<owner>/<name>`." }),
    author: Type.String(),
    type: RepoTypeSchema,
    sha: Type.Union([Type.String(), Type.Null()], { description: "The commit the revision resolves to." }),
    private: Type.Boolean(),
    gated: GatedSetting,
    createdAt: Type.String({ format: "date-time" }),
    lastModified: Type.String({ format: "date-time" }),
    sdk: Type.Optional(SpaceSdk),
    xetEnabled: Type.Boolean({ description: "Whether uploads may go through Xet storage." }),
    usedStorage: Type.Optional(
      Type.Integer({
        description:
          "The bytes the repository stores (git objects, LFS objects, Xet xorbs with shared chunks once); only with expand=usedStorage.",
      }),
    ),
    siblings: Type.Array(RepoSibling),
    ...RepoDiscoveryFields,
  },
  { title: "RepoInfo" },
);
export type RepoInfo = Static<typeof RepoInfo>;

/**
 * The info answer's schema: the whole `RepoInfo`, or, when `expand` names fields, `_id`, `id` and those
 * fields only (as the Hugging Face Hub answers `?expand[]=sha`).
 */
export const RepoInfoFields = Type.Composite(
  [Type.Pick(RepoInfo, ["_id", "id"]), Type.Partial(Type.Omit(RepoInfo, ["_id", "id"]))],
  { title: "RepoInfoFields" },
);
export type RepoInfoFields = Static<typeof RepoInfoFields>;

export const RepoPathParams = Type.Object({ owner: Type.String(), name: Type.String() });
export type RepoPathParams = Static<typeof RepoPathParams>;

/**
 * Whether a commit's signature is trusted: `verified` when it validates with a
 * registered key of an account and the commit's author email is that
 * account's verified email; `unverified` with the reason otherwise.
 */
export const CommitSignature = Type.Object(
  {
    state: Type.Union([Type.Literal("verified"), Type.Literal("unverified"), Type.Literal("unsigned")]),
    reason: Type.Optional(
      Type.Union(
        [
          Type.Literal("bad_signature"),
          Type.Literal("unknown_key"),
          Type.Literal("email_mismatch"),
          Type.Literal("unsupported_signature"),
        ],
        {
          description:
            "Why a signed commit is unverified: the signature does not validate, no registered key made it, the author email is not the key owner's verified email, or the hub cannot check this kind of signature (X.509, SSH security keys).",
        },
      ),
    ),
    key: Type.Optional(
      Type.Object(
        {
          id: AccountKey.properties.id,
          type: AccountKey.properties.type,
          fingerprint: AccountKey.properties.fingerprint,
          user: Type.String({ description: "The account the key belongs to." }),
        },
        { description: "The registered key that made the signature, when there is one." },
      ),
    ),
  },
  { title: "CommitSignature" },
);
export type CommitSignature = Static<typeof CommitSignature>;

/** One commit, as the history (in the shape the Hugging Face clients read) and commit info show it. */
export const CommitItem = Type.Object(
  {
    id: Type.String(),
    title: Type.String(),
    message: Type.String(),
    date: Type.String({ format: "date-time" }),
    authors: Type.Array(Type.Object({ user: Type.String() })),
    signature: CommitSignature,
    formatted: Type.Optional(
      Type.Object(
        { title: Type.String(), message: Type.String() },
        {
          description: "With `expand[]=formatted`: the title and message as HTML, safe to insert in a page.",
        },
      ),
    ),
  },
  { title: "CommitItem" },
);
export type CommitItem = Static<typeof CommitItem>;

/** One repository in `GET /api/{type}s`, the listing the Hugging Face clients page through. */
export const RepoListItem = Type.Object(
  {
    _id: Type.String(),
    id: Type.String(),
    author: Type.String(),
    private: Type.Boolean(),
    gated: GatedSetting,
    createdAt: Type.String({ format: "date-time" }),
    lastModified: Type.String({ format: "date-time" }),
    sdk: Type.Optional(SpaceSdk),
    ...RepoDiscoveryFields,
  },
  { title: "RepoListItem" },
);
export type RepoListItem = Static<typeof RepoListItem>;
