import { SCOPES, type AccessRequestStatus, type GateMode, type RepoType, type Scope } from "@hub/api";
import {
  HubError,
  collectionNotFound,
  forbidden,
  notFound,
  repoNeedsSignIn,
  repoNotFound,
  unauthenticated,
} from "../errors.js";
import type { Credential, Principal } from "./credential.js";
import { ROLE_SCOPES } from "./scopes.js";

/** Membership roles in an organization, weakest first. */
export const ORG_ROLES = ["read", "contributor", "write", "admin"] as const;
export type OrgRole = (typeof ORG_ROLES)[number];

/** A stored role as an OrgRole; null for none (or one this version does not know). */
export function orgRoleOf(value: string | null | undefined): OrgRole | null {
  return ORG_ROLES.find((known) => known === value) ?? null;
}

/**
 * What a caller wants to do. The spec's scopes name the scoped actions; the
 * account actions cover the caller's own identity, token management,
 * approving a device sign-in (RFC 8628), minting a browser session's short-lived
 * Router credential, renaming or deleting the account and managing its
 * two-factor authentication; `settings:*` an owner's settings (the
 * caller's own, or an organization's); `paper:edit` a paper record's
 * metadata; `repo:download` reading a repository's files (what gating guards,
 * beyond `repo:read`'s metadata) and `repo:request-access` asking for that;
 * `discussion:manage` changing the status of someone else's discussion (the
 * repository's writers) and `discussion:moderate` editing, hiding or renaming
 * what someone else wrote in one (its admins), both under `community:write`;
 * `collection:read` and `collection:write` reading and changing a collection
 * (writing under `community:write`: the owner, or an organization's writers).
 */
export type Action =
  | "account:read"
  | "account:manage-tokens"
  | "account:revoke-token"
  | "account:approve-device"
  | "account:mint-session-inference-token"
  | "account:change-username"
  | "account:manage-mfa"
  | "account:delete"
  | "org:read"
  | "org:admin"
  | "settings:read"
  | "settings:write"
  | "repo:download"
  | "repo:request-access"
  | "paper:edit"
  | "discussion:manage"
  | "discussion:moderate"
  | "collection:read"
  | "collection:write"
  | Scope;

export type Owner = { type: "user"; id: string } | { type: "org"; id: string; handle: string };

/** Who settings and spend belong to: an account or an organization. */
export interface SettingsOwner {
  type: "user" | "org";
  id: string;
  handle: string;
}

/** What the action is done to. */
export type Resource =
  | { type: "account"; userId: string }
  | { type: "token"; userId: string; tokenId: string }
  | {
      type: "organization";
      id: string;
      handle: string;
      /** Its SSO settings, sign-in and leaving: reachable without an SSO sign-in, so admins can repair a broken configuration. */
      ssoExempt?: boolean;
    }
  | { type: "namespace"; owner: Owner }
  | {
      type: "repository";
      id: string;
      repoType: RepoType;
      fullName: string;
      owner: Owner;
      private: boolean;
      gated: GateMode | false;
    }
  /** `editors`: the accounts that claimed authorship, or while none has, the paper's submitter. */
  | { type: "paper"; arxivId: string; editors: string[] }
  /** A collection (`id` null for one about to be made), named by its slug in messages. */
  | { type: "collection"; id: string | null; slug: string; owner: Owner; private: boolean };

/**
 * A member's single sign-on with an organization that requires it: whether
 * the member holds a valid SSO sign-in, and where to get one.
 */
export interface SsoStanding {
  organization: string;
  state: "valid" | "missing" | "expired";
  signInUrl: string;
}

/** Everything a decision depends on, loaded before deciding so the rules stay pure. */
export interface DecisionInput {
  principal: Principal | null;
  action: Action;
  resource: Resource;
  /** The caller's role in the organization that owns (or is) the resource, if any. */
  membershipRole: OrgRole | null;
  /** The caller's SSO standing with that organization; null when it requires no SSO or the caller is no member. */
  sso: SsoStanding | null;
  /** The caller's access request to a gated repository; loaded for `repo:download` only. */
  accessRequest?: AccessRequestStatus | null;
  now: Date;
  reauthWindowSeconds: number;
}

export type Decision = { allowed: true } | { allowed: false; error: HubError };

const allow: Decision = { allowed: true };
const deny = (error: HubError): Decision => ({ allowed: false, error });

function rank(role: OrgRole | null): number {
  return role === null ? -1 : ORG_ROLES.indexOf(role);
}

