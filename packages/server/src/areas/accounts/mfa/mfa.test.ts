import path from "node:path";
import type {
  ApiError,
  DeviceAuthorizationResponse,
  Me,
  MfaRecoveryCodes,
  MfaStatus,
  TotpEnrollment,
} from "@hub/api";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { base32Decode, hotp, totpStep } from "../../../auth/totp.js";
import { openDatabase } from "../../../db/database.js";
import { launchChromium } from "../../../test-support/browser.js";
import { DIALECTS } from "../../../test-support/databases.js";
import { readJson, startHub, type TestHub } from "../../../test-support/hub-process.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const MAX_FAILURES = 15;

/**
 * Waits until at least `margin` seconds are left of the current 30-second
 * step, so a code computed now belongs to the step the hub sees too.
 */
async function awayFromStepEnd(margin = 8): Promise<number> {
  const left = 30 - ((Date.now() / 1000) % 30);
  if (left < margin) await sleep(left * 1000 + 200);
  return totpStep(Date.now());
}

/** What an authenticator app holding the secret shows, for any step. */
class Authenticator {
  private lastStep = Number.NEGATIVE_INFINITY;

  constructor(readonly secret: string) {}

  /** The code of a step, remembering it as used when the hub accepted it. */
  code(step: number, { used = false } = {}): string {
    if (used) this.lastStep = Math.max(this.lastStep, step);
    return hotp(base32Decode(this.secret), step);
  }

  /** The next code the hub accepts: a step after the last used one and within a step of now (waiting if need be). */
  async next(): Promise<string> {
    for (;;) {
      const now = await awayFromStepEnd(4);
      const step = Math.max(now - 1, this.lastStep + 1);
      if (step <= now + 1) return this.code(step, { used: true });
      await sleep((30 - ((Date.now() / 1000) % 30)) * 1000 + 200);
    }
  }
}

