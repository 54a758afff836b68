import type { ApiError, LoginResponse, Me, ReauthenticateResponse, Whoami, WhoamiV2 } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { readJson, startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";

describe.each(DIALECTS)("identity, sessions and reauthentication on %s", (dialect) => {
  let hub: InProcessHub;
  let alice: { handle: string; password: string };
  let token: string;

  beforeAll(async () => {
    hub = await startInProcessHub({ dialect });
    alice = await hub.createUser("alice");
    await hub.createUser("carol");
    expect(
      (
        await hub.cli([
          "org",
          "create",
          "acme",
          "--owner",
          "carol",
          "--plan",
          "team",
          "--fullname",
          "Acme Inc",
        ])
      ).code,
    ).toBe(0);
    expect((await hub.cli(["org", "add-member", "acme", "alice", "--role", "write"])).code).toBe(0);
    expect((await hub.cli(["org", "create", "beta", "--owner", "alice"])).code).toBe(0);
    token = await hub.createToken("alice", ["--scopes", "repo:read,inference:run"]);
  });
  afterAll(() => hub?.stop());

  it("whoami returns exactly the identity record", async () => {
    const response = await hub.request("/api/whoami", { token });
    expect(response.status).toBe(200);
    const body = await readJson<Whoami>(response);
    expect(body).toEqual({
      type: "user",
      name: "alice",
      fullname: "alice",
      orgs: [
        { type: "org", name: "acme", fullname: "Acme Inc", roleInOrg: "write" },
        { type: "org", name: "beta", fullname: "beta", roleInOrg: "admin" },
      ],
      auth: {
        type: "access_token",
        accessToken: {
          displayName: expect.any(String),
          role: "read",
          scopes: ["repo:read", "inference:run"],
          kind: "fine-grained",
        },
      },
    });
  });

  it("whoami-v2 adds the token's creation time that Hugging Face clients read", async () => {
    const body = await readJson<WhoamiV2>(await hub.request("/api/whoami-v2", { token }));
    expect(body.name).toBe("alice");
    const createdAt = body.auth.accessToken?.createdAt ?? "";
    expect(Date.parse(createdAt)).toBeGreaterThan(Date.now() - 120_000);
    expect(createdAt).toMatch(/Z$/);
  });

  it("membership changes show on the next request", async () => {
    expect((await hub.cli(["org", "add-member", "acme", "alice", "--role", "admin"])).code).toBe(0);
    const body = await readJson<Whoami>(await hub.request("/api/whoami", { token }));
    expect(body.orgs.find((o) => o.name === "acme")?.roleInOrg).toBe("admin");
    expect((await hub.cli(["org", "add-member", "acme", "alice", "--role", "write"])).code).toBe(0);
  });

  it("/api/me returns the private account context", async () => {
    const response = await hub.request("/api/me", { token });
    expect(response.status).toBe(200);
    const me = await readJson<Me>(response);
    expect(me).toMatchObject({
      type: "user",
      name: "alice",
      email: "alice@example.com",
      emailVerified: false,
      isAdmin: false,
      mfa: { enabled: false },
      repositoryCounts: { models: 0, datasets: 0, spaces: 0, mcps: 0 },
      auth: { type: "access_token", reauthenticatedUntil: null },
    });
    expect(me.auth.tokenId).toMatch(/^[0-9a-f-]{36}$/);
    expect(
      me.orgs.map((o: { name: string; plan: string; roleInOrg: string }) => [o.name, o.plan, o.roleInOrg]),
    ).toEqual([
      ["acme", "team", "write"],
      ["beta", "free", "admin"],
    ]);
    expect(JSON.stringify(me)).not.toMatch(/password|secret_hash/);
  });

  it("answers 401 with a Bearer challenge without a credential or with a bad one", async () => {
    for (const headers of [
      {} as Record<string, string>,
      { authorization: "Bearer hf_notarealtoken" },
      { authorization: "Basic Zm9v" },
      { authorization: "Token abc" },
    ]) {
      const response = await hub.request("/api/whoami", { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
      const body = await readJson<ApiError>(response);
      expect(typeof body.error).toBe("string");
      expect(["unauthenticated", "invalid_token"]).toContain(body.code);
    }
  });

  it("accepts the token as the password of HTTP Basic, as git sends it", async () => {
    const basic = Buffer.from(`anyone:${token}`).toString("base64");
    const response = await hub.request("/api/whoami", { headers: { authorization: `Basic ${basic}` } });
    expect(response.status).toBe(200);
  });

  it("signs in with a password, sets an HttpOnly session cookie, and signs out", async () => {
    const wrong = await hub.request("/api/auth/login", {
      method: "POST",
      json: { username: "alice", password: "wrong-password" },
    });
    expect(wrong.status).toBe(401);
    expect((await readJson<ApiError>(wrong)).code).toBe("invalid_credentials");
    const unknown = await hub.request("/api/auth/login", {
      method: "POST",
      json: { username: "nobody", password: "whatever1" },
    });
    expect(unknown.status).toBe(401);

    const login = await hub.request("/api/auth/login", {
      method: "POST",
      json: { username: "ALICE@example.com", password: alice.password },
    });
    expect(login.status).toBe(200);
    expect((await readJson<LoginResponse>(login)).name).toBe("alice");
    const [setSession = "", setCsrf = ""] = login.headers.getSetCookie();
    expect(setSession).toMatch(/^hub_session=[0-9A-Za-z]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+/);
    expect(setCsrf).toMatch(/^hub_csrf=[\w-]+; Path=\/; SameSite=Strict; Max-Age=\d+/);
    const cookie = [setSession, setCsrf].map((c) => c.split(";")[0]).join("; ");
    hub.secrets.add(setSession.split(";")[0]?.split("=")[1] ?? "");

    const whoami = await readJson<Whoami>(await hub.request("/api/whoami", { headers: { cookie } }));
    expect(whoami.auth).toEqual({ type: "session" });
    // A fresh sign-in counts as a reauthentication, so the session may manage tokens at once.
    expect((await hub.request("/api/me/tokens", { headers: { cookie } })).status).toBe(200);

    const logout = await hub.request("/api/auth/logout", { method: "POST", headers: { cookie } });
    expect(logout.status).toBe(204);
    expect(logout.headers.get("set-cookie")).toMatch(/hub_session=; .*Max-Age=0/);
    const after = await hub.request("/api/whoami", { headers: { cookie } });
    expect(after.status).toBe(401);
    expect((await readJson<ApiError>(after)).code).toBe("invalid_session");
  });

  it("refuses logout with an access token, saying the token stays valid and how to revoke it", async () => {
    const secret = await hub.createToken("alice");
    const logout = await hub.request("/api/auth/logout", { method: "POST", token: secret });
    expect(logout.status).toBe(400);
    const body = await readJson<ApiError>(logout);
    expect(body.code).toBe("logout_needs_session");
    expect(body.error).toContain("DELETE /api/me/tokens/{tokenId}");
    expect((await hub.request("/api/whoami", { token: secret })).status).toBe(200);
  });

  it("reauthentication marks only the credential that made it", async () => {
    const first = await hub.createToken("alice");
    const second = await hub.createToken("alice");
    const response = await hub.request("/api/auth/reauthenticate", {
      method: "POST",
      token: first,
      json: { password: alice.password },
    });
    expect(response.status).toBe(200);
    const { reauthenticatedUntil } = await readJson<ReauthenticateResponse>(response);
    const minutes = (Date.parse(reauthenticatedUntil) - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(9);
    expect(minutes).toBeLessThanOrEqual(10);
    expect((await hub.request("/api/me/tokens", { token: first })).status).toBe(200);
    expect((await hub.request("/api/me/tokens", { token: second })).status).toBe(401);
    const me = await readJson<Me>(await hub.request("/api/me", { token: first }));
    expect(Date.parse(me.auth.reauthenticatedUntil ?? "")).toBeGreaterThan(Date.now());
  });

  it("rejects reauthentication with a bad body", async () => {
    for (const json of [{}, { password: "" }, { password: 12345678 }, { password: "x", extra: 1 }]) {
      const response = await hub.request("/api/auth/reauthenticate", { method: "POST", token, json });
      expect(response.status).toBe(400);
    }
  });
});
