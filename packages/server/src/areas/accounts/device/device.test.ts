import {
  DEVICE_CODE_GRANT_TYPE,
  type DeviceAuthorizationResponse,
  type HubConfiguration,
  type OAuthError,
  type TokenList,
  type TokenResponse,
  type WhoamiV2,
} from "@hub/api";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../../../test-support/browser.js";
import { DIALECTS } from "../../../test-support/databases.js";
import { readJson, startHub, type TestHub } from "../../../test-support/hub-process.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A hub and a browser for one dialect, with the device flow's requests as helpers. */
function deviceFlow(hub: () => TestHub, browser: () => Browser) {
  const form = (pathname: string, fields: Record<string, string> | URLSearchParams, cookie?: string) =>
    hub().request(pathname, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        ...(cookie ? { cookie } : {}),
      },
      body: new URLSearchParams(fields),
      redirect: "manual",
    });

  async function issue(fields: Record<string, string> = { client_id: "hub-cli" }) {
    const response = await form("/oauth/device/code", fields);
    expect(response.status).toBe(200);
    const issued = await readJson<DeviceAuthorizationResponse>(response);
    hub().secrets.add(issued.device_code);
    return issued;
  }

  async function poll(deviceCode: string, clientId = "hub-cli") {
    const response = await form("/oauth/token", {
      grant_type: DEVICE_CODE_GRANT_TYPE,
      device_code: deviceCode,
      client_id: clientId,
    });
    const body = (await response.json()) as TokenResponse | OAuthError;
    if ("access_token" in body) hub().secrets.add(body.access_token);
    return { status: response.status, body };
  }

  async function signIn(page: Page, password: string) {
    await page.getByLabel("User name or email").fill("alice");
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
  }

  /** Opens the page in a fresh browser context, signs in, and approves the code as requested. */
  async function approveInBrowser(url: string, password: string) {
    const context = await browser().newContext();
    try {
      const page = await context.newPage();
      await page.goto(url);
      await signIn(page, password);
      await page.getByRole("button", { name: "Approve" }).click();
      await page.getByRole("heading", { name: "Device connected" }).waitFor();
      return (await page.locator("body").innerText()).replace(/\s+/g, " ");
    } finally {
      await context.close();
    }
  }

  /** A session cookie from the JSON sign-in, for requests that play a browser. */
  async function sessionCookie(password: string): Promise<string> {
    const response = await hub().request("/api/auth/login", {
      method: "POST",
      json: { username: "alice", password },
    });
    expect(response.status).toBe(200);
    const cookie = (response.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    hub().secrets.add(cookie.split("=")[1] ?? "");
    return cookie;
  }

  return { form, issue, poll, signIn, approveInBrowser, sessionCookie };
}

function expectOAuthError(status: number, body: unknown, error: string) {
  expect(status).toBe(400);
  expect(Object.keys(body as object).sort()).toEqual(["error", "error_description"]);
  expect(body).toMatchObject({ error, error_description: expect.stringMatching(/\w/) });
}

