import type { AccessRequestStatus } from "@hub/api";

/*
 * Row types of every table. Timestamps are ISO-8601 UTC strings and flags are
 * 0/1 integers on both dialects, so one set of migrations and one set of
 * queries behave the same on SQLite and PostgreSQL.
 */

export interface UserRow {
  id: string;
  handle: string;
  email: string;
  email_verified: number;
  fullname: string;
  password_hash: string | null;
  is_admin: number;
  created_at: string;
}

/** The editable profile beyond the display name; `social` is a JSON object of handles by network. */
export interface UserProfileRow {
  user_id: string;
  bio: string;
  website: string;
  location: string;
  social: string;
  /** The avatar file's SHA-256, or null for the default avatar. */
  avatar_sha256: string | null;
  avatar_type: string | null;
  updated_at: string;
}

/**
 * A handle an account renamed away from: kept for it until `reserved_until`, redirecting until claimed.
 * `user_id` is null once the account (or organization) that held it was deleted: then nobody may take it.
 */
export interface HandleReservationRow {
  handle: string;
  user_id: string | null;
  reserved_until: string;
  created_at: string;
}

/** An identity at another provider linked to an account. */
export interface SocialIdentityRow {
  user_id: string;
  provider: string;
  external_name: string;
  visible: number;
  linked_at: string;
}

/** Declared hardware; `accelerators` is a JSON list of `{id, count, memoryGiB}`. */
export interface UserHardwareRow {
  user_id: string;
  accelerators: string;
  cpu: string | null;
  system_memory_gib: number | null;
  updated_at: string;
}

/**
 * An account's TOTP (RFC 6238): the active secret and the pending one of an
 * unconfirmed enrollment, both sealed; `last_used_step` is the time step of the
 * last accepted code, so no code is accepted twice.
 */
export interface UserMfaRow {
  user_id: string;
  totp_secret: string | null;
  enrolled_at: string | null;
  last_used_step: number | null;
  pending_secret: string | null;
  pending_since: string | null;
}

/** A one-time recovery code: only its SHA-256 digest; `used_at` once spent. */
export interface UserMfaRecoveryCodeRow {
  id: string;
  user_id: string;
  code_hash: string;
  created_at: string;
  used_at: string | null;
}

/** The explicit content preferences; each list is JSON. */
export interface ContentPreferencesRow {
  user_id: string;
  hidden_tags: string;
  languages: string;
  content_filters: string;
  updated_at: string;
}

/** What an account did with a repository (`download`), counted; interests are learned from it. */
export interface AccountActivityRow {
  user_id: string;
  repository_id: string;
  kind: string;
  count: number;
  first_at: string;
  last_at: string;
}

export interface RecommendationSuppressionRow {
  id: string;
  user_id: string;
  kind: string;
  value: string;
  created_at: string;
}

/** An arXiv paper; `arxiv_id` is normalised and versionless, `authors` a JSON list of names, `published_at` a day. */
export interface PaperRow {
  arxiv_id: string;
  version: number | null;
  title: string;
  authors: string;
  summary: string;
  published_at: string | null;
  created_at: string;
  updated_at: string;
}

/** The account's plan, once the operator set one. */
export interface BillingAccountRow {
  user_id: string;
  plan: string;
  updated_at: string;
}

/** The payment method on file, masked: never a card number. */
export interface PaymentMethodRow {
  user_id: string;
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  holder: string | null;
  billing_email: string | null;
  country: string | null;
  created_at: string;
  updated_at: string;
}

export interface PaperSubmissionRow {
  id: string;
  user_id: string;
  arxiv_id: string;
  created_at: string;
}

/** An account's claim to be the author `author_name` of a paper; `visible` is 0 or 1. */
export interface PaperClaimRow {
  id: string;
  user_id: string;
  arxiv_id: string;
  author_name: string;
  visible: number;
  created_at: string;
  updated_at: string;
}

/** A repository whose README on the default branch cites the paper. */
export interface PaperCitationRow {
  arxiv_id: string;
  repository_id: string;
  created_at: string;
}

export interface OrganizationRow {
  id: string;
  handle: string;
  fullname: string;
  plan: string;
  created_at: string;
}

/** An organization's single sign-on: its OpenID Connect provider and whether members must use it. */
export interface OrganizationSsoRow {
  organization_id: string;
  issuer: string;
  client_id: string;
  sealed_client_secret: string;
  email_domain: string | null;
  required: number;
  /** Null: the hub's default length. */
  session_seconds: number | null;
  updated_at: string;
}

/** A member's SSO sign-in with an organization's provider, valid until `expires_at`. */
export interface SsoAuthorizationRow {
  organization_id: string;
  user_id: string;
  subject: string;
  email: string | null;
  signed_in_at: string;
  expires_at: string;
}