describe.each(DIALECTS)("two-factor authentication (TOTP) on %s", (dialect) => {
  let hub: TestHub;
  let browser: Browser;
  const passwords = new Map<string, string>();
  const writeTokens = new Map<string, string>();

  const post = (pathname: string, token: string, json?: unknown) =>
    hub.request(pathname, { method: "POST", token, ...(json === undefined ? {} : { json }) });
  const reauthenticate = (token: string, handle: string, otp?: string) =>
    post("/api/auth/reauthenticate", token, { password: passwords.get(handle), ...(otp ? { otp } : {}) });
  const login = (handle: string, otp?: string, password = passwords.get(handle)) =>
    hub.request("/api/auth/login", {
      method: "POST",
      json: { username: handle, password, ...(otp === undefined ? {} : { otp }) },
    });
  const status = async (token: string) => readJson<MfaStatus>(await hub.request("/api/me/mfa", { token }));
  const codeOf = async (response: Response) => (await readJson<ApiError>(response)).code;

  async function expectError(response: Response, status: number, code: string) {
    expect(response.status, code).toBe(status);
    expect(await codeOf(response)).toBe(code);
  }

  async function user(handle: string) {
    const created = await hub.createUser(handle);
    passwords.set(handle, created.password);
    writeTokens.set(handle, await hub.createToken(handle, ["--role", "write"]));
    return writeTokens.get(handle) ?? "";
  }

  /** Starts an enrollment with a credential (reauthenticating it with the password), remembering the secret. */
  async function start(token: string, handle: string) {
    expect((await reauthenticate(token, handle)).status).toBe(200);
    const response = await post("/api/me/mfa/totp", token);
    expect(response.status).toBe(200);
    const enrollment = await readJson<TotpEnrollment>(response);
    hub.secrets.add(enrollment.secret);
    return enrollment;
  }

  /** Confirms with a code, remembering the recovery codes as secrets the log must not hold. */
  async function confirm(token: string, otp: string) {
    const response = await post("/api/me/mfa/totp/confirm", token, { otp });
    expect(response.status).toBe(200);
    const body = await readJson<MfaRecoveryCodes>(response);
    for (const code of body.recoveryCodes) hub.secrets.add(code);
    return body;
  }

  /** A user with two-factor authentication on, its app, and its recovery codes. */
  async function enrolled(handle: string) {
    const token = await user(handle);
    const app = new Authenticator((await start(token, handle)).secret);
    const { recoveryCodes } = await confirm(token, await app.next());
    return { token, app, recoveryCodes };
  }

  /** Reads the database the hub writes, as an attacker with a dump would. */
  async function readDatabase<T>(read: (db: ReturnType<typeof openDatabase>) => Promise<T>): Promise<T> {
    const db = openDatabase(
      hub.database.url
        ? { dialect: "postgres", url: hub.database.url }
        : { dialect: "sqlite", file: path.join(hub.dataDir, "hub.db") },
    );
    try {
      return await read(db);
    } finally {
      await db.destroy();
    }
  }

  beforeAll(async () => {
    [hub, browser] = await Promise.all([
      startHub({
        dialect,
        env: { HUB_MFA_ISSUER: "Hub Test", HUB_MFA_MAX_FAILURES: String(MAX_FAILURES) },
      }),
      launchChromium(),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await hub?.stop();
  });

  describe("alice enrolls, signs in with codes, and turns it off", () => {
    let token: string;
    let app: Authenticator;
    let recoveryCodes: string[];

    it("enrolls: a secret and otpauth URI once, confirmed by a code, with ten recovery codes", async () => {
      token = await user("alice");
      const off = await readJson<Me>(await hub.request("/api/me", { token }));
      expect(off.mfa).toEqual({
        enabled: false,
        methods: [],
        enrolledAt: null,
        recoveryCodesRemaining: 0,
        enrollmentPending: false,
      });
      await expectError(await post("/api/me/mfa/totp", token), 401, "reauthentication_required");

      // Before two-factor authentication is on, the password alone reauthenticates; a code sent along is ignored.
      expect((await reauthenticate(token, "alice", "123456")).status).toBe(200);
      const first = await start(token, "alice");
      expect(first).toMatchObject({
        secret: expect.stringMatching(/^[A-Z2-7]{32}$/),
        issuer: "Hub Test",
        accountName: "alice",
        algorithm: "SHA1",
        digits: 6,
        period: 30,
      });
      expect(base32Decode(first.secret)).toHaveLength(20);
      const uri = new URL(first.otpauthUri);
      expect(uri.protocol).toBe("otpauth:");
      expect(uri.host).toBe("totp");
      expect(decodeURIComponent(uri.pathname)).toBe("/Hub Test:alice");
      expect(Object.fromEntries(uri.searchParams)).toEqual({
        secret: first.secret,
        issuer: "Hub Test",
        algorithm: "SHA1",
        digits: "6",
        period: "30",
      });
      expect(await status(token)).toMatchObject({ enabled: false, enrollmentPending: true });

      // Starting again replaces the secret: codes of the first one no longer confirm.
      const second = await start(token, "alice");
      expect(second.secret).not.toBe(first.secret);
      const stale = new Authenticator(first.secret);
      const now = await awayFromStepEnd();
      const refused = await post("/api/me/mfa/totp/confirm", token, { otp: stale.code(now) });
      expect(refused.status).toBe(400);
      expect(await readJson<ApiError>(refused)).toMatchObject({ code: "invalid_otp", field: "otp" });

      // A code one step behind confirms (clock drift), and starts the replay guard.
      app = new Authenticator(second.secret);
      const confirmed = await confirm(token, app.code(now - 1, { used: true }));
      recoveryCodes = confirmed.recoveryCodes;
      expect(recoveryCodes).toHaveLength(10);
      expect(new Set(recoveryCodes).size).toBe(10);
      for (const code of recoveryCodes) expect(code).toMatch(/^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/);
      expect(confirmed.mfa).toEqual({
        enabled: true,
        methods: ["totp"],
        enrolledAt: expect.any(String),
        recoveryCodesRemaining: 10,
        enrollmentPending: false,
      });
      expect(Math.abs(Date.parse(confirmed.mfa.enrolledAt ?? "") - Date.now())).toBeLessThan(60_000);

      const me = await readJson<Me>(await hub.request("/api/me", { token }));
      expect(me.mfa).toEqual(confirmed.mfa);
      expect(me).toMatchObject({ name: "alice", type: "user", auth: { type: "access_token" } });
      expect(await status(token)).toEqual(confirmed.mfa);

      await expectError(await post("/api/me/mfa/totp", token), 409, "mfa_already_enabled");
      await expectError(
        await post("/api/me/mfa/totp/confirm", token, { otp: app.code(now) }),
        409,
        "mfa_already_enabled",
      );
    });

    it("keeps the secret sealed and only digests of the recovery codes at rest", async () => {
      const { id } = await readJson<Me>(await hub.request("/api/me", { token }));
      const [row, codes] = await readDatabase((db) =>
        Promise.all([
          db.selectFrom("user_mfa").selectAll().where("user_id", "=", id).executeTakeFirstOrThrow(),
          db.selectFrom("user_mfa_recovery_codes").selectAll().where("user_id", "=", id).execute(),
        ]),
      );
      expect(row.totp_secret).toMatch(/^v1:/);
      expect(row.totp_secret).not.toContain(app.secret);
      expect(row.pending_secret).toBeNull();
      expect(codes).toHaveLength(10);
      const stored = JSON.stringify(codes);
      for (const code of recoveryCodes) {
        expect(stored).not.toContain(code);
        expect(stored).not.toContain(code.replace(/-/g, ""));
      }
      for (const code of codes) expect(code.code_hash).toMatch(/^[0-9a-f]{64}$/);
    });

    it("asks for the code at session sign-in", async () => {
      const missing = await login("alice");
      await expectError(missing, 401, "mfa_required");
      expect(missing.headers.get("set-cookie")).toBeNull();
      await expectError(await login("alice", "123456", "not the password"), 401, "invalid_credentials");
      await expectError(await login("alice", "zzzz-zzzz-zzzz-zzzz"), 401, "invalid_otp");

      const signedIn = await login("alice", await app.next());
      expect(signedIn.status).toBe(200);
      const cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
      hub.secrets.add(cookie.split("=")[1] ?? "");
      const me = await readJson<Me>(await hub.request("/api/me", { headers: { cookie } }));
      // Signing in with the code counts as reauthentication.
      expect(me.auth).toMatchObject({ type: "session", reauthenticatedUntil: expect.any(String) });
      expect(me.mfa.enabled).toBe(true);

      const withRecovery = await login("alice", recoveryCodes[9]);
      expect(withRecovery.status).toBe(200);
      hub.secrets.add((withRecovery.headers.get("set-cookie") ?? "").split(";")[0]?.split("=")[1] ?? "");
    });

    it("asks for the code to reauthenticate; accepts a step either side, refuses replays and wrong codes", async () => {
      await expectError(await reauthenticate(token, "alice"), 401, "mfa_required");
      // The password is checked first, and a wrong one says nothing about the code.
      await expectError(
        await post("/api/auth/reauthenticate", token, { password: "not the password", otp: "123456" }),
        401,
        "invalid_credentials",
      );

      const now = await awayFromStepEnd(10);
      await expectError(await reauthenticate(token, "alice", app.code(now + 3)), 401, "invalid_otp");
      // A step ahead (a phone clock running fast) is accepted...
      expect((await reauthenticate(token, "alice", app.code(now + 1, { used: true }))).status).toBe(200);
      // ...and afterwards neither that code nor an earlier step's is accepted again.
      await expectError(await reauthenticate(token, "alice", app.code(now + 1)), 401, "otp_already_used");
      await expectError(await reauthenticate(token, "alice", app.code(now)), 401, "otp_already_used");
      // Two steps away is too far either way.
      await expectError(await reauthenticate(token, "alice", app.code(now - 2)), 401, "invalid_otp");
      await expectError(await reauthenticate(token, "alice", app.code(now + 2)), 401, "invalid_otp");

      const me = await readJson<Me>(await hub.request("/api/me", { token }));
      expect(me.auth.reauthenticatedUntil).not.toBeNull();
    });

    it("accepts each recovery code once in place of a code, typed with or without dashes", async () => {
      const [first = "", second = ""] = recoveryCodes;
      expect((await reauthenticate(token, "alice", first)).status).toBe(200);
      await expectError(await reauthenticate(token, "alice", first), 401, "invalid_otp");
      expect((await reauthenticate(token, "alice", second.replace(/-/g, "").toUpperCase())).status).toBe(200);
      expect(await status(token)).toMatchObject({ enabled: true, recoveryCodesRemaining: 7 });
    });

    it("regenerates the recovery codes; the old ones stop working", async () => {
      const response = await post("/api/me/mfa/recovery-codes", token);
      expect(response.status).toBe(200);
      const fresh = await readJson<MfaRecoveryCodes>(response);
      for (const code of fresh.recoveryCodes) hub.secrets.add(code);
      expect(fresh.recoveryCodes).toHaveLength(10);
      expect(fresh.recoveryCodes.filter((code) => recoveryCodes.includes(code))).toEqual([]);
      expect(fresh.mfa).toMatchObject({ enabled: true, recoveryCodesRemaining: 10 });
      await expectError(await reauthenticate(token, "alice", recoveryCodes[2]), 401, "invalid_otp");
      expect((await reauthenticate(token, "alice", fresh.recoveryCodes[0])).status).toBe(200);
      expect(await status(token)).toMatchObject({ recoveryCodesRemaining: 9 });
      recoveryCodes = fresh.recoveryCodes.slice(1);
    });

    it("turns two-factor authentication off; then the password alone is enough", async () => {
      await expectError(await hub.request("/api/me/mfa", { method: "DELETE" }), 401, "unauthenticated");
      const disabled = await hub.request("/api/me/mfa", { method: "DELETE", token });
      expect(disabled.status).toBe(204);
      expect(await status(token)).toEqual({
        enabled: false,
        methods: [],
        enrolledAt: null,
        recoveryCodesRemaining: 0,
        enrollmentPending: false,
      });
      expect((await reauthenticate(token, "alice")).status).toBe(200);
      expect((await login("alice")).status).toBe(200);
      await expectError(
        await hub.request("/api/me/mfa", { method: "DELETE", token }),
        409,
        "mfa_not_enabled",
      );
      await expectError(await post("/api/me/mfa/recovery-codes", token), 409, "mfa_not_enabled");
      await expectError(
        await post("/api/me/mfa/totp/confirm", token, { otp: "123456" }),
        409,
        "mfa_enrollment_not_started",
      );
      const { id } = await readJson<Me>(await hub.request("/api/me", { token }));
      const left = await readDatabase((db) =>
        db.selectFrom("user_mfa_recovery_codes").select("id").where("user_id", "=", id).execute(),
      );
      expect(left).toEqual([]);
    });
  });

  it("enrolls with a browser session and asks for the code on the device sign-in page", async () => {
    const token = await user("bob");
    const cookie = await hub.signIn("bob", passwords.get("bob") ?? "");
    const started = await hub.request("/api/me/mfa/totp", { method: "POST", headers: { cookie } });
    expect(started.status).toBe(200);
    const enrollment = await readJson<TotpEnrollment>(started);
    hub.secrets.add(enrollment.secret);
    const app = new Authenticator(enrollment.secret);
    const confirmed = await hub.request("/api/me/mfa/totp/confirm", {
      method: "POST",
      headers: { cookie },
      json: { otp: await app.next() },
    });
    expect(confirmed.status).toBe(200);
    for (const code of (await readJson<MfaRecoveryCodes>(confirmed)).recoveryCodes) hub.secrets.add(code);
    expect(await status(token)).toMatchObject({ enabled: true });

    const issued = await readJson<DeviceAuthorizationResponse>(
      await hub.request("/oauth/device/code", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ client_id: "hub-cli" }),
      }),
    );
    hub.secrets.add(issued.device_code);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(issued.verification_uri_complete);
      const signIn = async (otp: string) => {
        await page.getByLabel("User name or email").fill("bob");
        await page.getByLabel("Password").fill(passwords.get("bob") ?? "");
        await page.getByLabel("Two-factor code").fill(otp);
        await page.getByRole("button", { name: "Sign in" }).click();
      };
      // The password alone is not enough: the page asks for the code.
      await signIn("");
      expect(await page.getByRole("alert").innerText()).toMatch(
        /two-factor authentication: enter your password again/,
      );
      await signIn(app.code(totpStep(Date.now()) + 5));
      expect(await page.getByRole("alert").innerText()).toMatch(/two-factor code is wrong or expired/);
      await signIn(await app.next());
      await page.getByRole("button", { name: "Approve" }).click();
      await page.getByRole("heading", { name: "Device connected" }).waitFor();
    } finally {
      await context.close();
    }
  });

  it("limits wrong codes per account: past the limit even the right code waits for the window", async () => {
    const { token, app } = await enrolled("carol");
    const wrong = () => app.code(totpStep(Date.now()) + 7);
    for (let attempt = 0; attempt < MAX_FAILURES; attempt++) {
      const response =
        attempt % 2 === 0 ? await reauthenticate(token, "carol", wrong()) : await login("carol", wrong());
      await expectError(response, 401, "invalid_otp");
    }
    const limited = await reauthenticate(token, "carol", await app.next());
    await expectError(limited, 429, "too_many_otp_attempts");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    await expectError(await login("carol", wrong()), 429, "too_many_otp_attempts");
    // Other accounts are not affected.
    const other = await enrolled("carol2");
    expect((await reauthenticate(other.token, "carol2", await other.app.next())).status).toBe(200);
  });

  it("lets the operator reset a user's two-factor authentication (hubd user mfa-reset)", async () => {
    const { token } = await enrolled("dave");
    await expectError(await reauthenticate(token, "dave"), 401, "mfa_required");
    const reset = await hub.cli(["user", "mfa-reset", "dave"]);
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toMatch(/two-factor authentication of dave is off/);
    expect(await status(token)).toMatchObject({ enabled: false, recoveryCodesRemaining: 0 });
    expect((await reauthenticate(token, "dave")).status).toBe(200);
    const again = await hub.cli(["user", "mfa-reset", "dave"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/dave had no two-factor authentication; nothing changed/);
    const unknown = await hub.cli(["user", "mfa-reset", "nobody"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/No user is called "nobody"/);
    expect((await hub.cli(["user", "mfa-reset"])).code).toBe(2);
    // They can enroll again.
    expect((await post("/api/me/mfa/totp", token)).status).toBe(200);
  });

  it("needs a session or a write role token, recently reauthenticated; reading the status needs a role token", async () => {
    const write = await user("erin");
    const read = await hub.createToken("erin", ["--role", "read"]);
    const fineGrained = await hub.createToken("erin", ["--scopes", "repo:read,repo:write,account:keys"]);
    const operations: Array<[string, string, unknown]> = [
      ["POST", "/api/me/mfa/totp", undefined],
      ["POST", "/api/me/mfa/totp/confirm", { otp: "123456" }],
      ["POST", "/api/me/mfa/recovery-codes", undefined],
      ["DELETE", "/api/me/mfa", undefined],
    ];
    const call = (method: string, pathname: string, json: unknown, token?: string) =>
      hub.request(pathname, {
        method,
        ...(token === undefined ? {} : { token }),
        ...(json === undefined ? {} : { json }),
      });
    for (const [method, pathname, json] of operations) {
      await expectError(await call(method, pathname, json), 401, "unauthenticated");
      await expectError(await call(method, pathname, json, write), 401, "reauthentication_required");
    }
    for (const token of [read, fineGrained]) {
      expect((await reauthenticate(token, "erin")).status).toBe(200);
      for (const [method, pathname, json] of operations) {
        await expectError(await call(method, pathname, json, token), 403, "insufficient_scope");
      }
    }
    expect((await hub.request("/api/me/mfa", { token: read })).status).toBe(200);
    await expectError(await hub.request("/api/me/mfa", { token: fineGrained }), 403, "insufficient_scope");
    await expectError(await hub.request("/api/me/mfa"), 401, "unauthenticated");
  });

  it("refuses malformed codes with 400 naming the field", async () => {
    const token = writeTokens.get("erin") ?? (await user("erin"));
    expect((await reauthenticate(token, "erin")).status).toBe(200);
    expect((await post("/api/me/mfa/totp", token)).status).toBe(200);
    const badConfirm: unknown[] = [
      {},
      { otp: "" },
      { otp: "12345" },
      { otp: "1234567" },
      { otp: "12345a" },
      { otp: 123456 },
      { otp: null },
      { otp: "123456", extra: true },
    ];
    for (const body of badConfirm) {
      const response = await post("/api/me/mfa/totp/confirm", token, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      const error = await readJson<ApiError>(response);
      expect(error.code).toBe("validation_failed");
      expect(error.field, JSON.stringify(body)).toBe(
        body && typeof body === "object" && "extra" in body ? "extra" : "otp",
      );
    }
    for (const body of [[], "123456", null]) {
      expect((await post("/api/me/mfa/totp/confirm", token, body)).status).toBe(400);
    }
    const password = passwords.get("erin");
    for (const otp of ["", "12345", "x".repeat(65), "12345!", 123456, null]) {
      for (const [pathname, body] of [
        ["/api/auth/reauthenticate", { password, otp }],
        ["/api/auth/login", { username: "erin", password, otp }],
      ] as const) {
        const response = await hub.request(pathname, { method: "POST", token, json: body });
        expect(response.status, `${pathname} ${JSON.stringify(otp)}`).toBe(400);
        expect((await readJson<ApiError>(response)).field).toBe("otp");
      }
    }
  });

  it("documents every operation, and the otp of sign-in and reauthentication, in the OpenAPI document", async () => {
    const doc = (await (await hub.request("/api/openapi.json")).json()) as {
      paths: Record<
        string,
        Record<string, { operationId: string; requestBody?: unknown; responses: object }>
      >;
    };
    const operation = (pathname: string, method: string) => doc.paths[pathname]?.[method];
    expect(operation("/api/me/mfa", "get")?.operationId).toBe("account_mfa_get");
    expect(JSON.stringify(operation("/api/me/mfa", "get")?.responses)).toContain("recoveryCodesRemaining");
    const enroll = operation("/api/me/mfa/totp", "post");
    expect(enroll?.operationId).toBe("account_mfa_totp_enroll");
    expect(JSON.stringify(enroll?.responses)).toContain("otpauthUri");
    const confirmOp = operation("/api/me/mfa/totp/confirm", "post");
    expect(confirmOp?.operationId).toBe("account_mfa_totp_confirm");
    expect(JSON.stringify(confirmOp?.requestBody)).toContain("otp");
    expect(JSON.stringify(confirmOp?.responses)).toContain("recoveryCodes");
    const regenerate = operation("/api/me/mfa/recovery-codes", "post");
    expect(regenerate?.operationId).toBe("account_mfa_recovery_codes_regenerate");
    expect(JSON.stringify(regenerate?.responses)).toContain("recoveryCodes");
    expect(operation("/api/me/mfa", "delete")?.operationId).toBe("account_mfa_disable");
    expect(JSON.stringify(operation("/api/me", "get")?.responses)).toContain("recoveryCodesRemaining");
    for (const pathname of ["/api/auth/login", "/api/auth/reauthenticate"]) {
      expect(JSON.stringify(operation(pathname, "post")?.requestBody)).toContain('"otp"');
    }
  });
});