describe.each(DIALECTS)("device sign-in (RFC 8628) on %s", (dialect) => {
  let hub: TestHub;
  let browser: Browser;
  let alice: { handle: string; password: string };
  const flow = deviceFlow(
    () => hub,
    () => browser,
  );

  beforeAll(async () => {
    [hub, browser] = await Promise.all([
      startHub({ dialect, env: { HUB_DEVICE_POLL_INTERVAL_SECONDS: "1" } }),
      launchChromium(),
    ]);
    alice = await hub.createUser("alice");
  });
  afterAll(async () => {
    await browser?.close();
    await hub?.stop();
  });

  it("issues codes for form and JSON bodies at the endpoints the discovery document names", async () => {
    const discovery = await readJson<HubConfiguration>(await hub.request("/.well-known/hub-configuration"));
    expect(discovery.inference_url).toBe(hub.routerUrl);
    expect(discovery.device_authorization_endpoint).toBe(`${hub.url}/oauth/device/code`);
    expect(discovery.token_endpoint).toBe(`${hub.url}/oauth/token`);
    const fromForm = await flow.issue({ client_id: "hub-cli", scope: "repo:read inference:run" });
    expect(fromForm).toEqual({
      device_code: expect.stringMatching(/^[0-9A-Za-z]{43}$/),
      user_code: expect.stringMatching(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/),
      verification_uri: `${hub.url}/device`,
      verification_uri_complete: `${hub.url}/device?user_code=${fromForm.user_code}`,
      expires_in: 900,
      interval: 1,
    });
    const response = await hub.request("/oauth/device/code", {
      method: "POST",
      json: { client_id: "hub-cli", scope: "read", unknown_parameter: "ignored (RFC 6749 §3.1)" },
    });
    expect(response.status).toBe(200);
    const fromJson = await readJson<DeviceAuthorizationResponse>(response);
    hub.secrets.add(fromJson.device_code);
    expect(fromJson.device_code).not.toBe(fromForm.device_code);
    expect(fromJson.user_code).not.toBe(fromForm.user_code);
  });

  it("answers malformed requests with OAuth errors", async () => {
    const device = "/oauth/device/code";
    const token = "/oauth/token";
    const grant = DEVICE_CODE_GRANT_TYPE;
    const { device_code: code } = await flow.issue();
    const cases: Array<[string, string, Record<string, string> | URLSearchParams, string]> = [
      ["no client_id", device, { scope: "read" }, "invalid_request"],
      ["a client_id with a space", device, { client_id: "hub cli" }, "invalid_request"],
      ["a client_id of 65 characters", device, { client_id: "c".repeat(65) }, "invalid_request"],
      [
        "client_id twice",
        device,
        new URLSearchParams([
          ["client_id", "a"],
          ["client_id", "b"],
        ]),
        "invalid_request",
      ],
      ["two roles", device, { client_id: "c", scope: "read write" }, "invalid_scope"],
      ["the admin role", device, { client_id: "c", scope: "admin" }, "invalid_scope"],
      ["a role with a scope", device, { client_id: "c", scope: "read repo:read" }, "invalid_scope"],
      ["a repeated scope", device, { client_id: "c", scope: "repo:read repo:read" }, "invalid_scope"],
      ["an unknown scope", device, { client_id: "c", scope: "repo:admin" }, "invalid_scope"],
      ["an empty scope", device, { client_id: "c", scope: "" }, "invalid_scope"],
      ["no grant_type", token, { device_code: code, client_id: "hub-cli" }, "invalid_request"],
      [
        "another grant type",
        token,
        { grant_type: "password", client_id: "hub-cli" },
        "unsupported_grant_type",
      ],
      ["no device_code", token, { grant_type: grant, client_id: "hub-cli" }, "invalid_request"],
      ["no client_id", token, { grant_type: grant, device_code: code }, "invalid_request"],
      [
        "an unknown device_code",
        token,
        { grant_type: grant, device_code: "x", client_id: "hub-cli" },
        "invalid_grant",
      ],
      [
        "another client's code",
        token,
        { grant_type: grant, device_code: code, client_id: "other" },
        "invalid_grant",
      ],
    ];
    for (const [name, pathname, fields, error] of cases) {
      const response = await flow.form(pathname, fields);
      expect(response.headers.get("content-type"), name).toMatch(/^application\/json/);
      expectOAuthError(response.status, await response.json(), error);
    }
    const badJson = await hub.request(token, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{",
    });
    expectOAuthError(badJson.status, await badJson.json(), "invalid_request");
  });

  it("pends, slows a fast poller down, and hands out the approved token exactly once", async () => {
    const issued = await flow.issue();
    const first = await flow.poll(issued.device_code);
    expectOAuthError(first.status, first.body, "authorization_pending");
    const fast = await flow.poll(issued.device_code);
    expectOAuthError(fast.status, fast.body, "slow_down");
    // The interval is now 1 + 5 seconds: waiting the original second is still too soon.
    await sleep(1100);
    const stillFast = await flow.poll(issued.device_code);
    expectOAuthError(stillFast.status, stillFast.body, "slow_down");

    const page = await flow.approveInBrowser(issued.verification_uri_complete, alice.password);
    expect(page).toContain("You can return to your terminal");

    const granted = await flow.poll(issued.device_code);
    expect(granted.status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    expect(granted.body).toEqual({
      access_token: expect.stringMatching(/^hf_/),
      token_type: "bearer",
      scope: "write",
      expires_in: 90 * 86_400,
    });
    const again = await flow.poll(issued.device_code);
    expectOAuthError(again.status, again.body, "invalid_grant");

    const secret = (granted.body as TokenResponse).access_token;
    const whoami = await readJson<WhoamiV2>(await hub.request("/api/whoami-v2", { token: secret }));
    expect(whoami.name).toBe("alice");
    expect(whoami.auth.accessToken).toMatchObject({
      displayName: `hub-cli device login (${today})`,
      role: "write",
      kind: "role",
    });
    const created = await hub.request("/api/repos", {
      method: "POST",
      token: secret,
      json: { repo_id: "alice/from-the-cli", repo_type: "model", private: true },
    });
    expect(created.status).toBe(201);

    // It is an ordinary token: listed with its expiry, and revocable.
    await hub.reauthenticate(secret, alice.password);
    const list = await readJson<TokenList>(await hub.request("/api/me/tokens", { token: secret }));
    const listed = list.tokens.find((t) => t.name === `hub-cli device login (${today})`);
    expect(listed?.expires_at).toBeTruthy();
    const expiresIn = Date.parse(listed?.expires_at ?? "") - Date.now();
    expect(Math.abs(expiresIn - 90 * 86_400_000)).toBeLessThan(60_000);
    const revoked = await hub.request(`/api/me/tokens/${listed?.token_id}`, {
      method: "DELETE",
      token: secret,
    });
    expect(revoked.status).toBe(204);
    expect((await hub.request("/api/whoami", { token: secret })).status).toBe(401);
  });

  it("gives a token with exactly the scopes left checked", async () => {
    const issued = await flow.issue({ client_id: "notebook", scope: "repo:read repo:write inference:run" });
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(issued.verification_uri_complete);
      await flow.signIn(page, alice.password);
      const boxes = page.locator("input[name=scope]");
      // Signing in posts a form; the scope boxes are on the page it answers with.
      await boxes.first().waitFor();
      expect(await boxes.evaluateAll((inputs) => inputs.map((input) => input.getAttribute("value")))).toEqual(
        ["repo:read", "repo:write", "inference:run"],
      );
      for (const box of await boxes.all()) await box.uncheck();
      await page.getByRole("button", { name: "Approve" }).click();
      expect(await page.getByRole("alert").innerText()).toMatch(/at least one/);
      await page.locator('input[name=scope][value="repo:write"]').uncheck();
      await page.getByRole("button", { name: "Approve" }).click();
      await page.getByRole("heading", { name: "Device connected" }).waitFor();
    } finally {
      await context.close();
    }
    const granted = await flow.poll(issued.device_code, "notebook");
    expect(granted.status).toBe(200);
    expect(granted.body).toMatchObject({ scope: "repo:read inference:run" });
    const secret = (granted.body as TokenResponse).access_token;
    const whoami = await readJson<WhoamiV2>(await hub.request("/api/whoami-v2", { token: secret }));
    expect(whoami.auth.accessToken).toMatchObject({
      kind: "fine-grained",
      role: "read",
      scopes: ["repo:read", "inference:run"],
    });
    const write = await hub.request("/api/repos", {
      method: "POST",
      token: secret,
      json: { repo_id: "alice/not-allowed", repo_type: "model", private: false },
    });
    expect(write.status).toBe(403);
  });

  it("ends a denied sign-in with access_denied; the code can be typed in any case, without its dash", async () => {
    const issued = await flow.issue({ client_id: "hub-cli", scope: "read" });
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(issued.verification_uri);
      await flow.signIn(page, alice.password);
      await page
        .getByLabel("The code your terminal shows")
        .fill(issued.user_code.replace("-", "").toLowerCase());
      await page.getByRole("button", { name: "Continue" }).click();
      await page.getByRole("heading", { name: "Approve this device?" }).waitFor();
      const shown = await page.locator("body").innerText();
      expect(shown).toContain("hub-cli");
      expect(shown).toContain(issued.user_code);
      expect(shown).toContain("read role");
      await page.getByRole("button", { name: "Deny" }).click();
      await page.getByRole("heading", { name: "Sign-in denied" }).waitFor();

      // The code is spent: opening it again says so.
      await page.goto(issued.verification_uri_complete);
      expect(await page.getByRole("alert").innerText()).toMatch(/already approved or denied/);
      await page.goto(`${issued.verification_uri}?user_code=BBBB-BBBB`);
      expect(await page.getByRole("alert").innerText()).toMatch(/No sign-in has this code/);
    } finally {
      await context.close();
    }
    const denied = await flow.poll(issued.device_code);
    expectOAuthError(denied.status, denied.body, "access_denied");
  });

  it("gives one token to concurrent polls", async () => {
    const issued = await flow.issue();
    await flow.approveInBrowser(issued.verification_uri_complete, alice.password);
    const polls = await Promise.all(Array.from({ length: 6 }, () => flow.poll(issued.device_code)));
    expect(polls.filter((p) => p.status === 200)).toHaveLength(1);
    for (const p of polls.filter((p) => p.status !== 200))
      expectOAuthError(p.status, p.body, "invalid_grant");
  });

  it("keeps the page safe: headers, escaping, CSRF, and no approval with a token", async () => {
    const cookie = await flow.sessionCookie(alice.password);
    const hostile = `"><script>alert(1)</script>`;
    const page = await hub.request(`/device?user_code=${encodeURIComponent(hostile)}`, {
      headers: { cookie },
    });
    expect(page.status).toBe(404);
    expect(page.headers.get("content-security-policy")).toMatch(/default-src 'none'/);
    expect(page.headers.get("content-security-policy")).toMatch(/frame-ancestors 'none'/);
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    const html = await page.text();
    expect(html).not.toContain("<script>");
    expect(html).toContain("&quot;&gt;&lt;script&gt;");

    const issued = await flow.issue();
    const forged = await flow.form(
      "/device",
      { csrf: "forged", user_code: issued.user_code, decision: "approve" },
      cookie,
    );
    expect(forged.status).toBe(403);
    expect(await forged.text()).toMatch(/reload the page/);
    const noCookie = await flow.form("/device/sign-in", {
      csrf: "x",
      username: "alice",
      password: alice.password,
    });
    expect(noCookie.status).toBe(403);

    const token = await hub.createToken("alice");
    const withToken = await hub.request(`/device?user_code=${issued.user_code}`, { token });
    expect(withToken.status).toBe(403);
    expect(await withToken.text()).toMatch(/a token cannot approve/);
    const pending = await flow.poll(issued.device_code);
    expectOAuthError(pending.status, pending.body, "authorization_pending");
  });
});

describe.each(DIALECTS)("device sign-in expiry on %s", (dialect) => {
  let hub: TestHub;
  let browser: Browser;
  const flow = deviceFlow(
    () => hub,
    () => browser,
  );

  beforeAll(async () => {
    [hub, browser] = await Promise.all([
      startHub({ dialect, env: { HUB_DEVICE_CODE_TTL_SECONDS: "1", HUB_DEVICE_POLL_INTERVAL_SECONDS: "1" } }),
      launchChromium(),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await hub?.stop();
  });

  it("answers expired_token once the code expired, and the page says to start again", async () => {
    const { password } = await hub.createUser("alice");
    const issued = await flow.issue();
    expect(issued.expires_in).toBe(1);
    await sleep(1100);
    const expired = await flow.poll(issued.device_code);
    expectOAuthError(expired.status, expired.body, "expired_token");

    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(issued.verification_uri_complete);
      await flow.signIn(page, password);
      expect(await page.getByRole("alert").innerText()).toMatch(/expired; start the sign-in/);
    } finally {
      await context.close();
    }
  });
});
