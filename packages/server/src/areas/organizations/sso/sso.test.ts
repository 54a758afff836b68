import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type {
  ApiError,
  OrganizationSso,
  OrganizationSsoPrompts,
  SsoAuthorization,
  UpdateOrganizationSso,
} from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../../db/database.js";
import { DIALECTS } from "../../../test-support/databases.js";
import { FakeOpenIdProvider, type Tamper } from "../../../test-support/fake-openid-provider.js";
import { git, withToken } from "../../../test-support/git-client.js";
import { startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";
import { readJson, startHub, type TestHub } from "../../../test-support/hub-process.js";
import { HTML, pageText } from "../../../test-support/web.js";

const CLIENT_ID = "hub-client";
const CLIENT_SECRET = "idp-client-secret-Zq7wR2mK9xV4";
const DEFAULT_SESSION_SECONDS = 4;

describe.each(DIALECTS)("organization single sign-on on %s", (dialect) => {
  let hub: TestHub;
  let work: string;
  const idp = new FakeOpenIdProvider();
  /** Role tokens by account; `aliceRead` and `aliceFine` are Alice's read and fine-grained ones. */
  const t: Record<string, string> = {};

  const token = (name: string) => t[name] ?? "";
  const settings = (org: string, init: { method?: string; json?: unknown; token?: string } = {}) =>
    hub.request(`/api/organizations/${org}/sso`, { token: token("alice"), ...init });
  const configure = (org: string, body: Partial<UpdateOrganizationSso>, as = token("alice")) =>
    settings(org, {
      method: "PUT",
      token: as,
      json: { issuer: idp.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, ...body },
    });
  const prompts = async (as: string) => {
    const response = await hub.request("/api/me/organization-sso", { token: as });
    expect(response.status).toBe(200);
    return (await readJson<OrganizationSsoPrompts>(response)).organizations;
  };
  const errorOf = async (response: Response) => readJson<ApiError>(response);

  /** Starts a sign-in and follows the provider back; returns the callback path (with its query). */
  async function callbackFor(as: string, org: string): Promise<string> {
    const login = await hub.request(`/api/organizations/${org}/sso/login`, { token: as, redirect: "manual" });
    expect(login.status, await login.clone().text()).toBe(302);
    const approved = await fetch(login.headers.get("location") ?? "", { redirect: "manual" });
    expect(approved.status).toBe(302);
    const back = new URL(approved.headers.get("location") ?? "");
    for (const name of ["code", "state"]) {
      const secret = back.searchParams.get(name);
      if (secret) hub.secrets.add(secret);
    }
    return `${back.pathname}${back.search}`;
  }

  async function signIn(as: string, org: string): Promise<Response> {
    const response = await hub.request(await callbackFor(as, org), { token: as });
    for (const issued of idp.issuedTokens) hub.secrets.add(issued);
    return response;
  }

  const readRepo = (as: string, repo: string) => hub.request(`/api/models/${repo}`, { token: as });
  const clone = async (as: string, repo: string) => {
    const dir = mkdtempSync(path.join(work, "clone-"));
    return git(["clone", "-q", withToken(`${hub.gitUrl}/${repo}`, as), dir], work);
  };

  beforeAll(async () => {
    await idp.start();
    idp.registerClient(CLIENT_ID, CLIENT_SECRET);
    idp.registerClient("other-client", CLIENT_SECRET);
    hub = await startHub({
      dialect,
      env: { HUB_SSO_ALLOW_PRIVATE: "1", HUB_SSO_SESSION_SECONDS: String(DEFAULT_SESSION_SECONDS) },
    });
    hub.secrets.add(CLIENT_SECRET);
    work = mkdtempSync(path.join(os.tmpdir(), "hub-sso-"));
    for (const name of ["alice", "bob", "carol", "dave", "erin"]) {
      const { password } = await hub.createUser(name);
      t[name] = await hub.createToken(name);
      // Admins change SSO settings without an SSO sign-in only when freshly reauthenticated.
      await hub.reauthenticate(token(name), password);
    }
    t.aliceUnconfirmed = await hub.createToken("alice");
    t.aliceRead = await hub.createToken("alice", ["--role", "read"]);
    t.aliceFine = await hub.createToken("alice", ["--scopes", "repo:read,repo:write"]);
    t.bobFine = await hub.createToken("bob", ["--scopes", "repo:read"]);
    for (const [org, admin] of [
      ["acme", "alice"],
      ["brief", "carol"],
      ["gamma", "alice"],
    ] as const) {
      const created = await hub.request("/api/organizations", {
        method: "POST",
        token: token(admin),
        json: { name: org, fullname: `${org} Inc.` },
      });
      expect(created.status).toBe(201);
    }
    for (const [org, user, role] of [
      ["acme", "bob", "write"],
      ["acme", "dave", "read"],
      ["gamma", "dave", "read"],
    ] as const) {
      const added = await hub.request(`/api/organizations/${org}/members`, {
        method: "POST",
        token: token("alice"),
        json: { user, role },
      });
      expect(added.status).toBe(201);
    }
    for (const [repo, owner, isPrivate] of [
      ["acme/secret", "alice", true],
      ["acme/open", "alice", false],
      ["brief/secret", "carol", true],
    ] as const) {
      const created = await hub.request("/api/repos", {
        method: "POST",
        token: token(owner),
        json: { repo_id: repo, private: isPrivate },
      });
      expect(created.status).toBe(201);
    }
  });
  afterAll(async () => {
    await hub?.stop();
    await idp.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it("lets admins configure a provider, sealing the client secret and never returning it", async () => {
    const before = await readJson<OrganizationSso>(await settings("acme"));
    expect(before).toMatchObject({
      organization: "acme",
      configured: false,
      issuer: null,
      clientSecretSet: false,
      required: false,
      effectiveSessionSeconds: DEFAULT_SESSION_SECONDS,
      redirectUri: `${hub.url}/api/organizations/acme/sso/callback`,
      signInUrl: `${hub.url}/api/organizations/acme/sso/login`,
      updatedAt: null,
    });
    const response = await configure("acme", { emailDomain: "Example.com", sessionSeconds: 3600 });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    expect(text).not.toContain(CLIENT_SECRET);
    const saved = JSON.parse(text) as OrganizationSso;
    expect(saved).toMatchObject({
      configured: true,
      issuer: idp.issuer,
      clientId: CLIENT_ID,
      clientSecretSet: true,
      emailDomain: "example.com",
      required: false,
      sessionSeconds: 3600,
      effectiveSessionSeconds: 3600,
    });
    expect(saved).not.toHaveProperty("clientSecret");
    const read = await settings("acme", { token: token("aliceRead") });
    expect(await read.text()).toBe(text);

    // At rest the secret is sealed, not stored as sent.
    const db = openDatabase(
      hub.database.url
        ? { dialect: "postgres", url: hub.database.url }
        : { dialect: "sqlite", file: path.join(hub.dataDir, "hub.db") },
    );
    try {
      const rows = await db.selectFrom("organization_sso").select("sealed_client_secret").execute();
      expect(rows).toHaveLength(1);
      expect(rows[0]?.sealed_client_secret).toMatch(/^v1:/);
      expect(rows[0]?.sealed_client_secret).not.toContain(CLIENT_SECRET);
    } finally {
      await db.destroy();
    }
  });

  it("refuses every bad field with a 400 naming it", async () => {
    const base = { issuer: idp.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ clientId: CLIENT_ID }, "issuer"],
      [{ ...base, issuer: 42 }, "issuer"],
      [{ ...base, issuer: "" }, "issuer"],
      [{ ...base, issuer: "not a url" }, "issuer"],
      [{ ...base, issuer: "ftp://idp.example.com" }, "issuer"],
      [{ ...base, issuer: "https://user:pw@idp.example.com" }, "issuer"],
      [{ ...base, issuer: "https://idp.example.com#frag" }, "issuer"],
      [{ ...base, issuer: "https://idp.example.com/?tenant=1" }, "issuer"],
      [{ ...base, issuer: `https://idp.example.com/${"x".repeat(2048)}` }, "issuer"],
      [{ issuer: idp.issuer }, "clientId"],
      [{ ...base, clientId: "" }, "clientId"],
      [{ ...base, clientId: "has space" }, "clientId"],
      [{ ...base, clientId: "x".repeat(256) }, "clientId"],
      [{ ...base, clientSecret: "" }, "clientSecret"],
      [{ ...base, clientSecret: 7 }, "clientSecret"],
      [{ ...base, clientSecret: "with space" }, "clientSecret"],
      [{ ...base, emailDomain: "not a domain" }, "emailDomain"],
      [{ ...base, emailDomain: "localhost" }, "emailDomain"],
      [{ ...base, emailDomain: 5 }, "emailDomain"],
      [{ ...base, required: "yes" }, "required"],
      [{ ...base, sessionSeconds: 59 }, "sessionSeconds"],
      [{ ...base, sessionSeconds: 1.5 }, "sessionSeconds"],
      [{ ...base, sessionSeconds: "3600" }, "sessionSeconds"],
      [{ ...base, sessionSeconds: 31_536_001 }, "sessionSeconds"],
      [{ ...base, clientSecrett: "typo" }, "clientSecrett"],
    ];
    for (const [json, field] of cases) {
      const response = await settings("gamma", { method: "PUT", json });
      expect(response.status, JSON.stringify(json).slice(0, 200)).toBe(400);
      expect((await errorOf(response)).field, JSON.stringify(json).slice(0, 200)).toBe(field);
    }
    for (const json of [[], "x", null])
      expect((await settings("gamma", { method: "PUT", json })).status).toBe(400);
    // The first configuration needs the secret; later ones may leave it out to keep it.
    const first = await settings("gamma", {
      method: "PUT",
      json: { issuer: idp.issuer, clientId: CLIENT_ID },
    });
    expect(first.status).toBe(400);
    expect(await errorOf(first)).toMatchObject({ code: "client_secret_required", field: "clientSecret" });
    expect((await readJson<OrganizationSso>(await settings("gamma"))).configured).toBe(false);
    // Nothing bad was stored on the way.
    expect((await readJson<OrganizationSso>(await settings("acme"))).clientId).toBe(CLIENT_ID);
    const callback = await hub.request("/api/organizations/acme/sso/callback?state=", {
      token: token("bob"),
    });
    expect(callback.status).toBe(400);
    expect((await errorOf(callback)).field).toBe("state");
  });

  it("needs a signed-in caller, an admin for the settings, a member to sign in, and a role token", async () => {
    const paths = [
      ["GET", "/api/me/organization-sso"],
      ["GET", "/api/organizations/acme/sso"],
      ["PUT", "/api/organizations/acme/sso"],
      ["DELETE", "/api/organizations/acme/sso"],
      ["GET", "/api/organizations/acme/sso/login"],
      ["GET", "/api/organizations/acme/sso/callback?state=abc&code=def"],
    ] as const;
    for (const [method, url] of paths) {
      const json = method === "PUT" ? { issuer: idp.issuer, clientId: CLIENT_ID } : undefined;
      expect((await hub.request(url, { method, json, redirect: "manual" })).status, url).toBe(401);
    }
    // A member who is no admin (bob writes), and an outsider (erin), see nothing of the settings.
    for (const as of [token("bob"), token("erin")]) {
      for (const method of ["GET", "PUT", "DELETE"]) {
        const response = await settings("acme", {
          method,
          token: as,
          json: method === "PUT" ? { issuer: idp.issuer, clientId: CLIENT_ID } : undefined,
        });
        expect(response.status, method).toBe(403);
        expect((await errorOf(response)).code).toBe("forbidden");
      }
    }
    const outsider = await hub.request("/api/organizations/acme/sso/login", {
      token: token("erin"),
      redirect: "manual",
    });
    expect(outsider.status).toBe(403);
    // Fine-grained tokens never reach settings; a read token views but does not change them.
    for (const as of [token("aliceFine"), token("bobFine")]) {
      const response = await settings("acme", { token: as });
      expect(response.status).toBe(403);
      expect((await errorOf(response)).code).toBe("insufficient_scope");
      const own = await hub.request("/api/me/organization-sso", { token: as });
      expect(own.status).toBe(403);
      expect((await errorOf(own)).code).toBe("insufficient_scope");
    }
    const readOnly = await configure("acme", { sessionSeconds: 3600 }, token("aliceRead"));
    expect(readOnly.status).toBe(403);
    expect((await errorOf(readOnly)).code).toBe("insufficient_scope");
    expect(await prompts(token("aliceRead"))).toEqual([]);
    expect((await settings("nowhere")).status).toBe(404);
  });

  it("prompts members until they sign in, and blocks the organization's private resources meanwhile", async () => {
    // Configured but not required: nothing to prompt, everything as before.
    expect(await prompts(token("bob"))).toEqual([]);
    expect((await readRepo(token("bob"), "acme/secret")).status).toBe(200);

    const required = await configure("acme", {
      emailDomain: "example.com",
      sessionSeconds: 3600,
      required: true,
    });
    expect(required.status).toBe(200);
    const signInUrl = `${hub.url}/api/organizations/acme/sso/login`;
    const prompt = { name: "acme", fullname: "acme Inc.", reason: "missing", expiredAt: null, signInUrl };
    expect(await prompts(token("bob"))).toEqual([prompt]);
    expect(await prompts(token("alice"))).toEqual([prompt]); // admins are not exempt
    expect(await prompts(token("erin"))).toEqual([]);

    // Private repositories over the API and git, listings, and organization settings are closed...
    const blocked = await readRepo(token("bob"), "acme/secret");
    expect(blocked.status).toBe(403);
    const error = await errorOf(blocked);
    expect(error.code).toBe("sso_required");
    expect(error.error).toContain(signInUrl);
    const refused = await clone(token("bob"), "acme/secret");
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/403|single sign-on/);
    const listed = await hub.request("/api/models?author=acme", { token: token("bob") });
    expect(((await listed.json()) as Array<{ id: string }>).map((repo) => repo.id)).toEqual(["acme/open"]);
    const push = await hub.request("/api/repos", {
      method: "POST",
      token: token("bob"),
      json: { repo_id: "acme/new-one" },
    });
    expect(push.status).toBe(403);
    for (const url of ["/api/organizations/acme/members", "/api/organizations/acme/webhooks"]) {
      const response = await hub.request(url, { token: token("alice") });
      expect(response.status, url).toBe(403);
      expect((await errorOf(response)).code).toBe("sso_required");
    }
    // ...public ones stay public, and admins can still reach the SSO settings.
    expect((await readRepo(token("bob"), "acme/open")).status).toBe(200);
    expect((await hub.request("/api/models/acme/open")).status).toBe(200);
    expect((await settings("acme")).status).toBe(200);

    // After signing in, everything opens again.
    const signedIn = await signIn(token("bob"), "acme");
    expect(signedIn.status, await signedIn.clone().text()).toBe(200);
    const authorization = await readJson<SsoAuthorization>(signedIn);
    expect(authorization).toMatchObject({
      organization: "acme",
      subject: "subject-1",
      email: "someone@example.com",
    });
    const lasts = Date.parse(authorization.expiresAt) - Date.parse(authorization.signedInAt);
    expect(lasts).toBe(3600 * 1000);
    expect(await prompts(token("bob"))).toEqual([]);
    expect(await prompts(token("alice"))).toEqual([prompt]);
    expect((await readRepo(token("bob"), "acme/secret")).status).toBe(200);
    expect((await readRepo(token("bobFine"), "acme/secret")).status).toBe(200); // for every credential of the account
    const cloned = await clone(token("bob"), "acme/secret");
    expect(cloned.code, cloned.stderr).toBe(0);

    // One provider account vouches for one hub account: not dave's, and bob keeps signing in as the same one.
    const borrowed = await signIn(token("dave"), "acme");
    expect(borrowed.status).toBe(403);
    expect((await errorOf(borrowed)).code).toBe("sso_identity_in_use");
    idp.user = { subject: "someone-else", email: "else@example.com" };
    const switched = await signIn(token("bob"), "acme");
    idp.user = { subject: "subject-1", email: "someone@example.com" };
    expect(switched.status).toBe(403);
    expect((await errorOf(switched)).code).toBe("sso_identity_mismatch");
    expect((await prompts(token("dave"))).map((p) => p.name)).toContain("acme");

    // A member who leaves and is added back signs in again, with any provider account.
    const left = await hub.request("/api/organizations/acme/leave", { method: "POST", token: token("bob") });
    expect(left.status).toBe(204);
    idp.user = { subject: "alice-at-acme", email: "alice@example.com" };
    expect((await signIn(token("alice"), "acme")).status).toBe(200);
    const added = await hub.request("/api/organizations/acme/members", {
      method: "POST",
      token: token("alice"),
      json: { user: "bob", role: "write" },
    });
    expect(added.status).toBe(201);
    expect((await prompts(token("bob"))).map((p) => [p.name, p.reason])).toEqual([["acme", "missing"]]);
    idp.user = { subject: "bob-again", email: "bob@example.com" };
    expect((await signIn(token("bob"), "acme")).status).toBe(200);
    idp.user = { subject: "subject-1", email: "someone@example.com" };

    // The hub sent its client secret as HTTP Basic and a PKCE verifier matching its S256 challenge.
    const exchange = idp.tokenRequests.at(-1);
    expect(exchange?.authorization).toMatch(/^Basic /);
    expect(exchange?.form).toMatchObject({ grant_type: "authorization_code" });
    expect(exchange?.form.code_verifier).toMatch(/^[A-Za-z0-9]{43,128}$/);
    expect(exchange?.form.client_secret).toBeUndefined();
  });

  it("starts the authorization code flow with PKCE S256, a state and a nonce", async () => {
    const login = await hub.request("/api/organizations/acme/sso/login", {
      token: token("dave"),
      redirect: "manual",
    });
    expect(login.status).toBe(302);
    const location = new URL(login.headers.get("location") ?? "");
    expect(`${location.origin}${location.pathname}`).toBe(`${idp.issuer}/authorize`);
    const params = Object.fromEntries(location.searchParams);
    expect(params).toMatchObject({
      response_type: "code",
      client_id: CLIENT_ID,
      redirect_uri: `${hub.url}/api/organizations/acme/sso/callback`,
      code_challenge_method: "S256",
    });
    expect(params.scope?.split(" ")).toContain("openid");
    expect(params.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.state?.length).toBeGreaterThanOrEqual(43);
    expect(params.nonce?.length).toBeGreaterThanOrEqual(43);
    expect(params.state).not.toBe(params.nonce);
  });

  it("refuses a state that is altered, another account's, or used", async () => {
    const callback = await callbackFor(token("dave"), "acme");
    const url = new URL(callback, hub.url);
    const state = url.searchParams.get("state") ?? "";
    url.searchParams.set("state", `${state.slice(0, -1)}${state.endsWith("A") ? "B" : "A"}`);
    const altered = await hub.request(`${url.pathname}${url.search}`, { token: token("dave") });
    expect(altered.status).toBe(400);
    expect(await errorOf(altered)).toMatchObject({ code: "sso_state_invalid", field: "state" });
    const stolen = await hub.request(callback, { token: token("bob") });
    expect(stolen.status).toBe(400);
    expect((await errorOf(stolen)).code).toBe("sso_state_invalid");
    const otherOrg = await hub.request(callback.replace("/acme/", "/gamma/"), { token: token("dave") });
    expect(otherOrg.status).toBe(400);
    expect(await prompts(token("dave"))).toHaveLength(1);

    const own = await hub.request(callback, { token: token("dave") });
    expect(own.status, await own.clone().text()).toBe(200);
    expect(await prompts(token("dave"))).toEqual([]);
    const replayed = await hub.request(callback, { token: token("dave") });
    expect(replayed.status).toBe(400);
    expect((await errorOf(replayed)).code).toBe("sso_state_invalid");
  });

  it("refuses ID tokens that are forged, for another client or issuer, expired, replayed or from another domain", async () => {
    expect((await configure("gamma", { emailDomain: "gamma.test", required: true })).status).toBe(200);
    idp.user = { subject: "dave-at-gamma", email: "dave@gamma.test" };
    const tampers: Tamper[] = [
      "wrong-signature",
      "wrong-audience",
      "wrong-issuer",
      "expired",
      "wrong-nonce",
      "unsigned",
    ];
    for (const tamper of tampers) {
      idp.tamper = tamper;
      const response = await signIn(token("dave"), "gamma");
      expect(response.status, tamper ?? "").toBe(403);
      const error = await errorOf(response);
      expect(error.code, tamper ?? "").toBe("sso_id_token_rejected");
      expect(error.error).toMatch(/ID token/);
    }
    for (const user of [
      { subject: "dave-elsewhere", email: "dave@elsewhere.test" },
      { subject: "dave-lookalike", email: "dave@notgamma.test" },
      { subject: "dave-unverified", email: "dave@gamma.test", emailVerified: false },
      { subject: "dave-unvouched", email: "dave@gamma.test", emailVerified: null },
    ]) {
      idp.user = user;
      const response = await signIn(token("dave"), "gamma");
      expect(response.status, user.subject).toBe(403);
      expect((await errorOf(response)).code).toBe("sso_email_domain");
    }
    idp.denyWith = "access_denied";
    const denied = await signIn(token("dave"), "gamma");
    idp.denyWith = null;
    expect(denied.status).toBe(403);
    expect((await errorOf(denied)).code).toBe("sso_denied");
    expect((await prompts(token("dave"))).map((p) => p.name)).toEqual(["gamma"]);

    // A provider whose discovery names another issuer is refused before any redirect.
    expect((await configure("gamma", { issuer: `${idp.issuer}/`, required: true })).status).toBe(200);
    const mismatch = await hub.request("/api/organizations/gamma/sso/login", {
      token: token("dave"),
      redirect: "manual",
    });
    expect(mismatch.status).toBe(502);
    expect((await errorOf(mismatch)).code).toBe("sso_provider_error");

    expect((await configure("gamma", { emailDomain: "gamma.test", required: true })).status).toBe(200);
    idp.user = { subject: "dave-at-gamma", email: "Dave@Gamma.test" };
    const accepted = await signIn(token("dave"), "gamma");
    expect(accepted.status, await accepted.clone().text()).toBe(200);
    expect(await prompts(token("dave"))).toEqual([]);
    idp.user = { subject: "subject-1", email: "someone@example.com" };
  });

  it("prompts again when a sign-in expires, with when it did", async () => {
    const configured = await configure("brief", { required: true }, token("carol"));
    expect((await readJson<OrganizationSso>(configured)).effectiveSessionSeconds).toBe(
      DEFAULT_SESSION_SECONDS,
    );
    const signedIn = await signIn(token("carol"), "brief");
    expect(signedIn.status).toBe(200);
    const { expiresAt } = await readJson<SsoAuthorization>(signedIn);
    expect((await readRepo(token("carol"), "brief/secret")).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, Date.parse(expiresAt) - Date.now() + 200));
    expect(await prompts(token("carol"))).toEqual([
      {
        name: "brief",
        fullname: "brief Inc.",
        reason: "expired",
        expiredAt: expiresAt,
        signInUrl: `${hub.url}/api/organizations/brief/sso/login`,
      },
    ]);
    const blocked = await readRepo(token("carol"), "brief/secret");
    expect(blocked.status).toBe(403);
    expect((await errorOf(blocked)).error).toMatch(/expired/);
    expect((await clone(token("carol"), "brief/secret")).code).not.toBe(0);
  });

  it("forgets sign-ins when the provider changes, and lifts everything when SSO is removed", async () => {
    expect(await prompts(token("bob"))).toEqual([]);
    // Same provider, other settings: sign-ins stay; the secret is kept when left out.
    const kept = await settings("acme", {
      method: "PUT",
      json: { issuer: idp.issuer, clientId: CLIENT_ID, emailDomain: "example.com", required: true },
    });
    expect((await readJson<OrganizationSso>(kept)).clientSecretSet).toBe(true);
    expect(await prompts(token("bob"))).toEqual([]);
    // Another client: every sign-in made with the old one is forgotten.
    expect((await configure("acme", { clientId: "other-client", required: true })).status).toBe(200);
    expect((await prompts(token("bob"))).map((p) => [p.name, p.reason])).toEqual([["acme", "missing"]]);
    expect((await readRepo(token("bob"), "acme/secret")).status).toBe(403);

    // Without a valid SSO sign-in, removing SSO needs a freshly reauthenticated admin.
    const unconfirmed = await settings("acme", { method: "DELETE", token: token("aliceUnconfirmed") });
    expect(unconfirmed.status).toBe(401);
    expect((await errorOf(unconfirmed)).code).toBe("reauthentication_required");
    expect((await settings("acme", { method: "DELETE" })).status).toBe(204);
    expect(await prompts(token("bob"))).toEqual([]);
    expect((await readRepo(token("bob"), "acme/secret")).status).toBe(200);
    expect((await readJson<OrganizationSso>(await settings("acme"))).configured).toBe(false);
    const again = await settings("acme", { method: "DELETE" });
    expect(again.status).toBe(404);
    expect((await errorOf(again)).code).toBe("sso_not_configured");
    const login = await hub.request("/api/organizations/acme/sso/login", {
      token: token("bob"),
      redirect: "manual",
    });
    expect(login.status).toBe(404);
    expect((await errorOf(login)).code).toBe("sso_not_configured");
  });

  it("publishes its operations in the OpenAPI document", async () => {
    const doc = (await (await hub.request("/api/openapi.json")).json()) as {
      paths: Record<
        string,
        Record<string, { operationId: string; requestBody?: unknown; responses: object }>
      >;
    };
    const prompt = doc.paths["/api/me/organization-sso"]?.get;
    expect(prompt?.operationId).toBe("account_organization_sso_prompts_get");
    expect(JSON.stringify(prompt?.responses)).toContain("signInUrl");
    const sso = doc.paths["/api/organizations/{handle}/sso"];
    expect(sso?.get?.operationId).toBe("organization_sso_get");
    expect(JSON.stringify(sso?.get?.responses)).toContain("clientSecretSet");
    expect(sso?.put?.operationId).toBe("organization_sso_update");
    expect(JSON.stringify(sso?.put?.requestBody)).toContain("emailDomain");
    expect(sso?.delete?.operationId).toBe("organization_sso_delete");
    expect(doc.paths["/api/organizations/{handle}/sso/login"]?.get?.operationId).toBe(
      "organization_sso_login",
    );
    const callback = doc.paths["/api/organizations/{handle}/sso/callback"]?.get;
    expect(callback?.operationId).toBe("organization_sso_callback");
    expect(JSON.stringify(callback?.responses)).toContain("expiresAt");
  });
});

