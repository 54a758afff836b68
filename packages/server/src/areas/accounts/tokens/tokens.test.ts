import type { ApiError, CreatedToken, Me, TokenList, Whoami } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { readJson, startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";

const FUTURE = new Date(Date.now() + 30 * 86_400_000).toISOString();

describe.each(DIALECTS)("access tokens on %s", (dialect) => {
  let hub: InProcessHub;
  let alice: { handle: string; password: string };
  let token: string;

  const createToken = (body: unknown, credential = token) =>
    hub.request("/api/me/tokens", { method: "POST", token: credential, json: body });

  beforeAll(async () => {
    hub = await startInProcessHub({ dialect });
    alice = await hub.createUser("alice");
    await hub.createUser("bob");
    expect((await hub.cli(["org", "create", "acme", "--owner", "alice", "--plan", "team"])).code).toBe(0);
    expect((await hub.cli(["org", "create", "other", "--owner", "bob"])).code).toBe(0);
    token = await hub.createToken("alice");
    await hub.reauthenticate(token, alice.password);
  });
  afterAll(() => hub?.stop());

  it("needs recent reauthentication to list or create, and says how to get it", async () => {
    const fresh = await hub.createToken("alice");
    for (const response of [
      await hub.request("/api/me/tokens", { token: fresh }),
      await createToken({ name: "x", expires_at: FUTURE, role: "read" }, fresh),
    ]) {
      expect(response.status).toBe(401);
      const body = await readJson<ApiError>(response);
      expect(body.code).toBe("reauthentication_required");
      expect(body.error).toMatch(/\/api\/auth\/reauthenticate/);
    }
    const wrong = await hub.request("/api/auth/reauthenticate", {
      method: "POST",
      token: fresh,
      json: { password: "not-it" },
    });
    expect(wrong.status).toBe(401);
    expect((await hub.request("/api/me/tokens", { token: fresh })).status).toBe(401);
    await hub.reauthenticate(fresh, alice.password);
    expect((await hub.request("/api/me/tokens", { token: fresh })).status).toBe(200);
  });

  it("creates a role token whose secret is returned once and works on the API", async () => {
    const response = await createToken({ name: "ci", expires_at: FUTURE, role: "read" });
    expect(response.status).toBe(201);
    const created = await readJson<CreatedToken>(response);
    hub.secrets.add(created.token);
    expect(created.token).toMatch(/^hf_[0-9A-Za-z]{34}$/);
    expect(created).toMatchObject({
      name: "ci",
      role: "read",
      kind: "role",
      scopes: ["repo:read", "inference:run"],
      repositories: null,
      expires_at: new Date(FUTURE).toISOString(),
    });
    expect(created.token_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.token.startsWith(created.token_prefix)).toBe(true);

    const list = await readJson<TokenList>(await hub.request("/api/me/tokens", { token }));
    const listed = list.tokens.find((t) => t.token_id === created.token_id);
    expect(listed).toBeDefined();
    expect(listed).not.toHaveProperty("token");
    expect(JSON.stringify(list)).not.toContain(created.token);
    for (const field of [
      "token_id",
      "token_prefix",
      "name",
      "role",
      "scopes",
      "kind",
      "created_at",
      "expires_at",
      "repositories",
    ]) {
      expect(listed).toHaveProperty(field);
    }

    const whoami = await readJson<Whoami>(await hub.request("/api/whoami", { token: created.token }));
    expect(whoami.auth.accessToken).toMatchObject({ displayName: "ci", role: "read", kind: "role" });
  });

  it("creates a fine-grained token bounded to an organization and its repositories", async () => {
    const response = await createToken({
      name: "deploy",
      expires_at: FUTURE,
      scopes: ["repo:read", "repo:write"],
      organization: "acme",
      repositories: ["acme/model-a", "acme/data.set_1"],
    });
    expect(response.status).toBe(201);
    const created = await readJson<CreatedToken>(response);
    hub.secrets.add(created.token);
    expect(created).toMatchObject({
      kind: "fine-grained",
      role: "write",
      scopes: ["repo:read", "repo:write"],
      organization_handle: "acme",
      repositories: ["acme/model-a", "acme/data.set_1"],
    });
    expect(created.organization_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    ["name missing", { expires_at: FUTURE, role: "read" }, "name"],
    ["name empty", { name: "", expires_at: FUTURE, role: "read" }, "name"],
    ["name of 129 characters", { name: "n".repeat(129), expires_at: FUTURE, role: "read" }, "name"],
    ["name not a string", { name: 7, expires_at: FUTURE, role: "read" }, "name"],
    ["expires_at missing", { name: "x", role: "read" }, "expires_at"],
    ["expires_at not a date-time", { name: "x", expires_at: "tomorrow", role: "read" }, "expires_at"],
    [
      "expires_at without a zone",
      { name: "x", expires_at: "2031-01-01T00:00:00", role: "read" },
      "expires_at",
    ],
    ["expires_at in the past", { name: "x", expires_at: "2020-01-01T00:00:00Z", role: "read" }, "expires_at"],
    ["neither scopes nor role", { name: "x", expires_at: FUTURE }, "scopes"],
    ["both scopes and role", { name: "x", expires_at: FUTURE, role: "read", scopes: ["repo:read"] }, "role"],
    ["role admin", { name: "x", expires_at: FUTURE, role: "admin" }, "role"],
    ["role unknown", { name: "x", expires_at: FUTURE, role: "owner" }, "role"],
    ["scopes empty", { name: "x", expires_at: FUTURE, scopes: [] }, "scopes"],
    ["scopes repeated", { name: "x", expires_at: FUTURE, scopes: ["repo:read", "repo:read"] }, "scopes"],
    ["scope unknown", { name: "x", expires_at: FUTURE, scopes: ["repo:admin"] }, "scopes.0"],
    ["scopes not an array", { name: "x", expires_at: FUTURE, scopes: "repo:read" }, "scopes"],
    [
      "repositories with a role",
      { name: "x", expires_at: FUTURE, role: "read", repositories: ["alice/a"] },
      "repositories",
    ],
    [
      "repositories empty",
      { name: "x", expires_at: FUTURE, scopes: ["repo:read"], repositories: [] },
      "repositories",
    ],
    [
      "repositories over 100",
      {
        name: "x",
        expires_at: FUTURE,
        scopes: ["repo:read"],
        repositories: Array.from({ length: 101 }, (_, i) => `alice/r${i}`),
      },
      "repositories",
    ],
    [
      "repositories repeated",
      { name: "x", expires_at: FUTURE, scopes: ["repo:read"], repositories: ["alice/a", "alice/a"] },
      "repositories",
    ],
    [
      "repository upper-case",
      { name: "x", expires_at: FUTURE, scopes: ["repo:read"], repositories: ["Alice/a"] },
      "repositories.0",
    ],
    [
      "repository without owner",
      { name: "x", expires_at: FUTURE, scopes: ["repo:read"], repositories: ["model"] },
      "repositories.0",
    ],
    [
      "repository with a path",
      { name: "x", expires_at: FUTURE, scopes: ["repo:read"], repositories: ["alice/a/b"] },
      "repositories.0",
    ],
    [
      "repository name too long",
      { name: "x", expires_at: FUTURE, scopes: ["repo:read"], repositories: [`alice/${"a".repeat(97)}`] },
      "repositories.0",
    ],
    [
      "repository outside the organization",
      {
        name: "x",
        expires_at: FUTURE,
        scopes: ["repo:read"],
        organization: "acme",
        repositories: ["alice/a"],
      },
      "repositories",
    ],
    [
      "organization not a member of",
      { name: "x", expires_at: FUTURE, role: "read", organization: "other" },
      "organization",
    ],
    [
      "organization unknown",
      { name: "x", expires_at: FUTURE, role: "read", organization: "nobody-here" },
      "organization",
    ],
    ["an unknown property", { name: "x", expires_at: FUTURE, role: "read", admin: true }, "admin"],
  ];

  it.each(invalid)("rejects %s with 400 naming the field", async (_case, body, field) => {
    const before = (await readJson<TokenList>(await hub.request("/api/me/tokens", { token }))).tokens.length;
    const response = await createToken(body);
    expect(response.status).toBe(400);
    const error = await readJson<ApiError>(response);
    expect(error.field).toBe(field);
    expect(typeof error.error).toBe("string");
    expect(error.error.length).toBeGreaterThan(10);
    expect(typeof error.code).toBe("string");
    const after = (await readJson<TokenList>(await hub.request("/api/me/tokens", { token }))).tokens.length;
    expect(after).toBe(before);
  });

  it("revokes a token: 204, and it fails at once", async () => {
    const created = await readJson<CreatedToken>(
      await createToken({ name: "short-lived", expires_at: FUTURE, role: "write" }),
    );
    hub.secrets.add(created.token);
    expect((await hub.request("/api/whoami", { token: created.token })).status).toBe(200);
    const revoke = await hub.request(`/api/me/tokens/${created.token_id}`, { method: "DELETE", token });
    expect(revoke.status).toBe(204);
    expect(revoke.headers.get("ratelimit")).toMatch(/r=\d+/);
    const after = await hub.request("/api/whoami", { token: created.token });
    expect(after.status).toBe(401);
    expect(after.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(
      (await hub.request(`/api/me/tokens/${created.token_id}`, { method: "DELETE", token })).status,
    ).toBe(404);
    const list = await readJson<TokenList>(await hub.request("/api/me/tokens", { token }));
    expect(list.tokens.map((t: { token_id: string }) => t.token_id)).not.toContain(created.token_id);
  });

  it("does not let one account revoke another's token", async () => {
    const bobToken = await hub.createToken("bob");
    const bobTokens = await hub.cli(["token", "create", "bob", "--name", "victim", "--role", "read"]);
    const victim = bobTokens.stdout.trim().split("\n").pop() ?? "";
    hub.secrets.add(victim);
    const whoami = await readJson<Me>(await hub.request("/api/me", { token: victim }));
    const response = await hub.request(`/api/me/tokens/${whoami.auth.tokenId}`, { method: "DELETE", token });
    expect(response.status).toBe(404);
    expect((await hub.request("/api/whoami", { token: victim })).status).toBe(200);
    expect((await hub.request("/api/whoami", { token: bobToken })).status).toBe(200);
  });

  it("lets a read token revoke itself but not its siblings", async () => {
    const reader = await hub.createToken("alice", ["--role", "read"]);
    const sibling = await hub.createToken("alice", ["--role", "read"]);
    const me = async (secret: string) =>
      (await readJson<Me>(await hub.request("/api/me", { token: secret }))).auth.tokenId;
    const siblingId = await me(sibling);
    const denied = await hub.request(`/api/me/tokens/${siblingId}`, { method: "DELETE", token: reader });
    expect(denied.status).toBe(403);
    expect((await readJson<ApiError>(denied)).code).toBe("insufficient_scope");
    const readerId = await me(reader);
    expect(
      (await hub.request(`/api/me/tokens/${readerId}`, { method: "DELETE", token: reader })).status,
    ).toBe(204);
    expect((await hub.request("/api/whoami", { token: reader })).status).toBe(401);
  });

  it("rejects an expired token", async () => {
    const soon = await hub.createToken("alice", ["--role", "read", "--expires-in", "2s"]);
    expect((await hub.request("/api/whoami", { token: soon })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_200));
    const response = await hub.request("/api/whoami", { token: soon });
    expect(response.status).toBe(401);
    expect((await readJson<ApiError>(response)).code).toBe("invalid_token");
  });
});