/** The scopes a credential holds: a browser session is the person, with every scope. */
function heldScopes(credential: Credential): readonly Scope[] | "all" {
  if (credential.type === "session" || credential.type === "ssh_key") return "all";
  if (credential.scopes) return credential.scopes;
  return ROLE_SCOPES[credential.role ?? "read"];
}

/** Actions that are no scope themselves but need `repo:read`: downloading and asking for access are reading. */
function readsRepository(action: Action): action is "repo:download" | "repo:request-access" {
  return action === "repo:download" || action === "repo:request-access";
}

/** Actions on discussions beyond taking part: they need `community:write`, and a role in the repository. */
function managesDiscussions(action: Action): action is "discussion:manage" | "discussion:moderate" {
  return action === "discussion:manage" || action === "discussion:moderate";
}

/** The scope a token needs for an action, if any. */
export function scopeFor(action: Action): Scope | null {
  if (readsRepository(action) || action === "collection:read") return "repo:read";
  if (managesDiscussions(action) || action === "collection:write") return "community:write";
  return SCOPES.find((scope) => scope === action) ?? null;
}

function holds(credential: Credential, scope: Scope): boolean {
  const scopes = heldScopes(credential);
  return scopes === "all" || scopes.includes(scope);
}

/**
 * A session, an SSH key or a write role token: the person's own reach. Read
 * role tokens and fine-grained tokens (whatever their scopes) are narrower.
 */
function isStrongCredential(credential: Credential): boolean {
  return credential.type !== "access_token" || (credential.scopes === null && credential.role !== "read");
}

function recentlyReauthenticated(input: DecisionInput, credential: Credential): boolean {
  if (!credential.reauthenticatedAt) return false;
  const age = input.now.getTime() - Date.parse(credential.reauthenticatedAt);
  return age >= 0 && age <= input.reauthWindowSeconds * 1000;
}

/** The 401 of an action that needs recent reauthentication, saying how to get it. */
function reauthenticationRequired(what: string, input: DecisionInput): HubError {
  return new HubError(
    401,
    "reauthentication_required",
    `${what} needs recent reauthentication: POST your password (and your two-factor code as \`otp\`, when two-factor authentication is on) ` +
      `to /api/auth/reauthenticate with this credential, then retry within ${Math.round(input.reauthWindowSeconds / 60)} minutes.`,
  );
}

/**
 * Account changes that alter how the account is reached: only the person, with
 * a session or a write role token, freshly reauthenticated.
 */
const STRONG_ACCOUNT_ACTIONS: Record<
  "account:change-username" | "account:manage-mfa" | "account:delete",
  string
> = {
  "account:change-username": "Changing the username",
  "account:manage-mfa": "Managing two-factor authentication",
  "account:delete": "Deleting the account",
};

function ownerOrgId(resource: Resource): string | null {
  if (resource.type === "organization") return resource.id;
  if (resource.type === "namespace" || resource.type === "repository" || resource.type === "collection") {
    return resource.owner.type === "org" ? resource.owner.id : null;
  }
  return null;
}

/** Actions anyone who may read a repository may do. */
const READ_ACTIONS = new Set<Action>([
  "repo:read",
  "repo:download",
  "repo:request-access",
  "community:write",
]);

const ORG_ACTION_ROLES: Partial<Record<Action, OrgRole>> = {
  "org:read": "read",
  "inference:run": "contributor",
};

/** May the account itself (whatever its credential) do this to the resource? */
function accountMay(input: DecisionInput, principal: Principal): boolean {
  const { action, resource, membershipRole } = input;
  switch (resource.type) {
    case "account":
    case "token":
      return resource.userId === principal.userId;
    case "organization":
      // Reading members needs membership; spending (Router bill-to) needs a role that creates things.
      return rank(membershipRole) >= rank(ORG_ACTION_ROLES[action] ?? "admin");
    case "paper":
      return resource.editors.includes(principal.userId);
    case "namespace":
      if (resource.owner.type === "user") return resource.owner.id === principal.userId;
      return rank(membershipRole) >= rank("contributor");
    case "repository": {
      if (resource.owner.type === "user") {
        if (resource.owner.id === principal.userId) return true;
        return !resource.private && READ_ACTIONS.has(action);
      }
      const canRead = !resource.private || rank(membershipRole) >= rank("read");
      if (READ_ACTIONS.has(action)) return canRead;
      if (action === "repo:delete" || action === "discussion:moderate")
        return rank(membershipRole) >= rank("admin");
      return rank(membershipRole) >= rank("write");
    }
    case "collection": {
      const read = action === "collection:read";
      if (resource.owner.type === "user")
        return resource.owner.id === principal.userId || (read && !resource.private);
      if (read) return !resource.private || rank(membershipRole) >= rank("read");
      return rank(membershipRole) >= rank("write");
    }
  }
}

