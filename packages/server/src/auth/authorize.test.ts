import { SCOPES, type AccessRequestStatus, type GateMode, type Scope } from "@hub/api";
import { describe, expect, it } from "vitest";
import {
  decide,
  ORG_ROLES,
  webhookMaySee,
  type Action,
  type OrgRole,
  type Owner,
  type Resource,
  type SsoStanding,
} from "./authorize.js";
import type { Credential, Principal } from "./credential.js";

const NOW = new Date("2026-06-01T12:00:00Z");
/** A reauthentication a minute before NOW: inside the 10-minute window. */
const recent = new Date(NOW.getTime() - 60_000).toISOString();
const ALICE = "user-alice";
const ACME = { type: "org" as const, id: "org-acme", handle: "acme" };
const OTHER = { type: "org" as const, id: "org-other", handle: "other" };

function token(overrides: Partial<Extract<Credential, { type: "access_token" }>> = {}): Credential {
  return {
    type: "access_token",
    tokenId: "tok-1",
    name: "t",
    role: "write",
    scopes: null,
    organizationId: null,
    repositories: null,
    createdAt: NOW.toISOString(),
    reauthenticatedAt: null,
    ...overrides,
  };
}

const session: Credential = { type: "session", sessionId: "s-1", reauthenticatedAt: null };
const principal = (credential: Credential): Principal => ({
  userId: ALICE,
  handle: "alice",
  fullname: "Alice",
  isAdmin: false,
  credential,
});

function decision(
  p: Principal | null,
  action: Action,
  resource: Resource,
  membershipRole: OrgRole | null = null,
  sso: SsoStanding | null = null,
  accessRequest: AccessRequestStatus | null = null,
) {
  return decide({
    principal: p,
    action,
    resource,
    membershipRole,
    sso,
    accessRequest,
    now: NOW,
    reauthWindowSeconds: 600,
  });
}

function check(...args: Parameters<typeof decision>) {
  const decided = decision(...args);
  return decided.allowed ? 200 : decided.error.status;
}

const repo = (
  owner: Owner,
  isPrivate: boolean,
  name = "model",
  gated: GateMode | false = false,
): Resource => ({
  type: "repository",
  id: `repo-${name}`,
  repoType: "model",
  fullName: `${owner.type === "org" ? owner.handle : owner.id === ALICE ? "alice" : "bob"}/${name}`,
  owner,
  private: isPrivate,
  gated,
});
const aliceOwner = { type: "user" as const, id: ALICE };
const bobOwner = { type: "user" as const, id: "user-bob" };

describe("decide: role tokens against the scope each action needs", () => {
  const expected: Record<"read" | "write" | "admin", Scope[]> = {
    read: ["repo:read", "inference:run"],
    write: [...SCOPES],
    admin: [...SCOPES],
  };
  const cases = (["read", "write", "admin"] as const).flatMap((role) =>
    SCOPES.map((scope) => [role, scope, expected[role].includes(scope) ? 200 : 403] as const),
  );
  it.each(cases)("a %s token doing %s on its own account: %i", (role, scope, status) => {
    expect(check(principal(token({ role })), scope, { type: "account", userId: ALICE })).toBe(status);
  });
});

describe("decide: fine-grained tokens hold exactly their scopes", () => {
  const cases = SCOPES.flatMap((held) =>
    SCOPES.map((wanted) => [held, wanted, held === wanted ? 200 : 403] as const),
  );
  it.each(cases)("a token with %s doing %s: %i", (held, wanted, status) => {
    expect(
      check(principal(token({ role: null, scopes: [held] })), wanted, { type: "account", userId: ALICE }),
    ).toBe(status);
  });
});