/** An SSO sign-in under way: the hashes of its state and nonce, and its sealed PKCE verifier. */
export interface SsoLoginRow {
  state_hash: string;
  organization_id: string;
  user_id: string;
  nonce_hash: string;
  sealed_code_verifier: string;
  created_at: string;
  expires_at: string;
}

export interface MembershipRow {
  organization_id: string;
  user_id: string;
  role: string;
  created_at: string;
}

export interface RepositoryRow {
  id: string;
  owner_id: string;
  owner_type: string;
  type: string;
  name: string;
  private: number;
  default_branch: string;
  created_at: string;
  updated_at: string;
  /** `auto` or `manual` for a gated repository, null otherwise. */
  gated: string | null;
  /** The SDK of a Space (`gradio`, `streamlit`, `docker`, `static`); null for models and datasets. */
  space_sdk: string | null;
  /** 1 when uploads may go through Xet storage (the default), 0 when only Git LFS is offered. */
  xet_enabled: number;
}

/** An account following another account. */
export interface UserFollowRow {
  follower_id: string;
  user_id: string;
  created_at: string;
}

/** An account following an organization. */
export interface OrganizationFollowRow {
  follower_id: string;
  organization_id: string;
  created_at: string;
}

/** An account's request to download a gated repository; `fields` is a JSON object of its answers. */
export interface RepoAccessRequestRow {
  repository_id: string;
  user_id: string;
  status: AccessRequestStatus;
  fields: string | null;
  requested_at: string;
  decided_at: string | null;
  rejection_reason: string | null;
}

export interface LfsObjectRow {
  repository_id: string;
  oid: string;
  size: number;
  created_at: string;
}

/**
 * A xorb the Xet CAS stored (under the object store's `xet/xorbs` namespace): its serialized size, and its chunk
 * table (per chunk: hash, record length, uncompressed length; packed, base64) so shards are checked and files
 * planned without reading the xorb again.
 */
export interface XetXorbRow {
  hash: string;
  size: number;
  chunk_count: number;
  unpacked_size: number;
  chunks: string;
  created_at: string;
}

/** A repository a xorb was uploaded for: who may use it in shards, and whose storage it counts in. */
export interface XetXorbLinkRow {
  xorb_hash: string;
  repository_id: string;
  created_at: string;
}

/** A file a shard registered: its Xet hash, SHA-256 (its LFS object id), size and terms (packed, base64). */
export interface XetFileRow {
  file_hash: string;
  sha256: string;
  size: number;
  terms: string;
  created_at: string;
}

/** A chunk the global deduplication API answers for (eligible chunks and files' first chunks), in a xorb. */
export interface XetDedupChunkRow {
  chunk_hash: string;
  xorb_hash: string;
}

export interface RepoRedirectRow {
  type: string;
  owner_handle: string;
  name: string;
  repository_id: string;
  created_at: string;
}

export interface LfsLockRow {
  id: string;
  repository_id: string;
  path: string;
  owner_id: string;
  created_at: string;
}

export interface AccountKeyRow {
  id: string;
  user_id: string;
  title: string;
  type: string;
  algorithm: string;
  fingerprint: string;
  public_key: string;
  created_at: string;
  last_used_at: string | null;
}

/** One key id (of the primary key or a subkey) of a registered GPG key. */
export interface GpgKeyIdRow {
  key_id: string;
  account_key_id: string;
}

export interface AccessTokenRow {
  id: string;
  user_id: string;
  name: string;
  secret_hash: string;
  token_prefix: string;
  role: string | null;
  scopes: string | null;
  organization_id: string | null;
  repositories: string | null;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  reauthenticated_at: string | null;
}

export interface SessionRow {
  id: string;
  user_id: string;
  secret_hash: string;
  created_at: string;
  expires_at: string;
  reauthenticated_at: string | null;
}

/** A Router credential minted by a browser session: `inference:run` only, for a few minutes, gone with its session. */
export interface SessionInferenceTokenRow {
  id: string;
  session_id: string;
  secret_hash: string;
  created_at: string;
  expires_at: string;
}

/** A device sign-in (RFC 8628): `pending`, then `approved` or `denied`; `consumed` once its token is issued. */
export interface DeviceCodeRow {
  id: string;
  device_code_hash: string;
  /** Upper case, without the dash. */
  user_code: string;
  client_id: string;
  /** The requested role, or null when `scopes` were requested. */
  role: string | null;
  /** The requested scopes (JSON list), or null for a role. */
  scopes: string | null;
  status: string;
  /** The account that approved or denied it. */
  user_id: string | null;
  /** The scopes the person approved (JSON list), a subset of `scopes`. */
  granted_scopes: string | null;
  interval_seconds: number;
  last_polled_at: string | null;
  created_at: string;
  expires_at: string;
}

