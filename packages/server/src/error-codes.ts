/** One entry of the catalog: the statuses a code comes with, the area that raises it, and what it means. */
export interface ErrorCodeEntry {
  statuses: readonly number[];
  area: string;
  summary: string;
}

/**
 * Every error code the hub answers with: the `code` of the shared error schema,
 * of the OAuth error body and of the Router's OpenAI error object. A code is
 * stable once shipped; clients branch on it. docs/errors.md is generated from
 * this list (`renderErrorCatalog`) and a test keeps the two equal.
 */
export const ERROR_CODES = {
  access_already_granted: { statuses: [409], area: "gating", summary: "You already have access to …." },
  access_denied: { statuses: [400], area: "device", summary: "The sign-in was denied in the browser." },
  access_not_needed: {
    statuses: [409],
    area: "gating",
    summary: "You may already download …: you own it or belong to its organization.",
  },
  access_request_decided: {
    statuses: [409],
    area: "gating",
    summary: "Your request for access to … was already …; only a pending request can be withdrawn.",
  },
  access_request_not_found: {
    statuses: [404],
    area: "gating",
    summary: "You have no request for access to ….",
  },
  access_request_pending: {
    statuses: [409],
    area: "gating",
    summary:
      "Your request for access to … already awaits review; withdraw it with DELETE on this URL to change it.",
  },
  access_request_rejected: {
    statuses: [403],
    area: "gating",
    summary:
      'The authors of … rejected your request…")` : ""}; you may ask again only once they change their decision.',
  },
  access_request_unchanged: { statuses: [409], area: "gating", summary: "The request of … is already …." },
  account_deletion_blocked: {
    statuses: [409],
    area: "account-deletion",
    summary:
      "The account cannot be deleted yet: the answer lists each blocker, such as being the sole admin of an organization with other members.",
  },
  account_restricted: {
    statuses: [402],
    area: "router",
    summary:
      "Routed inference is restricted for this billing owner; ask the operator, or use byok billing with your own provider key.",
  },
  all_providers_failed: {
    statuses: [502],
    area: "router",
    summary: "Every candidate failed before answering (…); retry with backoff or pin a healthy provider.",
  },
  already_member: {
    statuses: [409],
    area: "orgs",
    summary: "… is already a member of …; change their role instead.",
  },
  author_already_claimed: {
    statuses: [409],
    area: "papers",
    summary: 'Another account already claims to be "…" on arXiv …; pick the name that is yours.',
  },
  authorization_pending: {
    statuses: [400],
    area: "device",
    summary: "Waiting for the sign-in to be approved in the browser; poll again after the interval.",
  },
  avatar_too_large: {
    statuses: [400],
    area: "profile",
    summary: "Avatars may have at most … bytes; send a smaller image.",
  },
  bad_request: {
    statuses: [400, 405, 414, 431],
    area: "general",
    summary: "The request could not be understood; check its method, headers and body.",
  },
  bill_to_not_allowed: {
    statuses: [403],
    area: "router",
    summary: "… is on the … plan; only team and enterprise organizations can be billed for inference.",
  },
  branch_exists: {
    statuses: [409],
    area: "refs",
    summary: "Branch … already exists; pass overwrite to move it.",
  },
  branch_moved: {
    statuses: [409],
    area: "files",
    summary: "… moved while this commit was made; retry it on the new head.",
  },
  card_expired: { statuses: [400], area: "billing", summary: "The card expired in …; record a current one." },
  card_number_refused: {
    statuses: [400],
    area: "billing",
    summary:
      "The … looks like a card number; the hub never stores one. Give only the last four digits (--last4).",
  },
  claimed_author_removed: {
    statuses: [400],
    area: "papers",
    summary: '"…" is claimed by an account; keep the name in the authors list.',
  },
  client_secret_required: {
    statuses: [400],
    area: "sso",
    summary: "Send the clientSecret the provider gave the hub; it is needed the first time only.",
  },
  collection_description_too_long: {
    statuses: [400],
    area: "collections",
    summary: "A collection's description may have at most … characters; shorten it.",
  },
  collection_exists: {
    statuses: [409],
    area: "collections",
    summary:
      '… already has a collection titled "…" (its slug is in the answer); choose another title or use that one.',
  },
  collection_item_exists: {
    statuses: [409],
    area: "collections",
    summary: "The … … is already in collection …; update its note or position instead.",
  },
  collection_item_not_found: {
    statuses: [404],
    area: "collections",
    summary: "Collection … has no item …; list its items with GET /api/collections/{slug}.",
  },
  collection_not_found: {
    statuses: [404],
    area: "collections",
    summary:
      "Collection … was not found, or you may not see it; check the slug (owner/title-id) and your token.",
  },
  collection_note_too_long: {
    statuses: [400],
    area: "collections",
    summary: "An item's note may have at most … characters; shorten it.",
  },
  comment_hidden: {
    statuses: [409],
    area: "discussions",
    summary: "The comment is hidden and can no longer be edited.",
  },
  comment_not_found: {
    statuses: [404],
    area: "discussions",
    summary: "The comment … is not in discussion #….",
  },
  comment_too_long: {
    statuses: [400],
    area: "discussions",
    summary: "A comment or description is 64 KiB or more; shorten it.",
  },
  confirmation_mismatch: {
    statuses: [400],
    area: "account-deletion",
    summary: '"confirm" must be your username: send {"confirm": "…"} to delete the account ….',
  },
  confirmation_required: {
    statuses: [400],
    area: "account-deletion",
    summary: 'Confirm by sending your username: {"confirm": "…"}.',
  },
  default_branch: {
    statuses: [400],
    area: "refs",
    summary: "… is the default branch and cannot be deleted.",
  },
  delivery_in_progress: {
    statuses: [409],
    area: "webhooks",
    summary: "This delivery is being attempted right now; look again in a moment.",
  },
  discussion_closed: {
    statuses: [409],
    area: "discussions",
    summary: "The pull request is closed or merged: reopen it (closed ones) before merging or pushing to it.",
  },
  discussion_not_found: {
    statuses: [404],
    area: "discussions",
    summary: "Discussion #… of … does not exist.",
  },
  dumb_http_unsupported: {
    statuses: [403],
    area: "git",
    summary: "Only git's smart HTTP protocol is served; use git 1.6.6 or newer.",
  },
  duplicate_hardware: {
    statuses: [400],
    area: "hardware",
    summary: '"…" is listed twice; give its count instead.',
  },
  email_taken: { statuses: [409], area: "account", summary: "Another account already uses …." },
  empty_repository: {
    statuses: [409],
    area: "discussions",
    summary: "A pull request needs a commit on the target branch to start from; push a first commit.",
  },
  entry_not_found: {
    statuses: [404],
    area: "files",
    summary: "… was not found at this revision: a file with this name doesn't exist.",
  },
  expired_token: {
    statuses: [400],
    area: "device",
    summary: "The sign-in expired before it was approved; start a new one.",
  },
  expired_user_code: {
    statuses: [400],
    area: "device",
    summary: "This code has expired; start the sign-in in your terminal again for a new one.",
  },
  file_too_large: {
    statuses: [400],
    area: "files",
    summary: '… is over … bytes; upload it through LFS (preupload says "lfs" for it).',
  },
  forbidden: { statuses: [403], area: "auth", summary: "You may only read your own account." },
  gated_repo: {
    statuses: [401, 403],
    area: "gating",
    summary:
      "The repository is gated: ask for access on its page (or with POST …/ask-access) and wait until it is granted.",
  },
  handle_reserved: {
    statuses: [409],
    area: "account",
    summary:
      'The handle "…" was recently given up by another account and is reserved for it until …; choose another.',
  },
  handle_taken: { statuses: [409], area: "account", summary: 'The handle "…" is taken; choose another.' },
  headers_too_large: {
    statuses: [431],
    area: "general",
    summary:
      "The request line and headers are larger than the hub accepts (16 KiB); send a shorter URL or fewer headers.",
  },
  history_protected: {
    statuses: [409],
    area: "storage",
    summary:
      "… rewrites history, which the repository protects (denyForcePush); turn that setting off first.",
  },
  identity_taken: {
    statuses: [409],
    area: "profile",
    summary: "The … identity … is linked to another account.",
  },
  insufficient_credit: {
    statuses: [402],
    area: "router",
    summary:
      "The billing owner has no credit left for routed inference; add credit, bill another owner, or use byok billing.",
  },
  insufficient_scope: {
    statuses: [403],
    area: "auth",
    summary: "This token may revoke only itself; use a write token or sign in to revoke others.",
  },
  internal_error: {
    statuses: [500],
    area: "general",
    summary:
      "The hub failed to handle this request; the operator can find details in its log under this request id.",
  },
  invalid_access_request_handle: {
    statuses: [400],
    area: "gating",
    summary:
      "Name the request by exactly one of `user` (the requester's username) or `requestId` (as the request lists show it).",
  },
  invalid_amount: {
    statuses: [400],
    area: "settings",
    summary: "Give a positive amount of USD, e.g. 25 or 2.50.",
  },
  invalid_api_key: {
    statuses: [401],
    area: "router",
    summary:
      "No valid token with inference:run was sent to the Router; send Authorization: Bearer <token> with a token that has that scope.",
  },
  invalid_arxiv_id: { statuses: [400], area: "papers", summary: '"…" is not an arXiv identifier: ….' },
  invalid_author: { statuses: [400], area: "papers", summary: "An author's name may not be blank." },
  invalid_avatar: {
    statuses: [400],
    area: "profile",
    summary: "The body is empty; send the image file's bytes.",
  },
  invalid_bill_to: {
    statuses: [400],
    area: "router",
    summary: 'X-Service-Bill-To names no organization ("…"); use an organization handle.',
  },
  invalid_billing_mode: {
    statuses: [400],
    area: "router",
    summary: "X-Service-Inference-Billing must be auto, routed or byok.",
  },
  invalid_card_brand: { statuses: [400], area: "billing", summary: "The brand must be one of …." },
  invalid_card_metadata: {
    statuses: [400],
    area: "files",
    summary:
      "The YAML metadata block of a repository card does not parse or is not a mapping; each problem is listed in errors.",
  },
  invalid_collection_item: {
    statuses: [400],
    area: "collections",
    summary: "A collection cannot hold itself; add another collection.",
  },
  invalid_collection_title: {
    statuses: [400],
    area: "collections",
    summary: "A collection's title must have 1 to … characters, not only spaces.",
  },
  invalid_commit: { statuses: [400], area: "files", summary: "Line … of the commit is not JSON." },
  invalid_country: {
    statuses: [400],
    area: "billing",
    summary: "Give the country as its two-letter ISO 3166-1 code, e.g. DE.",
  },
  invalid_credentials: {
    statuses: [401],
    area: "auth",
    summary: "The user name or password is wrong; check both and try again.",
  },
  invalid_csrf_token: {
    statuses: [403],
    area: "auth",
    summary:
      "A browser's change came without this hub's request-forgery token or from another site; reload the page and try again.",
  },
  invalid_cursor: {
    statuses: [400],
    area: "webhooks",
    summary: "cursor must be a next_cursor value from a previous page.",
  },
  invalid_email: { statuses: [400], area: "account", summary: '"…" is not an email address.' },
  invalid_expiry: { statuses: [400], area: "billing", summary: "Give the expiry as YYYY-MM, e.g. 2030-12." },
  invalid_external_name: {
    statuses: [400],
    area: "profile",
    summary: '"…" is not a name at …: use up to 100 letters, digits and . _ @ + -.',
  },
  invalid_fullname: { statuses: [400], area: "profile", summary: "The display name may not be blank." },
  invalid_grant: {
    statuses: [400],
    area: "device",
    summary:
      "The device code is unknown, was already used, or belongs to another client_id; start a new sign-in.",
  },
  invalid_handle: {
    statuses: [400],
    area: "account",
    summary: '"…" is not a valid handle: use 1 to 40 lower-case letters, digits or inner dashes.',
  },
  invalid_holder: {
    statuses: [400],
    area: "billing",
    summary: "The holder is 1 to 100 characters on one line.",
  },
  invalid_issuer: { statuses: [400], area: "sso", summary: "The issuer is refused: …." },
  invalid_json: { statuses: [400], area: "general", summary: "The body is empty; send a JSON object." },
  invalid_key: { statuses: [400], area: "settings", summary: "The key holds whitespace; paste it alone." },
  invalid_last4: {
    statuses: [400],
    area: "billing",
    summary: "Give the card's last four digits, e.g. 4242.",
  },
  invalid_memory: {
    statuses: [400],
    area: "hardware",
    summary: "… comes with … GiB; send memoryGiB as one of them.",
  },
  invalid_model: {
    statuses: [400],
    area: "router",
    summary: "Set `model` to a model id such as owner/model.",
  },
  invalid_month: { statuses: [400], area: "settings", summary: "Give the month as YYYY-MM, e.g. 2026-11." },
  invalid_organization: {
    statuses: [400],
    area: "tokens",
    summary: 'You are not a member of an organization called "…".',
  },
  invalid_otp: {
    statuses: [400, 401],
    area: "mfa",
    summary:
      "The two-factor code is wrong or expired; send the code your authenticator app shows now, or an unused recovery code.",
  },
  invalid_path: {
    statuses: [400],
    area: "files",
    summary: '"…" is not a valid file path: use relative paths without "", ".", ".." or ".git" segments.',
  },
  invalid_plan: { statuses: [400], area: "billing", summary: "The plan must be one of …." },
  invalid_published_at: {
    statuses: [400],
    area: "papers",
    summary: "arXiv … was numbered in …, so it cannot have been published on ….",
  },
  invalid_ref_name: {
    statuses: [400],
    area: "refs",
    summary: '"…" is not a valid … name; names may not start with "-" or "refs/".',
  },
  invalid_rejection_reason: {
    statuses: [400],
    area: "gating",
    summary: 'A rejection reason goes only with status "rejected"; leave it out.',
  },
  invalid_repo_name: {
    statuses: [400],
    area: "repos",
    summary:
      '"…" is not a valid repository name: use up to 96 lower-case letters, digits, ".", "_" or "-", starting with a letter or digit, without ".." or a ".git" ending.',
  },
  invalid_request: { statuses: [400], area: "device", summary: 'The body field "…" is required.' },
  invalid_role: { statuses: [400], area: "orgs", summary: 'Role must be one of …; got "…".' },
  invalid_scope: {
    statuses: [400],
    area: "device",
    summary: 'Ask for "read" or "write" alone, or for distinct scopes separated by spaces from: ….',
  },
  invalid_session: { statuses: [401], area: "auth", summary: "Your session has ended; sign in again." },
  invalid_status: {
    statuses: [400],
    area: "discussions",
    summary: "A status the discussion cannot take (draft is for pull requests; merged only by merging).",
  },
  invalid_title: { statuses: [400], area: "papers", summary: "The title may not be blank." },
  invalid_token: {
    statuses: [401],
    area: "auth",
    summary:
      "The token is invalid, revoked or expired; create a new one and send it as Authorization: Bearer <token>.",
  },
  invalid_token_request: {
    statuses: [400],
    area: "tokens",
    summary: "Give exactly one of `scopes` (a fine-grained token) or `role` (read or write).",
  },
  invalid_url: {
    statuses: [400],
    area: "general",
    summary: "The URL is not valid: a %-escape in its path does not decode to UTF-8 text.",
  },
  invalid_value: {
    statuses: [400],
    area: "content-preferences",
    summary: '"…" is not a repository id (owner/name).',
  },
  invalid_watched: { statuses: [400], area: "webhooks", summary: 'No … is called "…".…' },
  invalid_webhook_url: {
    statuses: [400],
    area: "webhooks",
    summary:
      "The webhook URL is not an http(s) URL the hub may call (credentials in it, or a private or loopback address); use a public address.",
  },
  invalid_website: {
    statuses: [400],
    area: "profile",
    summary: '"…" is not a URL; send an http or https URL.',
  },
  key_email_mismatch: {
    statuses: [400],
    area: "keys",
    summary:
      "A GPG key must carry your account's verified email address; add that address to the key (gpg --edit-key, adduid) or verify your email first.",
  },
  key_exists: {
    statuses: [409],
    area: "keys",
    summary: "The key … is already registered; each key belongs to one account.",
  },
  last_admin: {
    statuses: [409],
    area: "orgs",
    summary: "… is the last admin of …; make another member admin first.",
  },
  lfs_lock_not_found: { statuses: [404], area: "lfs", summary: "No such lock in this repository." },
  lfs_locked: {
    statuses: [403],
    area: "lfs",
    summary: "… is locked by …; unlock with --force if you administer the repository.",
  },
  lfs_object_in_use: {
    statuses: [409],
    area: "storage",
    summary:
      "The LFS object is the content of a file on a branch, tag or pull request: delete or replace that file first.",
  },
  lfs_object_mismatch: {
    statuses: [422],
    area: "lfs",
    summary: "… bytes arrived, … were announced. Nothing was stored.",
  },
  lfs_object_missing: {
    statuses: [422],
    area: "files",
    summary: "…: LFS object … was not uploaded to this repository; upload it through the batch API first.",
  },
  lfs_object_not_found: {
    statuses: [404],
    area: "lfs",
    summary: "Object does not exist in this repository.",
  },
  lfs_parts_incomplete: {
    statuses: [422],
    area: "lfs",
    summary: "Some parts are missing or do not match their ETags; upload them again.",
  },
  lfs_transfer_url_invalid: {
    statuses: [403],
    area: "lfs",
    summary: "This transfer URL is invalid or has expired; ask the batch API for a new one.",
  },
  logout_needs_session: {
    statuses: [400],
    area: "auth",
    summary:
      "Logout ends a browser session; an access token stays valid until it is revoked with DELETE /api/me/tokens/{tokenId}.",
  },
  merge_conflict: {
    statuses: [409],
    area: "discussions",
    summary:
      "The pull request conflicts with its target branch in the files named; merge the target into refs/pr/… and resolve them first.",
  },
  mfa_already_enabled: {
    statuses: [409],
    area: "mfa",
    summary:
      "Two-factor authentication is already on. To move to another app, turn it off (DELETE /api/me/mfa) and enroll again.",
  },
  mfa_enrollment_changed: {
    statuses: [409],
    area: "mfa",
    summary:
      "The enrollment changed while this code was checked (it was restarted or confirmed elsewhere); check GET /api/me/mfa.",
  },
  mfa_enrollment_not_started: {
    statuses: [409],
    area: "mfa",
    summary: "No enrollment awaits a code; start one with POST /api/me/mfa/totp.",
  },
  mfa_not_enabled: {
    statuses: [409],
    area: "mfa",
    summary:
      "Two-factor authentication is off for this account; turn it on with POST /api/me/mfa/totp first.",
  },
  mfa_required: {
    statuses: [401],
    area: "mfa",
    summary:
      "This account uses two-factor authentication: send the 6-digit code your authenticator app shows (or a recovery code) as `otp` along with the password.",
  },
  model_not_found: {
    statuses: [404],
    area: "router",
    summary: "other ? `… is a … model; call ….` : `No provider serves …; list the models at GET /v1/models.",
  },
  monthly_limit_reached: {
    statuses: [402],
    area: "router",
    summary:
      "The monthly hard limit of this billing owner is reached; raise it in the inference preferences or wait for next month.",
  },
  no_billing_route: { statuses: [409], area: "router", summary: "No provider can be paid for this request." },
  not_found: {
    statuses: [404],
    area: "general",
    summary:
      "The thing the request names does not exist or is not visible to the caller; the message names it.",
  },
  not_paper_editor: {
    statuses: [403],
    area: "auth",
    summary:
      "Only the accounts that claimed authorship of this paper edit it (its submitter, until one has); claim it with POST /api/me/papers.",
  },
  not_pull_request: {
    statuses: [400],
    area: "discussions",
    summary: "#… is a discussion, not a pull request: only pull requests have commits, diffs and merges.",
  },
  nothing_to_merge: {
    statuses: [409],
    area: "discussions",
    summary: "The pull request holds no commit its target branch lacks; push commits to refs/pr/… first.",
  },
  notification_not_found: {
    statuses: [404],
    area: "notifications",
    summary: "You have no notification …; list them with GET /api/notifications.",
  },
  origin_not_allowed: {
    statuses: [403],
    area: "mcp",
    summary:
      "The MCP server answers MCP clients and this hub's own pages, not pages of …; call it from a client that sends no Origin.",
  },
  otp_already_used: {
    statuses: [401],
    area: "mfa",
    summary:
      "This code was already used; wait for your authenticator app to show the next one and send that.",
  },
  outside_token_bounds: {
    statuses: [403],
    area: "auth",
    summary: "This token is bounded to an organization; … needs a token for the whole account.",
  },
  paper_already_claimed: { statuses: [409], area: "papers", summary: "You already claim arXiv … (claim …)." },
  paper_already_submitted: {
    statuses: [409],
    area: "papers",
    summary: "You already submitted arXiv … (submission …).",
  },
  paper_metadata_required: {
    statuses: [400],
    area: "papers",
    summary:
      "The hub does not know arXiv … yet; send its title and authors (and, if you like, summary and publishedAt).",
  },
  parent_commit_mismatch: {
    statuses: [412],
    area: "files",
    summary: "… is at …, not …: fetch the branch again and redo your change.",
  },
  provider_key_missing: {
    statuses: [409],
    area: "router",
    summary:
      "No provider key is saved for …; save one at PUT /api/me/inference/provider-keys/{provider}, or use routed billing.",
  },
  rate_limited: { statuses: [429], area: "general", summary: "Too many requests; retry in … seconds." },
  reauthentication_required: {
    statuses: [401],
    area: "auth",
    summary:
      "… needs recent reauthentication: POST your password (and your two-factor code as `otp`, when two-factor authentication is on) to /api/auth/reauthenticate with this credential, then",
  },
  ref_name_conflict: {
    statuses: [409],
    area: "refs",
    summary:
      "A branch or tag cannot be called main/sub while main exists (nor main while main/sub exists): git stores a ref name as a file. Choose another name.",
  },
  ref_changed: {
    statuses: [409],
    area: "refs",
    summary: "A ref moved while the operation ran; fetch it again and retry.",
  },
  repo_exists: {
    statuses: [409],
    area: "repos",
    summary: "Repository … already exists; choose another name or use it.",
  },
  repo_moved: {
    statuses: [307],
    area: "repos",
    summary: "Repository …/… moved to …; update your links and remotes.",
  },
  repo_not_found: {
    statuses: [404],
    area: "general",
    summary: "Repository … was not found, or you may not see it; check the name and your token.",
  },
  repo_not_gated: {
    statuses: [400],
    area: "gating",
    summary:
      '… is not gated: anyone who may read it downloads it. Its writers gate it with PUT /api/…s/…/settings {"gated": "auto" | "manual"}.',
  },
  request_too_large: {
    statuses: [413],
    area: "general",
    summary: "The body is too large; send a smaller one.",
  },
  reserved_handle: {
    statuses: [400],
    area: "account",
    summary: '"…" is reserved by the hub; choose another handle.',
  },
  revision_not_found: {
    statuses: [404],
    area: "files",
    summary: "Revision … was not found in …; check the branch, tag or commit.",
  },
  route_not_found: {
    statuses: [404],
    area: "general",
    summary: "No route … …; see /api/openapi.json for the API.",
  },
  router_error: {
    statuses: [502],
    area: "router",
    summary: "The Router failed to handle this request; retry with backoff.",
  },
  session_required: {
    statuses: [403],
    area: "auth",
    summary: "Approve device sign-ins in a browser signed in to the hub; a token cannot approve them.",
  },
  slow_down: {
    statuses: [400],
    area: "device",
    summary: "Polled too soon; wait … seconds between polls from now on.",
  },
  sso_denied: { statuses: [403], area: "sso", summary: "The identity provider refused the sign-in: ……." },
  sso_email_domain: {
    statuses: [403],
    area: "sso",
    summary: "The ID token was refused: …. Sign in to the provider with your … account.",
  },
  sso_id_token_rejected: {
    statuses: [403],
    area: "sso",
    summary:
      "The identity provider's … was refused: …. Sign in again; if it keeps failing, ask an admin of … to check its SSO settings.",
  },
  sso_identity_in_use: {
    statuses: [403],
    area: "sso",
    summary:
      "This identity provider account already signs another hub account in to …; sign in to the provider as yourself.",
  },
  sso_identity_mismatch: {
    statuses: [403],
    area: "sso",
    summary:
      "Your hub account signs in to … as another identity provider account; sign in to the provider as that one, or ask an admin to remove you from the organization and add you again.",
  },
  sso_not_configured: {
    statuses: [404],
    area: "sso",
    summary: "The organization … has no single sign-on; an admin sets it with PUT /api/organizations/…/sso.",
  },
  sso_provider_error: {
    statuses: [502],
    area: "sso",
    summary:
      "The organization's identity provider answered with an error (its code is named); an admin should check the SSO settings.",
  },
  sso_required: {
    statuses: [403],
    area: "auth",
    summary:
      "…The organization … requires single sign-on: open … in a browser signed in to the hub, sign in with its identity provider, then retry.",
  },
  sso_state_invalid: {
    statuses: [400],
    area: "sso",
    summary:
      "This sign-in is unknown, already finished, expired, or was started by another account; start again at ….",
  },
  status_unchanged: {
    statuses: [409],
    area: "discussions",
    summary: "The discussion already has this status.",
  },
  stream_interrupted: {
    statuses: [502],
    area: "router",
    summary: "The provider stopped mid-stream (…); the output above is partial. Retry as a new request.",
  },
  suppression_exists: {
    statuses: [409],
    area: "content-preferences",
    summary: "You already asked not to be recommended ….",
  },
  tag_exists: {
    statuses: [409],
    area: "refs",
    summary: "Tag … already exists; delete it first or choose another name.",
  },
  tag_not_found: { statuses: [404], area: "refs", summary: "Tag … does not exist in …." },
  token_required: {
    statuses: [403],
    area: "mcp",
    summary:
      "The MCP server takes an access token, not a browser session or SSH key: send Authorization: Bearer <token>, or no credential for public content.",
  },
  too_many_otp_attempts: {
    statuses: [429],
    area: "mfa",
    summary: "Too many wrong two-factor codes for this account; wait … seconds, then try again.",
  },
  too_many_webhooks: {
    statuses: [409],
    area: "webhooks",
    summary: "An owner may keep … webhooks; delete one first.",
  },
  unauthenticated: {
    statuses: [401],
    area: "auth",
    summary: "Reauthenticate with a token or a signed-in session.",
  },
  unknown_author: {
    statuses: [400],
    area: "papers",
    summary: '"…" is not among the authors of arXiv … (…); send your name as the paper lists it.',
  },
  unknown_collection_item: {
    statuses: [404],
    area: "collections",
    summary: "No … called … exists, or you may not see it; check its id and type.",
  },
  unknown_hardware: {
    statuses: [400],
    area: "hardware",
    summary: '"…" is not in the hardware catalog; pick an accelerator id from GET /api/hardware.',
  },
  unknown_provider: {
    statuses: [400],
    area: "profile",
    summary: '"…" is not a provider the hub knows; use one of ….',
  },
  unknown_url: {
    statuses: [404],
    area: "router",
    summary:
      "… … is not a Router operation; use POST /v1/chat/completions, /v1/responses or /v1/embeddings, or GET /v1/models.",
  },
  unknown_user_code: {
    statuses: [404],
    area: "device",
    summary: "No sign-in has this code; check it against the code your terminal shows.",
  },
  unsupported_grant_type: {
    statuses: [400],
    area: "device",
    summary: "Only grant_type=… is supported here.",
  },
  unsupported_media_type: {
    statuses: [415],
    area: "files",
    summary: "Send the commit as Content-Type: application/x-ndjson.",
  },
  unsupported_parameter: {
    statuses: [400],
    area: "repos",
    summary:
      "A parameter (or value) the hub does not honour yet, such as a listing filter or create_pr; the request is refused rather than answered as if it had been honoured.",
  },
  uri_too_long: {
    statuses: [414],
    area: "general",
    summary: "A segment of the URL path is longer than the hub accepts; check the names in the URL.",
  },
  user_code_used: {
    statuses: [409],
    area: "device",
    summary:
      "This code was already approved or denied; start the sign-in in your terminal again if you need a new one.",
  },
  user_renamed: {
    statuses: [307],
    area: "profile",
    summary: "The user … is now called …; update your links.",
  },
  username_unchanged: { statuses: [400], area: "username", summary: 'Your username already is "…".' },
  validation_failed: {
    statuses: [400, 422],
    area: "sso",
    summary: 'The querystring field "code" is required.',
  },
  weak_password: { statuses: [400], area: "account", summary: "Passwords need at least … characters." },
  webhook_disabled: {
    statuses: [409],
    area: "webhooks",
    summary: "This webhook is switched off; enable it first, then redeliver.",
  },
  xet_fetch_url_invalid: {
    statuses: [403],
    area: "xet",
    summary: "This fetch URL has expired; ask /v1/reconstructions for the file again.",
  },
  xet_range_not_satisfiable: {
    statuses: [416],
    area: "xet",
    summary:
      'range "bytes=…" is not satisfiable for a file of … bytes: it starts at or after the end of the file',
  },
  xet_shard_invalid: {
    statuses: [400],
    area: "xet",
    summary:
      "the shard names … xorb(s) this hub does not hold, or that were uploaded for repositories you may not read: …; upload them first. Nothing was recorded.",
  },
  xet_token_invalid: {
    statuses: [401],
    area: "xet",
    summary:
      "Send a Xet token from xet-read-token or xet-write-token as Authorization: Bearer <token>; this one is missing, invalid or expired.",
  },
  xet_unavailable: {
    statuses: [404],
    area: "xet",
    summary:
      "This repository stores large files with Git LFS, not Xet: set HF_HUB_DISABLE_XET=1 and retry (or turn xetEnabled on in its settings).",
  },
  xet_xorb_invalid: {
    statuses: [400],
    area: "xet",
    summary: "xorb hash mismatch: its … chunks hash to …, but it was uploaded as ….",
  },
} as const satisfies Record<string, ErrorCodeEntry>;