describe("decide: repositories, visibility and ownership", () => {
  const write = principal(token({ role: "write" }));
  const read = principal(token({ role: "read" }));
  const cases: Array<[string, Principal | null, Action, Resource, OrgRole | null, number]> = [
    ["anonymous reads a public repo", null, "repo:read", repo(bobOwner, false), null, 200],
    ["anonymous reads a private repo", null, "repo:read", repo(bobOwner, true), null, 401],
    ["anonymous writes a public repo", null, "repo:write", repo(bobOwner, false), null, 401],
    ["owner reads own private repo", read, "repo:read", repo(aliceOwner, true), null, 200],
    ["owner with read token writes own repo", read, "repo:write", repo(aliceOwner, false), null, 403],
    ["owner with read token writes own private repo", read, "repo:write", repo(aliceOwner, true), null, 404],
    ["owner writes own repo", write, "repo:write", repo(aliceOwner, true), null, 200],
    ["owner deletes own repo", write, "repo:delete", repo(aliceOwner, false), null, 200],
    ["outsider reads another's private repo", write, "repo:read", repo(bobOwner, true), null, 404],
    ["outsider writes another's private repo", write, "repo:write", repo(bobOwner, true), null, 404],
    ["outsider writes another's public repo", write, "repo:write", repo(bobOwner, false), null, 403],
    [
      "outsider comments on another's public repo",
      write,
      "community:write",
      repo(bobOwner, false),
      null,
      200,
    ],
    ["session writes own repo", principal(session), "repo:write", repo(aliceOwner, false), null, 200],
    ["creates in own namespace", write, "repo:write", { type: "namespace", owner: aliceOwner }, null, 200],
    [
      "creates in another's namespace",
      write,
      "repo:write",
      { type: "namespace", owner: bobOwner },
      null,
      403,
    ],
  ];
  const orgExpectations: Record<
    OrgRole | "none",
    Record<"read" | "write" | "delete" | "create" | "manage", number>
  > = {
    none: { read: 404, write: 404, delete: 404, create: 403, manage: 403 },
    read: { read: 200, write: 403, delete: 403, create: 403, manage: 403 },
    contributor: { read: 200, write: 403, delete: 403, create: 200, manage: 403 },
    write: { read: 200, write: 200, delete: 403, create: 200, manage: 403 },
    admin: { read: 200, write: 200, delete: 200, create: 200, manage: 200 },
  };
  for (const role of ["none", ...ORG_ROLES] as const) {
    const membership = role === "none" ? null : role;
    const e = orgExpectations[role];
    cases.push(
      [`org ${role} reads a private org repo`, write, "repo:read", repo(ACME, true), membership, e.read],
      [`org ${role} writes a private org repo`, write, "repo:write", repo(ACME, true), membership, e.write],
      [
        `org ${role} deletes a private org repo`,
        write,
        "repo:delete",
        repo(ACME, true),
        membership,
        e.delete,
      ],
      [
        `org ${role} creates in the org`,
        write,
        "repo:write",
        { type: "namespace", owner: ACME },
        membership,
        e.create,
      ],
      [
        `org ${role} manages org webhooks`,
        write,
        "webhooks:manage",
        { type: "organization", id: ACME.id, handle: "acme" },
        membership,
        e.manage,
      ],
      [`org ${role} reads a public org repo`, write, "repo:read", repo(ACME, false), membership, 200],
    );
  }
  it.each(cases)("%s: %i", (_name, p, action, resource, membership, status) => {
    expect(check(p, action, resource, membership)).toBe(status);
  });
});

describe("decide: token boundaries", () => {
  const bounded = principal(token({ organizationId: ACME.id }));
  const granted = principal(
    token({ role: null, scopes: ["repo:read", "repo:write"], repositories: ["acme/model"] }),
  );
  const cases: Array<[string, Principal, Action, Resource, OrgRole | null, number]> = [
    ["org-bounded token writes inside its org", bounded, "repo:write", repo(ACME, true), "write", 200],
    [
      "org-bounded token writes in the user's own repo",
      bounded,
      "repo:write",
      repo(aliceOwner, false),
      null,
      403,
    ],
    [
      "org-bounded token reads the user's own private repo",
      bounded,
      "repo:read",
      repo(aliceOwner, true),
      null,
      404,
    ],
    [
      "org-bounded token writes in another org it belongs to",
      bounded,
      "repo:write",
      repo(OTHER, false),
      "admin",
      403,
    ],
    ["org-bounded token reads a public repo elsewhere", bounded, "repo:read", repo(OTHER, false), null, 200],
    [
      "org-bounded token manages account keys",
      bounded,
      "account:keys",
      { type: "account", userId: ALICE },
      null,
      403,
    ],
    [
      "org-bounded token reads the account",
      bounded,
      "account:read",
      { type: "account", userId: ALICE },
      null,
      200,
    ],
    ["org-bounded token still needs membership", bounded, "repo:write", repo(ACME, false), "read", 403],
    ["repo-bounded token writes its granted repo", granted, "repo:write", repo(ACME, false), "write", 200],
    [
      "repo-bounded token writes another repo of the org",
      granted,
      "repo:write",
      repo(ACME, false, "other"),
      "write",
      403,
    ],
    [
      "repo-bounded token reads another private repo",
      granted,
      "repo:read",
      repo(ACME, true, "other"),
      "write",
      404,
    ],
    [
      "repo-bounded token creates a repo",
      granted,
      "repo:write",
      { type: "namespace", owner: ACME },
      "write",
      403,
    ],
    ["repo-bounded token reads a public repo elsewhere", granted, "repo:read", repo(OTHER, false), null, 200],
    ["repo-bounded token cannot exceed the account", granted, "repo:write", repo(ACME, false), "read", 403],
  ];
  it.each(cases)("%s: %i", (_name, p, action, resource, membership, status) => {
    expect(check(p, action, resource, membership)).toBe(status);
  });
});