/** Money columns are bigint: PostgreSQL returns them as strings, SQLite as numbers. */
type Nanos = number | string | bigint;

export interface InferenceOwnerRow {
  owner_id: string;
  owner_type: string;
  provider_order: string;
  disabled_providers: string;
  default_policy: string | null;
  monthly_limit_nanousd: Nanos | null;
  balance_nanousd: Nanos;
  period: string;
  period_spend_nanousd: Nanos;
  restricted: number;
  updated_at: string;
}

export interface InferenceProviderKeyRow {
  owner_id: string;
  provider: string;
  sealed_key: string;
  key_hint: string;
  created_at: string;
  updated_at: string;
}

export interface InferenceUsageRow {
  inference_id: string;
  owner_id: string;
  user_id: string;
  provider: string;
  model: string;
  task: string;
  billing: string;
  stream: number;
  status: number;
  input_tokens: number;
  output_tokens: number;
  cost_nanousd: Nanos;
  latency_ms: number;
  ttft_ms: number | null;
  created_at: string;
}

export interface CreditGrantRow {
  id: string;
  owner_id: string;
  amount_nanousd: Nanos;
  note: string;
  created_at: string;
}

export interface WebhookRow {
  id: string;
  owner_id: string;
  owner_type: "user" | "org";
  url: string;
  /** JSON array of domains. */
  domains: string;
  description: string;
  sealed_secret: string;
  disabled: number;
  disabled_reason: string | null;
  disabled_at: string | null;
  consecutive_failures: number;
  failing_since: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookWatchRow {
  webhook_id: string;
  kind: "namespace" | "repository";
  target_id: string;
  position: number;
}

export interface WebhookDeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  scope: string;
  action: string;
  payload: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  attempts_left: number;
  next_attempt_at: string | null;
  lease_until: string | null;
  redelivery: number;
  created_at: string;
  delivered_at: string | null;
}

export interface WebhookAttemptRow {
  id: string;
  delivery_id: string;
  attempted_at: string;
  duration_ms: number;
  outcome: string;
  status_code: number | null;
  response_excerpt: string | null;
  error: string | null;
  redelivery: number;
}

/** A discussion or pull request; `num` counts per repository; a pull request's head is the ref `refs/pr/{num}`. */
export interface DiscussionRow {
  id: string;
  repository_id: string;
  num: number;
  title: string;
  author_id: string | null;
  is_pull_request: number;
  status: string;
  /** The branch a pull request targets. */
  target_branch: string | null;
  merge_commit: string | null;
  pinned: number;
  created_at: string;
  updated_at: string;
}

/** One entry of a discussion's timeline; `data` is JSON whose shape depends on `type`. */
export interface DiscussionEventRow {
  id: string;
  discussion_id: string;
  seq: number;
  type: string;
  author_id: string | null;
  data: string;
  created_at: string;
  updated_at: string;
}

export interface DiscussionReactionRow {
  event_id: string;
  user_id: string;
  reaction: string;
  created_at: string;
}

/**
 * Something in a discussion an account is told of: `activity` says what
 * happened (created, comment, status, title, merged, commit), `reason` why it
 * reached them (mention, participating, owner, watching).
 */
export interface NotificationRow {
  id: string;
  user_id: string;
  discussion_id: string;
  event_id: string | null;
  reason: string;
  activity: string;
  actor_id: string | null;
  read_at: string | null;
  created_at: string;
}

/** An account's choice for a repository's discussions: `watch` (hear of all of them) or `mute` (none). */
export interface RepoWatchRow {
  user_id: string;
  repository_id: string;
  mode: string;
  created_at: string;
}

/**
 * What a repository's default branch said about itself when it was last
 * indexed: its card's front matter (JSON), what was wrong with it, the fields
 * listings filter on, and facts read from its files.
 */
export interface RepoMetadataRow {
  repository_id: string;
  /** The commit indexed. */
  revision: string;
  /** The card's YAML front matter as JSON, null without a card or with invalid YAML. */
  card_data: string | null;
  /** What was wrong with the card's front matter, null when nothing was. */
  card_error: string | null;
  pipeline_tag: string | null;
  library_name: string | null;
  license: string | null;
  /** `{architectures, model_type}` from config.json, JSON; null without one. */
  config: string | null;
  /** `{parameters: {dtype: count}, total}` from the safetensors headers, JSON; null without any. */
  safetensors: string | null;
  num_parameters: number | null;
  total_size: number;
  /** 1 when the repository holds a GGUF file. */
  gguf: number;
  /** What the header of its first GGUF file says (`gguf-header.ts`), JSON; null without one, or unread. */
  gguf_facts: string | null;
  /** 1 when the repository holds an ONNX file. */
  onnx: number;
  indexed_at: string;
}