describe("organization single sign-on without HUB_SSO_ALLOW_PRIVATE", () => {
  let hub: InProcessHub;
  let admin = "";
  beforeAll(async () => {
    hub = await startInProcessHub();
    await hub.createUser("alice");
    admin = await hub.createToken("alice");
    await hub.request("/api/organizations", { method: "POST", token: admin, json: { name: "acme" } });
  });
  afterAll(async () => {
    await hub?.stop();
  });

  it("accepts only https issuers on public addresses", async () => {
    for (const issuer of [
      "http://idp.example.com",
      "https://127.0.0.1:9443",
      "https://localhost/realms/x",
      "https://[::1]/",
      "https://10.1.2.3/",
    ]) {
      const response = await hub.request("/api/organizations/acme/sso", {
        method: "PUT",
        token: admin,
        json: { issuer, clientId: "c", clientSecret: "s" },
      });
      expect(response.status, issuer).toBe(400);
      const error = (await response.json()) as ApiError;
      expect(error, issuer).toMatchObject({ code: "invalid_issuer", field: "issuer" });
      expect(error.error).toContain("HUB_SSO_ALLOW_PRIVATE");
    }
    const ok = await hub.request("/api/organizations/acme/sso", {
      method: "PUT",
      token: admin,
      json: { issuer: "https://idp.example.com/realms/acme", clientId: "c", clientSecret: "s" },
    });
    expect(ok.status).toBe(200);
  });
});