describe("decide: account actions", () => {
  const own = { type: "account" as const, userId: ALICE };
  const stale = new Date(NOW.getTime() - 11 * 60_000).toISOString();
  const future = new Date(NOW.getTime() + 60_000).toISOString();
  const cases: Array<[string, Principal | null, Action, Resource, number]> = [
    ["anonymous reads an account", null, "account:read", own, 401],
    ["a read token reads its account", principal(token({ role: "read" })), "account:read", own, 200],
    [
      "a token reads another account",
      principal(token()),
      "account:read",
      { type: "account", userId: "user-bob" },
      403,
    ],
    ["tokens managed without reauthentication", principal(token()), "account:manage-tokens", own, 401],
    [
      "tokens managed a minute after reauthentication",
      principal(token({ reauthenticatedAt: recent })),
      "account:manage-tokens",
      own,
      200,
    ],
    [
      "tokens managed eleven minutes after reauthentication",
      principal(token({ reauthenticatedAt: stale })),
      "account:manage-tokens",
      own,
      401,
    ],
    [
      "a reauthentication time in the future is not trusted",
      principal(token({ reauthenticatedAt: future })),
      "account:manage-tokens",
      own,
      401,
    ],
    [
      "a session manages tokens after reauthentication",
      principal({ ...session, reauthenticatedAt: recent }),
      "account:manage-tokens",
      own,
      200,
    ],
    [
      "a fine-grained token manages tokens after reauthentication",
      principal(token({ role: null, scopes: ["repo:read"], reauthenticatedAt: recent })),
      "account:manage-tokens",
      own,
      200,
    ],
    ["anonymous renames an account", null, "account:change-username", own, 401],
    [
      "a write token renames without reauthentication",
      principal(token()),
      "account:change-username",
      own,
      401,
    ],
    [
      "a write token renames after reauthentication",
      principal(token({ reauthenticatedAt: recent })),
      "account:change-username",
      own,
      200,
    ],
    [
      "a session renames after reauthentication",
      principal({ ...session, reauthenticatedAt: recent }),
      "account:change-username",
      own,
      200,
    ],
    [
      "a session renames eleven minutes after reauthentication",
      principal({ ...session, reauthenticatedAt: stale }),
      "account:change-username",
      own,
      401,
    ],
    [
      "a read token renames after reauthentication",
      principal(token({ role: "read", reauthenticatedAt: recent })),
      "account:change-username",
      own,
      403,
    ],
    [
      "a fine-grained token renames after reauthentication",
      principal(token({ role: null, scopes: [...SCOPES], reauthenticatedAt: recent })),
      "account:change-username",
      own,
      403,
    ],
    [
      "an organization-bounded token renames after reauthentication",
      principal(token({ organizationId: ACME.id, reauthenticatedAt: recent })),
      "account:change-username",
      own,
      403,
    ],
    [
      "a session renames another account",
      principal({ ...session, reauthenticatedAt: recent }),
      "account:change-username",
      { type: "account", userId: "user-bob" },
      403,
    ],
    ["anonymous manages two-factor authentication", null, "account:manage-mfa", own, 401],
    [
      "a write token manages two-factor authentication without reauthentication",
      principal(token()),
      "account:manage-mfa",
      own,
      401,
    ],
    [
      "a write token manages two-factor authentication after reauthentication",
      principal(token({ reauthenticatedAt: recent })),
      "account:manage-mfa",
      own,
      200,
    ],
    [
      "a session manages two-factor authentication after reauthentication",
      principal({ ...session, reauthenticatedAt: recent }),
      "account:manage-mfa",
      own,
      200,
    ],
    [
      "a session manages two-factor authentication eleven minutes after reauthentication",
      principal({ ...session, reauthenticatedAt: stale }),
      "account:manage-mfa",
      own,
      401,
    ],
    [
      "a read token manages two-factor authentication after reauthentication",
      principal(token({ role: "read", reauthenticatedAt: recent })),
      "account:manage-mfa",
      own,
      403,
    ],
    [
      "a fine-grained token manages two-factor authentication after reauthentication",
      principal(token({ role: null, scopes: [...SCOPES], reauthenticatedAt: recent })),
      "account:manage-mfa",
      own,
      403,
    ],
    [
      "an organization-bounded token manages two-factor authentication",
      principal(token({ organizationId: ACME.id, reauthenticatedAt: recent })),
      "account:manage-mfa",
      own,
      403,
    ],
    [
      "a session manages another account's two-factor authentication",
      principal({ ...session, reauthenticatedAt: recent }),
      "account:manage-mfa",
      { type: "account", userId: "user-bob" },
      403,
    ],
    ["anonymous deletes an account", null, "account:delete", own, 401],
    ["a write token deletes without reauthentication", principal(token()), "account:delete", own, 401],
    [
      "a write token deletes after reauthentication",
      principal(token({ reauthenticatedAt: recent })),
      "account:delete",
      own,
      200,
    ],
    [
      "a session deletes after reauthentication",
      principal({ ...session, reauthenticatedAt: recent }),
      "account:delete",
      own,
      200,
    ],
    [
      "a session deletes eleven minutes after reauthentication",
      principal({ ...session, reauthenticatedAt: stale }),
      "account:delete",
      own,
      401,
    ],
    [
      "a read token deletes after reauthentication",
      principal(token({ role: "read", reauthenticatedAt: recent })),
      "account:delete",
      own,
      403,
    ],
    [
      "a fine-grained token deletes after reauthentication",
      principal(token({ role: null, scopes: [...SCOPES], reauthenticatedAt: recent })),
      "account:delete",
      own,
      403,
    ],
    [
      "an organization-bounded token deletes after reauthentication",
      principal(token({ organizationId: ACME.id, reauthenticatedAt: recent })),
      "account:delete",
      own,
      403,
    ],
    [
      "a session deletes another account",
      principal({ ...session, reauthenticatedAt: recent }),
      "account:delete",
      { type: "account", userId: "user-bob" },
      403,
    ],
    ["a session approves a device sign-in", principal(session), "account:approve-device", own, 200],
    ["a write token approves a device sign-in", principal(token()), "account:approve-device", own, 403],
    ["anonymous approves a device sign-in", null, "account:approve-device", own, 401],
    [
      "a session approves a sign-in to another account",
      principal(session),
      "account:approve-device",
      { type: "account", userId: "user-bob" },
      403,
    ],
    [
      "a session mints its playground credential",
      principal(session),
      "account:mint-session-inference-token",
      own,
      200,
    ],
    [
      "a write token mints a playground credential",
      principal(token()),
      "account:mint-session-inference-token",
      own,
      403,
    ],
    [
      "an inference:run token mints a playground credential",
      principal(token({ role: null, scopes: ["inference:run"] })),
      "account:mint-session-inference-token",
      own,
      403,
    ],
    ["anonymous mints a playground credential", null, "account:mint-session-inference-token", own, 401],
    [
      "a session mints a playground credential for another account",
      principal(session),
      "account:mint-session-inference-token",
      { type: "account", userId: "user-bob" },
      403,
    ],
    [
      "a write token revokes a sibling",
      principal(token()),
      "account:revoke-token",
      { type: "token", userId: ALICE, tokenId: "tok-2" },
      200,
    ],
    [
      "a read token revokes a sibling",
      principal(token({ role: "read" })),
      "account:revoke-token",
      { type: "token", userId: ALICE, tokenId: "tok-2" },
      403,
    ],
    [
      "a read token revokes itself",
      principal(token({ role: "read" })),
      "account:revoke-token",
      { type: "token", userId: ALICE, tokenId: "tok-1" },
      200,
    ],
    [
      "a fine-grained token revokes a sibling",
      principal(token({ role: null, scopes: [...SCOPES] })),
      "account:revoke-token",
      { type: "token", userId: ALICE, tokenId: "tok-2" },
      403,
    ],
    [
      "a token revokes another account's token",
      principal(token()),
      "account:revoke-token",
      { type: "token", userId: "user-bob", tokenId: "tok-9" },
      404,
    ],
  ];
  it.each(cases)("%s: %i", (_name, p, action, resource, status) => {
    expect(check(p, action, resource)).toBe(status);
  });

  it("says which credential two-factor settings need, and that reauthentication takes the code", () => {
    const codeOf = (credential: Credential) => {
      const decision = decide({
        principal: principal(credential),
        action: "account:manage-mfa",
        resource: own,
        membershipRole: null,
        sso: null,
        now: NOW,
        reauthWindowSeconds: 600,
      });
      return decision.allowed ? null : { code: decision.error.code, message: decision.error.message };
    };
    expect(codeOf(token({ role: "read", reauthenticatedAt: recent }))?.code).toBe("insufficient_scope");
    expect(codeOf(token({ role: null, scopes: ["repo:read"], reauthenticatedAt: recent }))?.code).toBe(
      "insufficient_scope",
    );
    const unconfirmed = codeOf(session);
    expect(unconfirmed?.code).toBe("reauthentication_required");
    expect(unconfirmed?.message).toMatch(/two-factor code as `otp`.*within 10 minutes/);
  });
});