/** A code from the catalog. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** docs/errors.md: the catalog as a table by area. */
export function renderErrorCatalog(): string {
  const entries = Object.entries(ERROR_CODES) as Array<[ErrorCode, ErrorCodeEntry]>;
  const areas = [...new Set(entries.map(([, entry]) => entry.area))].sort();
  const sections = areas.map((area) => {
    const rows = entries
      .filter(([, entry]) => entry.area === area)
      .map(
        ([code, entry]) =>
          `| \`${code}\` | ${entry.statuses.join(", ")} | ${entry.summary.replaceAll("|", "\\|")} |`,
      );
    return [`## ${area}`, "", "| Code | Status | Example message |", "| --- | --- | --- |", ...rows].join(
      "\n",
    );
  });
  return [
    "# Error codes",
    "",
    "Every error the hub answers with carries a stable `code`: in the shared error schema",
    '(`{"error": message, "code", "field"?}`) on the Hub API, in `error.code` of the OpenAI error',
    "object on the Router, and in `error` of OAuth's error body where OAuth defines the code. Branch on the",
    "code, never on the message: messages say what to do and may be reworded. Repository, revision and file",
    "lookups also send `X-Error-Code` and `X-Error-Message`, which the Hugging Face clients read. Git LFS",
    'answers its errors in the body git-lfs reads, `{"message", "request_id"}`, without the code.',
    "",
    "This page is generated from `packages/server/src/error-codes.ts`; a test keeps them equal",
    "(regenerate with `HUB_UPDATE_ERROR_DOCS=1 npx vitest run packages/server/src/error-codes.test.ts`).",
    "",
    ...sections.flatMap((section) => [section, ""]),
  ].join("\n");
}