/**
 * The same sign-in as a person's browser makes it (Accept: text/html, the session cookie): the hub sends it
 * on to the organization's page, or to the site's page for the failure, never JSON; API clients keep JSON.
 */
describe("organization single sign-on in a browser", () => {
  let hub: InProcessHub;
  const idp = new FakeOpenIdProvider();
  const cookies: Record<string, string> = {};
  let admin = "";

  const browse = (as: string | null, pathname: string) =>
    hub.request(pathname, {
      redirect: "manual",
      headers: { ...HTML, ...(as ? { cookie: cookies[as] ?? "" } : {}) },
    });
  const locationOf = (response: Response) => response.headers.get("location") ?? "";
  const errorPage = (code: string) => `/organizations/acme/sso/error?code=${code}`;

  /** Starts a sign-in in the browser and follows the provider back; returns the callback path (with its query). */
  async function callbackFor(as: string): Promise<string> {
    const login = await browse(as, "/api/organizations/acme/sso/login");
    expect(login.status, await login.clone().text()).toBe(302);
    const approved = await fetch(locationOf(login), { redirect: "manual" });
    expect(approved.status).toBe(302);
    const back = new URL(locationOf(approved));
    for (const name of ["code", "state"]) {
      const secret = back.searchParams.get(name);
      if (secret) hub.secrets.add(secret);
    }
    return `${back.pathname}${back.search}`;
  }
  const promptsOf = async (as: string) => {
    const response = await hub.request("/api/me/organization-sso", {
      headers: { cookie: cookies[as] ?? "" },
    });
    return (await readJson<OrganizationSsoPrompts>(response)).organizations.map((org) => org.name);
  };
  /** The site's page a failure lands on: its layout, its message for the code, never the API's JSON. */
  async function failurePage(location: string, message: RegExp): Promise<string> {
    const body = await pageText(hub, location, { cookie: cookies.bob });
    expect(body).toContain('<nav aria-label="Main"');
    expect(body).toContain("Single sign-on to acme did not finish");
    expect(body).toMatch(message);
    expect(body).not.toContain('"error":');
    return body;
  }

  beforeAll(async () => {
    await idp.start();
    idp.registerClient(CLIENT_ID, CLIENT_SECRET);
    hub = await startInProcessHub({ env: { HUB_SSO_ALLOW_PRIVATE: "1", HUB_RATE_LIMIT: "1000000" } });
    hub.secrets.add(CLIENT_SECRET);
    for (const name of ["alice", "bob", "erin"]) {
      const { password } = await hub.createUser(name);
      cookies[name] = await hub.signIn(name, password);
    }
    admin = await hub.createToken("alice");
    expect(
      (await hub.request("/api/organizations", { method: "POST", token: admin, json: { name: "acme" } }))
        .status,
    ).toBe(201);
    const added = await hub.request("/api/organizations/acme/members", {
      method: "POST",
      token: admin,
      json: { user: "bob", role: "write" },
    });
    expect(added.status).toBe(201);
    const configured = await hub.request("/api/organizations/acme/sso", {
      method: "PUT",
      token: admin,
      json: { issuer: idp.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, required: true },
    });
    expect(configured.status, await configured.clone().text()).toBe(200);
  });
  afterAll(async () => {
    for (const issued of idp.issuedTokens) hub?.secrets.add(issued);
    await hub?.stop();
    await idp.stop();
  });

  it("sends the browser on to the organization's page once signed in", async () => {
    expect(await promptsOf("bob")).toEqual(["acme"]);
    const callback = await callbackFor("bob");
    const done = await browse("bob", callback);
    expect(done.status, await done.clone().text()).toBe(303);
    expect(locationOf(done)).toBe("/acme");
    expect(await promptsOf("bob")).toEqual([]);
    await pageText(hub, "/acme", { cookie: cookies.bob });

    // The same callback again is a failure, shown on the site's page for it.
    const replayed = await browse("bob", callback);
    expect(replayed.status).toBe(303);
    expect(locationOf(replayed)).toBe(errorPage("sso_state_invalid"));
    const body = await failurePage(
      locationOf(replayed),
      /role="alert"[^>]*>This sign-in is unknown, already finished/,
    );
    expect(body).toContain('href="/api/organizations/acme/sso/login"');
  });

  it("keeps the provider's words out of the page: a refusal shows the hub's own message for its code", async () => {
    const callback = new URL(await callbackFor("bob"), hub.url);
    callback.searchParams.delete("code");
    callback.searchParams.set("error", "access_denied");
    callback.searchParams.set("error_description", "<b>Call 555-0100 to unlock your account</b>");
    const denied = await browse("bob", `${callback.pathname}${callback.search}`);
    expect(denied.status).toBe(303);
    expect(locationOf(denied)).toBe(errorPage("sso_denied"));
    const body = await failurePage(locationOf(denied), /The identity provider refused the sign-in\./);
    expect(body).not.toContain("555-0100");

    // A code the page does not know, or free text in its place, gets the page's general message only.
    for (const code of ["made_up", "Call%20555-0100%20now", "%3Cscript%3Ealert(1)%3C%2Fscript%3E"]) {
      const page = await failurePage(errorPage(code), /The single sign-on did not finish\./);
      expect(page).not.toContain("555-0100");
      expect(page).not.toContain("<script>alert");
    }
  });

  it("sends a browser without a hub session to sign in first, and an outsider to the failure page", async () => {
    const start = await browse(null, "/api/organizations/acme/sso/login");
    expect(start.status).toBe(303);
    expect(locationOf(start)).toBe(`/login?next=${encodeURIComponent("/api/organizations/acme/sso/login")}`);

    const callback = await callbackFor("bob");
    const anonymous = await browse(null, callback);
    expect(anonymous.status).toBe(303);
    expect(locationOf(anonymous)).toBe(errorPage("unauthenticated"));
    const body = await failurePage(locationOf(anonymous), /Sign in to the hub first/);
    expect(body).toContain(`href="/login?next=${encodeURIComponent("/api/organizations/acme/sso/login")}"`);

    const outsider = await browse("erin", "/api/organizations/acme/sso/login");
    expect(outsider.status).toBe(303);
    expect(locationOf(outsider)).toBe(errorPage("forbidden"));
    await failurePage(locationOf(outsider), /Only the organization(?:'|&#39;)s members sign in/);

    // A name that is no organization stays a path on this hub.
    const nowhere = await browse("bob", "/api/organizations/%2F%2Fevil.example/sso/callback?state=x&code=y");
    expect(nowhere.status).toBe(303);
    expect(locationOf(nowhere)).toBe("/organizations/%2F%2Fevil.example/sso/error?code=not_found");
  });

  it("answers API clients with JSON as before, whatever cookie they carry", async () => {
    const callback = await callbackFor("bob");
    const first = await hub.request(callback, { headers: { cookie: cookies.bob ?? "" } });
    expect(first.status).toBe(200);
    expect((await readJson<SsoAuthorization>(first)).organization).toBe("acme");
    const again = await hub.request(callback, { headers: { cookie: cookies.bob ?? "" } });
    expect(again.status).toBe(400);
    expect((await readJson<ApiError>(again)).code).toBe("sso_state_invalid");
    const anonymous = await hub.request("/api/organizations/acme/sso/login", { redirect: "manual" });
    expect(anonymous.status).toBe(401);
    expect((await readJson<ApiError>(anonymous)).code).toBe("unauthenticated");
  });

  it("offers a working sign-in link where the organization's settings are closed until single sign-on", async () => {
    const closed = await browse("alice", "/organizations/acme/settings/members");
    const body = await closed.text();
    expect(closed.status, body.slice(0, 300)).toBe(403);
    expect(body).toContain("Sign in with the organization");
    expect(body).toMatch(/href="\/api\/organizations\/acme\/sso\/login"[^>]*>Sign in with single sign-on/);
    const start = await browse("alice", "/api/organizations/acme/sso/login");
    expect(start.status).toBe(302);
    expect(locationOf(start)).toContain(`${idp.issuer}/authorize?`);
  });
});