describe("decide: organizations that require single sign-on", () => {
  const signInUrl = "https://hub.example/api/organizations/acme/sso/login";
  const standing = (state: SsoStanding["state"]): SsoStanding => ({ organization: "acme", state, signInUrl });
  const write = principal(token());
  const fineGrained = principal(token({ role: null, scopes: ["repo:read", "repo:write"] }));
  const org = { type: "organization" as const, id: ACME.id, handle: "acme" };
  const exempt = { ...org, ssoExempt: true };
  const cases: Array<[string, Principal, Action, Resource, OrgRole, SsoStanding["state"] | null, number]> = [
    [
      "a member without SSO reads a private org repo",
      write,
      "repo:read",
      repo(ACME, true),
      "read",
      "missing",
      403,
    ],
    ["a member whose SSO expired reads it", write, "repo:read", repo(ACME, true), "read", "expired", 403],
    ["a member with SSO reads it", write, "repo:read", repo(ACME, true), "read", "valid", 200],
    ["an org that requires no SSO", write, "repo:read", repo(ACME, true), "read", null, 200],
    [
      "a session without SSO reads it",
      principal(session),
      "repo:read",
      repo(ACME, true),
      "admin",
      "missing",
      403,
    ],
    [
      "a member without SSO reads a public org repo",
      write,
      "repo:read",
      repo(ACME, false),
      "read",
      "missing",
      200,
    ],
    ["...and comments on it", write, "community:write", repo(ACME, false), "read", "missing", 200],
    ["...but cannot write it", write, "repo:write", repo(ACME, false), "write", "missing", 403],
    [
      "...nor create in the org",
      write,
      "repo:write",
      { type: "namespace", owner: ACME },
      "write",
      "missing",
      403,
    ],
    ["...nor delete as admin", write, "repo:delete", repo(ACME, true), "admin", "missing", 403],
    ["an admin without SSO manages org webhooks", write, "webhooks:manage", org, "admin", "missing", 403],
    ["an admin without SSO reads org settings", write, "settings:read", org, "admin", "missing", 403],
    ["an admin without SSO lists members", write, "org:read", org, "admin", "missing", 403],
    ["an admin without SSO manages members", write, "org:admin", org, "admin", "expired", 403],
    ["an admin without SSO reads the SSO settings", write, "settings:read", exempt, "admin", "missing", 200],
    [
      "an admin without SSO changes the SSO settings",
      write,
      "settings:write",
      exempt,
      "admin",
      "expired",
      401,
    ],
    [
      "an admin without SSO changes the SSO settings after reauthentication",
      principal(token({ reauthenticatedAt: recent })),
      "settings:write",
      exempt,
      "admin",
      "missing",
      200,
    ],
    ["an admin with SSO changes the SSO settings", write, "settings:write", exempt, "admin", "valid", 200],
    ["a member without SSO starts a sign-in", write, "org:read", exempt, "read", "missing", 200],
    [
      "a non-admin without SSO changes the SSO settings",
      write,
      "settings:write",
      exempt,
      "write",
      "missing",
      403,
    ],
    ["a fine-grained token on the SSO settings", fineGrained, "settings:read", exempt, "admin", "valid", 403],
    [
      "a fine-grained token of a member with SSO",
      fineGrained,
      "repo:read",
      repo(ACME, true),
      "read",
      "valid",
      200,
    ],
    [
      "a fine-grained token of a member without SSO",
      fineGrained,
      "repo:read",
      repo(ACME, true),
      "read",
      "missing",
      403,
    ],
  ];
  it.each(cases)("%s", (_name, p, action, resource, role, state, status) => {
    expect(check(p, action, resource, role, state === null ? null : standing(state))).toBe(status);
  });

  it("lets membership pass a gated repository's gate only with a valid sign-in; an accepted request needs none", () => {
    const gated = repo(ACME, false, "gated", "manual");
    const download = (state: SsoStanding["state"], request: AccessRequestStatus | null = null) =>
      decision(write, "repo:download", gated, "read", standing(state), request);
    const missing = download("missing");
    expect(missing.allowed ? "" : missing.error.code).toBe("sso_required");
    expect(download("valid").allowed).toBe(true);
    expect(download("expired", "accepted").allowed).toBe(true);
  });

  it("says why and where to sign in", () => {
    const missing = decision(write, "repo:read", repo(ACME, true), "read", standing("missing"));
    expect(missing.allowed).toBe(false);
    if (missing.allowed) return;
    expect(missing.error.code).toBe("sso_required");
    expect(missing.error.message).toContain(signInUrl);
    const expired = decision(write, "repo:read", repo(ACME, true), "read", standing("expired"));
    expect(expired.allowed ? "" : expired.error.message).toMatch(/expired/);
  });

  it("denies before SSO what the role denies anyway, with the role's answer", () => {
    expect(check(write, "repo:write", repo(ACME, true), "read", standing("missing"))).toBe(403);
    const readToken = principal(token({ role: "read" }));
    const weak = decision(readToken, "repo:write", repo(ACME, false), "write", standing("missing"));
    expect(weak.allowed ? "" : weak.error.code).toBe("insufficient_scope");
    const hidden = decision(readToken, "repo:write", repo(ACME, true), "write", standing("missing"));
    expect(hidden.allowed ? "" : hidden.error.code).toBe("repo_not_found");
  });

  it("keeps a member's webhooks from hearing about private repos until they sign in", () => {
    const owner = { type: "user" as const, id: ALICE };
    const privateRepo = repo(ACME, true) as Extract<Resource, { type: "repository" }>;
    expect(webhookMaySee(owner, privateRepo, "read", standing("missing"))).toBe(false);
    expect(webhookMaySee(owner, privateRepo, "read", standing("valid"))).toBe(true);
    expect(webhookMaySee(owner, privateRepo, "read", null)).toBe(true);
    expect(webhookMaySee(owner, repo(ACME, false) as typeof privateRepo, "read", standing("missing"))).toBe(
      true,
    );
  });
});