/** A tag a repository carries (from its card and its files), as listings filter on it. */
export interface RepoTagRow {
  repository_id: string;
  tag: string;
}

/** A model a repository's card names as its base, and how it derives from it. */
export interface RepoBaseModelRow {
  repository_id: string;
  /** The base model's id (`owner/name`), as the card wrote it. */
  base_model: string;
  /** `finetune`, `adapter`, `quantized` or `merge`. */
  relation: string;
}

/** The counts people's signals make on a repository, kept beside it so counting never writes the repository's row. */
export interface RepoStatsRow {
  repository_id: string;
  likes: number;
  /** Downloads in the last 30 days. */
  downloads: number;
  downloads_all_time: number;
  trending_score: number;
}

/** The downloads of a repository on a day (UTC, `YYYY-MM-DD`), counted once per snapshot. */
export interface RepoDownloadRow {
  repository_id: string;
  day: string;
  count: number;
}

/** One account's like of one repository. */
export interface RepoLikeRow {
  repository_id: string;
  user_id: string;
  created_at: string;
}

/** A collection, owned by an account or an organization (exactly one of the two is set). */
export interface CollectionRow {
  /** 24 hexadecimal digits, the tail of the collection's slug. */
  id: string;
  owner_user_id: string | null;
  owner_organization_id: string | null;
  title: string;
  description: string | null;
  private: number;
  /** `orange`, `blue`, `green`, `purple`, `pink` or `indigo`. */
  theme: string;
  /** Its place among its owner's collections, from 0. */
  position: number;
  created_at: string;
  updated_at: string;
}

/** An item of a collection: a repository, a paper or another collection (exactly one is set). */
export interface CollectionItemRow {
  id: string;
  collection_id: string;
  /** `model`, `dataset`, `space`, `paper` or `collection`. */
  item_type: string;
  repository_id: string | null;
  paper_id: string | null;
  item_collection_id: string | null;
  note: string | null;
  /** Its place in the collection, from 0. */
  position: number;
  created_at: string;
}

export interface Database {
  users: UserRow;
  user_profiles: UserProfileRow;
  handle_reservations: HandleReservationRow;
  social_identities: SocialIdentityRow;
  user_hardware: UserHardwareRow;
  content_preferences: ContentPreferencesRow;
  user_mfa: UserMfaRow;
  user_mfa_recovery_codes: UserMfaRecoveryCodeRow;
  account_activity: AccountActivityRow;
  recommendation_suppressions: RecommendationSuppressionRow;
  papers: PaperRow;
  paper_submissions: PaperSubmissionRow;
  paper_claims: PaperClaimRow;
  paper_citations: PaperCitationRow;
  billing_accounts: BillingAccountRow;
  payment_methods: PaymentMethodRow;
  organizations: OrganizationRow;
  memberships: MembershipRow;
  organization_sso: OrganizationSsoRow;
  sso_authorizations: SsoAuthorizationRow;
  sso_logins: SsoLoginRow;
  repositories: RepositoryRow;
  user_follows: UserFollowRow;
  organization_follows: OrganizationFollowRow;
  repo_access_requests: RepoAccessRequestRow;
  lfs_objects: LfsObjectRow;
  xet_xorbs: XetXorbRow;
  xet_xorb_links: XetXorbLinkRow;
  xet_files: XetFileRow;
  xet_dedup_chunks: XetDedupChunkRow;
  repo_redirects: RepoRedirectRow;
  lfs_locks: LfsLockRow;
  account_keys: AccountKeyRow;
  gpg_key_ids: GpgKeyIdRow;
  access_tokens: AccessTokenRow;
  sessions: SessionRow;
  session_inference_tokens: SessionInferenceTokenRow;
  device_codes: DeviceCodeRow;
  inference_owners: InferenceOwnerRow;
  inference_provider_keys: InferenceProviderKeyRow;
  inference_usage: InferenceUsageRow;
  credit_grants: CreditGrantRow;
  webhooks: WebhookRow;
  webhook_watches: WebhookWatchRow;
  webhook_deliveries: WebhookDeliveryRow;
  webhook_attempts: WebhookAttemptRow;
  discussions: DiscussionRow;
  discussion_events: DiscussionEventRow;
  discussion_reactions: DiscussionReactionRow;
  notifications: NotificationRow;
  repo_watches: RepoWatchRow;
  repo_metadata: RepoMetadataRow;
  repo_tags: RepoTagRow;
  repo_base_models: RepoBaseModelRow;
  repo_stats: RepoStatsRow;
  repo_downloads: RepoDownloadRow;
  repo_likes: RepoLikeRow;
  collections: CollectionRow;
  collection_items: CollectionItemRow;
}