/**
 * May a webhook route of this owner hear about the repository? A route sees
 * what its owner could read, as the owner and not as any token: public
 * repositories, the owner's own, and for a user the private repositories of
 * organizations where they hold a role. Checked at every event, so a member
 * who leaves stops hearing at once.
 */
export function webhookMaySee(
  owner: Pick<SettingsOwner, "type" | "id">,
  repo: Extract<Resource, { type: "repository" }>,
  ownerRoleInRepoOrganization: OrgRole | null,
  ownerSso: SsoStanding | null,
): boolean {
  if (!repo.private || repo.owner.id === owner.id) return true;
  return (
    owner.type === "user" &&
    repo.owner.type === "org" &&
    rank(ownerRoleInRepoOrganization) >= rank("read") &&
    (ownerSso === null || ownerSso.state === "valid")
  );
}

/** Is the resource inside the boundaries the token was given (organization, repositories)? */
function withinTokenBounds(credential: Credential, resource: Resource): boolean {
  if (credential.type !== "access_token") return true;
  if (credential.organizationId !== null && ownerOrgId(resource) !== credential.organizationId) {
    return false;
  }
  if (credential.repositories !== null) {
    if (resource.type === "namespace" || resource.type === "organization") return false;
    if (resource.type === "collection") return false;
    if (resource.type === "repository") return credential.repositories.includes(resource.fullName);
  }
  return true;
}

type RepositoryResource = Extract<Resource, { type: "repository" }>;

/** Does the gate of a gated repository let this account through: its owner, its organization's members, or an accepted request? */
function passesGate(input: DecisionInput, principal: Principal, resource: RepositoryResource): boolean {
  if (resource.owner.type === "user") {
    if (resource.owner.id === principal.userId) return true;
  } else if (rank(input.membershipRole) >= rank("read")) return true;
  return input.accessRequest === "accepted";
}

/**
 * A download refused by a repository's gate: 401 for anonymous callers, 403
 * otherwise, both with the `GatedRepo` code the Hugging Face clients turn into
 * `GatedRepoError`, and a message saying how to get access.
 */
function gatedRepo(resource: RepositoryResource, request: AccessRequestStatus | null, signedIn: boolean) {
  const ask = `POST /api/${resource.repoType}s/${resource.fullName}/ask-access`;
  const review = resource.gated === "manual" ? ", then wait for its authors to accept it" : "";
  const message = !signedIn
    ? `${resource.fullName} is a gated repository: sign in (send Authorization: Bearer <token>) and ask for access with ${ask}${review}.`
    : request === "pending"
      ? `Your request for access to ${resource.fullName} awaits review by its authors; download again once they accept it (GET /api/me/gated-repositories shows it).`
      : request === "rejected"
        ? `The authors of ${resource.fullName} rejected your request for access (GET /api/me/gated-repositories shows their reason); you may ask again only once they change their decision.`
        : `${resource.fullName} is a gated repository: ask for access with ${ask}${review}.`;
  return new HubError(signedIn ? 403 : 401, "gated_repo", message, {
    headers: {
      "x-error-code": "GatedRepo",
      "x-error-message": `Access to ${resource.fullName} is restricted: ask for access first.`,
      ...(signedIn ? {} : { "www-authenticate": 'Bearer realm="hub"' }),
    },
  });
}

/**
 * What membership grants in an organization that requires single sign-on
 * needs a valid SSO sign-in (passing a gated repository's gate included); what
 * the account may do without its membership (public repositories, a gated one
 * it was accepted to) does not, nor the routes that repair or obtain one.
 */
function ssoGate(input: DecisionInput): Decision | null {
  const { sso, resource, principal } = input;
  if (!sso || sso.state === "valid") return null;
  if (resource.type === "organization" && resource.ssoExempt) {
    // Changing the SSO settings could switch SSO off: without an SSO sign-in, only a freshly reauthenticated admin may.
    if (
      input.action !== "settings:write" ||
      (principal && recentlyReauthenticated(input, principal.credential))
    ) {
      return null;
    }
    return deny(
      reauthenticationRequired("Changing single sign-on settings without a valid SSO sign-in", input),
    );
  }
  if (decideByRole({ ...input, membershipRole: null }).allowed) return null;
  const lapsed = sso.state === "expired" ? "Your SSO sign-in has expired. " : "";
  return deny(
    forbidden(
      "sso_required",
      `${lapsed}The organization ${sso.organization} requires single sign-on: open ${sso.signInUrl} in a browser signed in to the hub, sign in with its identity provider, then retry.`,
    ),
  );
}