describe("decide: gated repositories guard downloads, not metadata", () => {
  const write = principal(token());
  const read = principal(token({ role: "read" }));
  const fine = (scopes: Scope[], repositories: string[] | null = null) =>
    principal(token({ role: null, scopes, repositories }));
  const bobGated = repo(bobOwner, false, "gated", "manual");
  const acmeGated = repo(ACME, false, "gated", "auto");
  const cases: Array<
    [string, Principal | null, Action, Resource, OrgRole | null, AccessRequestStatus | null, number]
  > = [
    ["anonymous downloads a public repo", null, "repo:download", repo(bobOwner, false), null, null, 200],
    ["anonymous downloads a gated repo", null, "repo:download", bobGated, null, null, 401],
    ["anonymous reads a gated repo's metadata", null, "repo:read", bobGated, null, null, 200],
    ["anonymous asks for access", null, "repo:request-access", bobGated, null, null, 401],
    ["a reader without a request downloads", write, "repo:download", bobGated, null, null, 403],
    ["a reader with a pending request downloads", write, "repo:download", bobGated, null, "pending", 403],
    ["a rejected reader downloads", write, "repo:download", bobGated, null, "rejected", 403],
    ["an accepted reader downloads", write, "repo:download", bobGated, null, "accepted", 200],
    [
      "an accepted reader with a read token downloads",
      read,
      "repo:download",
      bobGated,
      null,
      "accepted",
      200,
    ],
    ["an accepted reader in a session", principal(session), "repo:download", bobGated, null, "accepted", 200],
    ["a reader without access reads metadata", write, "repo:read", bobGated, null, null, 200],
    [
      "the owner downloads without a request",
      read,
      "repo:download",
      repo(aliceOwner, false, "g", "manual"),
      null,
      null,
      200,
    ],
    ["an org reader downloads without a request", read, "repo:download", acmeGated, "read", null, 200],
    ["a non-member downloads an org's gated repo", read, "repo:download", acmeGated, null, null, 403],
    ["an accepted non-member downloads it", read, "repo:download", acmeGated, null, "accepted", 200],
    [
      "an accepted outsider downloads a private gated repo",
      write,
      "repo:download",
      repo(bobOwner, true, "g", "auto"),
      null,
      "accepted",
      404,
    ],
    [
      "an accepted fine-grained token without repo:read",
      fine(["inference:run"]),
      "repo:download",
      bobGated,
      null,
      "accepted",
      403,
    ],
    [
      "an accepted fine-grained token bounded elsewhere",
      fine(["repo:read"], ["bob/other"]),
      "repo:download",
      bobGated,
      null,
      "accepted",
      403,
    ],
    [
      "an accepted fine-grained token bounded to it",
      fine(["repo:read"], ["bob/gated"]),
      "repo:download",
      bobGated,
      null,
      "accepted",
      200,
    ],
    [
      "a fine-grained token without repo:read downloads a public repo",
      fine(["inference:run"]),
      "repo:download",
      repo(bobOwner, false),
      null,
      null,
      200,
    ],
    ["a read token asks for access", read, "repo:request-access", bobGated, null, null, 200],
    [
      "a fine-grained token with repo:read asks",
      fine(["repo:read"]),
      "repo:request-access",
      bobGated,
      null,
      null,
      200,
    ],
    [
      "a fine-grained token without repo:read asks",
      fine(["repo:write"]),
      "repo:request-access",
      bobGated,
      null,
      null,
      403,
    ],
    [
      "an outsider asks for a private repo",
      write,
      "repo:request-access",
      repo(bobOwner, true, "g", "auto"),
      null,
      null,
      404,
    ],
    [
      "the owner's read token reviews",
      read,
      "repo:write",
      repo(aliceOwner, false, "g", "manual"),
      null,
      null,
      403,
    ],
    ["an org writer reviews", write, "repo:write", acmeGated, "write", null, 200],
    ["an org reader reviews", write, "repo:write", acmeGated, "read", null, 403],
    [
      "a fine-grained repo:write token bounded to it reviews",
      fine(["repo:write"], ["acme/gated"]),
      "repo:write",
      acmeGated,
      "admin",
      null,
      200,
    ],
  ];
  it.each(cases)("%s: %i", (_name, p, action, resource, membership, request, status) => {
    expect(check(p, action, resource, membership, null, request)).toBe(status);
  });

  it("refuses with the GatedRepo code and says how to get access", () => {
    const refusal = (p: Principal | null, request: AccessRequestStatus | null) => {
      const decided = decision(p, "repo:download", bobGated, null, null, request);
      if (decided.allowed) throw new Error("expected a refusal");
      return decided.error;
    };
    const anonymous = refusal(null, null);
    expect(anonymous).toMatchObject({ status: 401, code: "gated_repo" });
    expect(anonymous.headers["x-error-code"]).toBe("GatedRepo");
    expect(anonymous.headers["www-authenticate"]).toMatch(/^Bearer/);
    expect(anonymous.message).toContain("POST /api/models/bob/gated/ask-access");
    const asked = refusal(write, null);
    expect(asked).toMatchObject({ status: 403, code: "gated_repo" });
    expect(asked.headers["x-error-code"]).toBe("GatedRepo");
    expect(asked.message).toMatch(
      /ask for access with POST \/api\/models\/bob\/gated\/ask-access, then wait/,
    );
    expect(refusal(write, "pending").message).toMatch(/awaits review/);
    expect(refusal(write, "rejected").message).toMatch(/rejected your request/);
    const scopeless = decision(
      principal(token({ role: null, scopes: ["jobs:run"] })),
      "repo:download",
      bobGated,
      null,
      null,
      "accepted",
    );
    expect(scopeless.allowed ? null : scopeless.error.code).toBe("insufficient_scope");
  });
});

describe("decide: editing a paper's metadata", () => {
  const paper = (editors: string[]): Resource => ({ type: "paper", arxivId: "2106.09685", editors });
  const cases: Array<[string, Principal | null, Resource, number]> = [
    ["anonymous", null, paper([ALICE]), 401],
    ["an editor with a write token", principal(token()), paper([ALICE]), 200],
    ["an editor with a session", principal(session), paper(["user-bob", ALICE]), 200],
    ["an editor with a read token", principal(token({ role: "read" })), paper([ALICE]), 403],
    [
      "an editor with a fine-grained token",
      principal(token({ role: null, scopes: [...SCOPES] })),
      paper([ALICE]),
      403,
    ],
    [
      "an editor with an organization-bounded token",
      principal(token({ organizationId: ACME.id })),
      paper([ALICE]),
      403,
    ],
    ["someone who is not an editor", principal(session), paper(["user-bob"]), 403],
    ["anyone, when the paper has no editor", principal(session), paper([]), 403],
  ];
  it.each(cases)("%s: %i", (_name, p, resource, status) => {
    expect(check(p, "paper:edit", resource)).toBe(status);
  });
});

describe("decide: collections", () => {
  const collection = (owner: Owner, isPrivate: boolean): Resource => ({
    type: "collection",
    id: "c0ffee0000000000000000aa",
    slug: "owner/picks-c0ffee0000000000000000aa",
    owner,
    private: isPrivate,
  });
  const write = principal(token({ role: "write" }));
  const read = principal(token({ role: "read" }));
  const community = principal(token({ role: null, scopes: ["community:write"] }));
  const reader = principal(token({ role: null, scopes: ["repo:read"] }));
  const bounded = principal(token({ organizationId: ACME.id }));
  const toRepos = principal(token({ repositories: ["alice/model"] }));
  const cases: Array<[string, Principal | null, Action, Resource, OrgRole | null, number]> = [
    ["anonymous reads a public collection", null, "collection:read", collection(bobOwner, false), null, 200],
    ["anonymous reads a private collection", null, "collection:read", collection(bobOwner, true), null, 401],
    [
      "anonymous writes a public collection",
      null,
      "collection:write",
      collection(bobOwner, false),
      null,
      401,
    ],
    ["owner reads own private collection", read, "collection:read", collection(aliceOwner, true), null, 200],
    ["owner writes own collection", write, "collection:write", collection(aliceOwner, true), null, 200],
    [
      "owner with community:write writes",
      community,
      "collection:write",
      collection(aliceOwner, false),
      null,
      200,
    ],
    ["owner with a read token writes", read, "collection:write", collection(aliceOwner, false), null, 403],
    [
      "owner with a read token writes a private one",
      read,
      "collection:write",
      collection(aliceOwner, true),
      null,
      404,
    ],
    [
      "owner with only repo:read reads own private",
      reader,
      "collection:read",
      collection(aliceOwner, true),
      null,
      200,
    ],
    [
      "owner with only community:write reads own private",
      community,
      "collection:read",
      collection(aliceOwner, true),
      null,
      404,
    ],
    [
      "outsider reads another's private collection",
      write,
      "collection:read",
      collection(bobOwner, true),
      null,
      404,
    ],
    [
      "outsider writes another's public collection",
      write,
      "collection:write",
      collection(bobOwner, false),
      null,
      403,
    ],
    [
      "outsider writes another's private collection",
      write,
      "collection:write",
      collection(bobOwner, true),
      null,
      404,
    ],
    [
      "org reader reads a private org collection",
      write,
      "collection:read",
      collection(ACME, true),
      "read",
      200,
    ],
    ["org reader writes an org collection", write, "collection:write", collection(ACME, false), "read", 403],
    [
      "org contributor writes an org collection",
      write,
      "collection:write",
      collection(ACME, false),
      "contributor",
      403,
    ],
    ["org writer writes an org collection", write, "collection:write", collection(ACME, true), "write", 200],
    ["org admin writes an org collection", write, "collection:write", collection(ACME, true), "admin", 200],
    [
      "non-member reads a private org collection",
      write,
      "collection:read",
      collection(ACME, true),
      null,
      404,
    ],
    [
      "token bounded to acme writes acme's",
      bounded,
      "collection:write",
      collection(ACME, false),
      "write",
      200,
    ],
    [
      "token bounded to acme writes its owner's",
      bounded,
      "collection:write",
      collection(aliceOwner, false),
      null,
      403,
    ],
    [
      "token bounded to repositories writes",
      toRepos,
      "collection:write",
      collection(aliceOwner, false),
      null,
      403,
    ],
  ];
  it.each(cases)("%s", (_name, who, action, resource, role, status) => {
    expect(check(who, action, resource, role)).toBe(status);
  });

  it("hides a private collection it refuses behind collection_not_found", () => {
    const decided = decision(write, "collection:read", collection(bobOwner, true));
    expect(decided.allowed ? null : decided.error.code).toBe("collection_not_found");
  });
});