/**
 * The one authorization decision of the hub: every surface (HTTP API, git, SSH,
 * Router) asks it. Private things the caller may not read answer 404 so their
 * existence does not leak; anonymous callers get 401; members of an
 * organization that requires single sign-on get 403 `sso_required` until they
 * hold a valid SSO sign-in.
 */
export function decide(input: DecisionInput): Decision {
  const decision = decideByRole(input);
  if (!decision.allowed || !input.principal) return decision;
  return ssoGate(input) ?? decision;
}

/** The only actions `decide` can allow a caller who sent no credential: reading and downloading public repositories, reading public collections. */
const ANONYMOUS_ACTIONS: ReadonlySet<Action> = new Set<Action>([
  "repo:read",
  "repo:download",
  "collection:read",
]);

/**
 * Whether an action could be allowed without a credential, whatever the
 * resource; when not, an anonymous request can be answered 401 before its
 * body is even validated.
 */
export function anonymousMayAttempt(action: Action): boolean {
  return ANONYMOUS_ACTIONS.has(action);
}

/** The 404 of a private repository or collection the caller may not see, so its existence does not leak. */
function notFoundOf(resource: Resource): HubError | null {
  if (resource.type === "repository") return repoNotFound(resource.fullName);
  if (resource.type === "collection") return collectionNotFound(resource.slug);
  return null;
}

/** The decision from the credential, the membership role and the resource, before single sign-on. */
function decideByRole(input: DecisionInput): Decision {
  const { principal, action, resource } = input;
  const gatedDownload =
    resource.type === "repository" && resource.gated !== false && action === "repo:download";
  const publicRead =
    resource.type === "repository" &&
    !resource.private &&
    (action === "repo:read" || (action === "repo:download" && !gatedDownload));
  if (publicRead) return allow;
  if (resource.type === "collection" && !resource.private && action === "collection:read") return allow;
  if (!principal) {
    if (gatedDownload && !resource.private) return deny(gatedRepo(resource, null, false));
    return deny(
      resource.type === "repository"
        ? repoNeedsSignIn(`Sign in to use ${resource.fullName}: send Authorization: Bearer <token>.`)
        : unauthenticated("unauthenticated", "Sign in: send Authorization: Bearer <token>."),
    );
  }
  const { credential } = principal;
  const hidden = (resource.type === "repository" || resource.type === "collection") && resource.private;
  const refuse = (error: HubError) => deny(hidden ? (notFoundOf(resource) ?? error) : error);

  switch (action) {
    case "account:read":
      return accountMay(input, principal)
        ? allow
        : deny(forbidden("forbidden", "You may only read your own account."));
    case "account:manage-tokens":
      if (!accountMay(input, principal))
        return deny(forbidden("forbidden", "You may only manage your own tokens."));
      if (!recentlyReauthenticated(input, credential)) {
        return deny(reauthenticationRequired("Managing tokens", input));
      }
      return allow;
    case "account:revoke-token": {
      if (!accountMay(input, principal)) return deny(notFound("Token not found."));
      const self =
        credential.type === "access_token" &&
        resource.type === "token" &&
        resource.tokenId === credential.tokenId;
      const strong = isStrongCredential(credential);
      if (self || strong) return allow;
      return deny(
        forbidden(
          "insufficient_scope",
          "This token may revoke only itself; use a write token or sign in to revoke others.",
        ),
      );
    }
    case "account:change-username":
    case "account:manage-mfa":
    case "account:delete": {
      // A rename or deletion touches every repository; two-factor settings guard every sign-in.
      const what = STRONG_ACCOUNT_ACTIONS[action];
      if (!accountMay(input, principal))
        return deny(forbidden("forbidden", `${what} is possible only for your own account.`));
      if (!withinTokenBounds(credential, resource)) {
        return deny(
          forbidden(
            "outside_token_bounds",
            `This token is bounded to an organization; ${what.toLowerCase()} needs a token for the whole account.`,
          ),
        );
      }
      const weak = !isStrongCredential(credential);
      if (weak) {
        return deny(
          forbidden("insufficient_scope", `${what} needs a write role token or a signed-in session.`),
        );
      }
      if (!recentlyReauthenticated(input, credential)) {
        return deny(reauthenticationRequired(what, input));
      }
      return allow;
    }
    case "account:approve-device":
      // Approving mints a token for the account: only the person at a browser may, never a token.
      if (credential.type !== "session") {
        return deny(
          forbidden(
            "session_required",
            "Approve device sign-ins in a browser signed in to the hub; a token cannot approve them.",
          ),
        );
      }
      return accountMay(input, principal)
        ? allow
        : deny(forbidden("forbidden", "You may only approve sign-ins to your own account."));
    case "account:mint-session-inference-token":
      // The credential stands in for the browser session and ends with it: a token has no session to end with.
      if (credential.type !== "session") {
        return deny(
          forbidden(
            "session_required",
            "Only a browser session signed in to the hub can get a playground credential; call the Router with your access token instead.",
          ),
        );
      }
      return accountMay(input, principal)
        ? allow
        : deny(forbidden("forbidden", "You may only get a credential for your own account."));
  }

  if (action === "settings:read" || action === "settings:write") {
    if (!withinTokenBounds(credential, resource)) {
      return deny(
        forbidden(
          "outside_token_bounds",
          "This token is bounded to other resources; use a token granted for this one.",
        ),
      );
    }
    const fineGrained = credential.type === "access_token" && credential.scopes !== null;
    const readOnly = credential.type === "access_token" && credential.role === "read";
    if (fineGrained || (action === "settings:write" && readOnly)) {
      return deny(
        forbidden(
          "insufficient_scope",
          "Settings need a role token (read to view, write to change) or a signed-in session.",
        ),
      );
    }
    if (!accountMay(input, principal)) {
      return deny(forbidden("forbidden", "Only the organization's admins manage its settings."));
    }
    return allow;
  }

  if (action === "paper:edit") {
    if (!withinTokenBounds(credential, resource)) {
      return deny(
        forbidden("outside_token_bounds", "This token is bounded to other resources; it cannot edit papers."),
      );
    }
    if (!isStrongCredential(credential)) {
      return deny(
        forbidden("insufficient_scope", "Editing a paper needs a write role token or a signed-in session."),
      );
    }
    if (!accountMay(input, principal)) {
      return deny(
        forbidden(
          "not_paper_editor",
          "Only the accounts that claimed authorship of this paper edit it (its submitter, until one has); claim it with POST /api/me/papers.",
        ),
      );
    }
    return allow;
  }

  if (action === "org:read" || action === "org:admin") {
    if (!withinTokenBounds(credential, resource)) {
      return deny(
        forbidden(
          "outside_token_bounds",
          "This token is bounded to other resources; use a token granted for this one.",
        ),
      );
    }
    const weak = !isStrongCredential(credential);
    if (action === "org:admin" && weak) {
      return deny(
        forbidden(
          "insufficient_scope",
          "Managing an organization needs a write token or a signed-in session.",
        ),
      );
    }
    if (!accountMay(input, principal)) {
      return deny(
        forbidden(
          "forbidden",
          action === "org:read"
            ? "Only the organization's members may do this; ask an admin to add you."
            : "Only the organization's admins may do this.",
        ),
      );
    }
    return allow;
  }

  const scope = scopeFor(action);
  if (scope === null) throw new Error(`The action ${action} has no rule.`);
  if (!holds(credential, scope)) {
    return refuse(
      forbidden("insufficient_scope", `This token lacks the ${scope} scope; create a token that has it.`),
    );
  }
  if (!withinTokenBounds(credential, resource)) {
    return refuse(
      forbidden(
        "outside_token_bounds",
        "This token is bounded to other resources; use a token granted for this one.",
      ),
    );
  }
  if (!accountMay(input, principal)) {
    const readAction = resource.type === "collection" ? "collection:read" : "repo:read";
    const unreadable = hidden && !accountMay({ ...input, action: readAction }, principal);
    const error = forbidden(
      "forbidden",
      "Your account lacks permission for this; ask an owner or admin for access.",
    );
    return unreadable ? refuse(error) : deny(error);
  }
  if (gatedDownload && !passesGate(input, principal, resource)) {
    return deny(gatedRepo(resource, input.accessRequest ?? null, true));
  }
  return allow;
}

/**
 * Whether the caller's own-account action would be refused only for want of a
 * recent reauthentication: previews (rename, deletion) say so in advance.
 */
export function awaitsReauthentication(
  principal: Principal,
  action: Action,
  now: Date,
  reauthWindowSeconds: number,
): boolean {
  const decision = decide({
    principal,
    action,
    resource: { type: "account", userId: principal.userId },
    membershipRole: null,
    sso: null,
    now,
    reauthWindowSeconds,
  });
  return !decision.allowed && decision.error.code === "reauthentication_required";
}
