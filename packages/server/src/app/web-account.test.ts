import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AccountKey, ApiError, Me, MfaStatus } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { base32Decode, hotp, totpStep } from "../auth/totp.js";
import { readJson } from "../test-support/hub-process.js";
import { startInProcessHub, type InProcessHub } from "../test-support/hub-inprocess.js";
import { onePixelPng, postForm, readPage } from "../test-support/web.js";

/** A real PNG image of one red pixel. */
const png = () => onePixelPng([200, 10, 10]);

/** Text as Svelte writes it into an element. */
const escaped = (text: string) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;");

/** The account settings pages rendered on the server: profile, keys, two-factor and deletion, all through the API. */
describe("the account settings pages", () => {
  let hub: InProcessHub;
  let work: string;
  const cookies = new Map<string, string>();

  const page = (user: string, pathname: string) => readPage(hub, pathname, { cookie: cookies.get(user) });
  const action = (user: string, pathname: string, body: URLSearchParams | FormData) =>
    postForm(hub, pathname, body, { cookie: cookies.get(user) });
  const api = <T>(user: string, pathname: string) =>
    hub.request(pathname, { headers: { cookie: cookies.get(user) ?? "" } }).then((r) => readJson<T>(r));
  const sshPublicKey = (name: string) => {
    const file = path.join(work, name);
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", `${name}@laptop`, "-f", file]);
    return readFileSync(`${file}.pub`, "utf8").trim();
  };

  beforeAll(async () => {
    hub = await startInProcessHub();
    work = mkdtempSync(path.join(os.tmpdir(), "hub-web-account-"));
    for (const name of ["alice", "bob", "dave"]) {
      const { password } = await hub.createUser(name);
      cookies.set(name, await hub.signIn(name, password));
    }
  });
  afterAll(async () => {
    await hub?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("sends a visitor who is not signed in to the sign-in page", async () => {
    for (const name of ["profile", "keys", "two-factor", "account"]) {
      const response = await readPage(hub, `/settings/${name}`, { redirect: "manual" });
      expect(response.status).toBe(303);
      expect(response.headers.get("location")).toBe(`/login?next=%2Fsettings%2F${name}`);
    }
  });

  it("saves the profile, which the public profile page then shows, and refuses what the API refuses", async () => {
    const saved = await action(
      "alice",
      "/settings/profile?/save",
      new URLSearchParams({
        fullname: "Alice Liddell",
        bio: "Models of looking glasses.",
        location: "Oxford",
        website: "https://alice.example.com",
        github: "alice",
        bluesky: "alice.bsky.social",
      }),
    );
    expect(saved.status).toBe(200);
    expect(await saved.text()).toContain("Your profile is saved.");
    const me = await api<Me>("alice", "/api/me");
    expect(me.profile).toMatchObject({
      fullname: "Alice Liddell",
      location: "Oxford",
      social: { github: "alice", bluesky: "alice.bsky.social", twitter: "" },
    });
    const profile = await (await readPage(hub, "/alice")).text();
    expect(profile).toContain("Alice Liddell");
    expect(profile).toContain("Models of looking glasses.");
    expect(profile).toContain("Oxford");
    expect(profile).toContain('href="https://alice.example.com/"');

    const refused = await action(
      "alice",
      "/settings/profile?/save",
      new URLSearchParams({ fullname: "Alice", website: "ftp://alice.example.com" }),
    );
    expect(refused.status).toBe(400);
    const refusal = await refused.text();
    expect(refusal).toMatch(/role="alert"[^>]*>[^<]*http or https/);
    expect(refusal).toContain('value="ftp://alice.example.com"');
    expect((await api<Me>("alice", "/api/me")).profile.website).toBe("https://alice.example.com/");
  });

  it("uploads an avatar through the form, and removes it", async () => {
    const before = (await api<Me>("alice", "/api/me")).profile.avatarUrl;
    const form = new FormData();
    form.set("avatar", new Blob([png()], { type: "image/png" }), "me.png");
    const uploaded = await action("alice", "/settings/profile?/avatar", form);
    expect(uploaded.status).toBe(200);
    const after = (await api<Me>("alice", "/api/me")).profile.avatarUrl;
    expect(after).not.toBe(before);
    const served = await hub.request(new URL(after, hub.url).pathname);
    expect(served.headers.get("content-type")).toBe("image/png");
    expect(await (await page("alice", "/settings/profile")).text()).toContain(
      escaped(after).replaceAll('"', "&quot;"),
    );

    const notImage = new FormData();
    notImage.set("avatar", new Blob(["hello"], { type: "text/plain" }), "hello.txt");
    const refused = await action("alice", "/settings/profile?/avatar", notImage);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/role="alert"/);

    const removed = await action("alice", "/settings/profile?/removeAvatar", new URLSearchParams());
    expect(removed.status).toBe(200);
    const served2 = await hub.request("/api/users/alice/avatar");
    expect(served2.headers.get("content-type")).toMatch(/svg/);
  });

  it("previews a username change with what moves, then renames", async () => {
    const token = await hub.createToken("bob");
    const created = await hub.request("/api/repos", {
      method: "POST",
      token,
      json: { repo_id: "bob/looking-glass", repo_type: "model" },
    });
    expect(created.status).toBe(201);

    const taken = await (await page("bob", "/settings/profile?username=alice")).text();
    expect(taken).toMatch(/role="alert"[^>]*>[^<]*(taken|in use)/i);
    expect(taken).not.toContain("Rename to alice");

    const preview = await (await page("bob", "/settings/profile?username=robert")).text();
    expect(preview).toContain("bob/looking-glass → robert/looking-glass");
    expect(preview).toContain("Rename to robert");

    const renamed = await action(
      "bob",
      "/settings/profile?/rename",
      new URLSearchParams({ username: "robert" }),
    );
    expect(renamed.status).toBe(303);
    expect(renamed.headers.get("location")).toBe("/settings/profile?renamed=bob");
    expect((await api<Me>("bob", "/api/me")).name).toBe("robert");
    const after = await (await page("bob", "/settings/profile?renamed=bob")).text();
    expect(after).toContain("You are now <strong>robert</strong>");
  });

  it("adds an SSH key the API then lists, refuses a bad key with the API's message, and deletes it", async () => {
    const publicKey = sshPublicKey("alice-laptop");
    const added = await action(
      "alice",
      "/settings/keys?/add",
      new URLSearchParams({ key: publicKey, title: "laptop" }),
    );
    const body = await added.text();
    expect(added.status, body.slice(0, 300)).toBe(200);
    const keys = await api<AccountKey[]>("alice", "/api/me/keys");
    expect(keys).toHaveLength(1);
    const [key] = keys;
    expect(key).toMatchObject({
      type: "ssh",
      title: "laptop",
      key: publicKey.split(" ").slice(0, 2).join(" "),
    });
    const listing = await (await page("alice", "/settings/keys")).text();
    expect(listing).toContain(key?.fingerprint ?? "missing");
    expect(listing).toContain("laptop");

    const bad = "ssh-ed25519 !!!notbase64";
    const direct = await hub.request("/api/me/keys", {
      method: "POST",
      headers: { cookie: cookies.get("alice") ?? "" },
      json: { key: bad },
    });
    expect(direct.status).toBe(400);
    const { error } = await readJson<ApiError>(direct);
    const refused = await action(
      "alice",
      "/settings/keys?/add",
      new URLSearchParams({ key: bad, title: "broken" }),
    );
    expect(refused.status).toBe(400);
    const refusal = await refused.text();
    expect(refusal).toMatch(/role="alert"/);
    expect(refusal).toContain(escaped(error));
    expect(refusal).toContain("!!!notbase64");
    expect(await api<AccountKey[]>("alice", "/api/me/keys")).toHaveLength(1);

    const removed = await action(
      "alice",
      "/settings/keys?/remove",
      new URLSearchParams({ key_id: key?.id ?? "", title: "laptop" }),
    );
    expect(removed.status).toBe(200);
    expect(await removed.text()).toContain("Removed laptop");
    expect(await api<AccountKey[]>("alice", "/api/me/keys")).toEqual([]);
  });

  it("enrolls two-factor with a server-drawn SVG QR code, turns it on with a code, and turns it off", async () => {
    const started = await action("alice", "/settings/two-factor?/start", new URLSearchParams());
    const enrollment = await started.text();
    expect(started.status, enrollment.slice(0, 300)).toBe(200);
    const qr = /<img[^>]*class="qr[^"]*"[^>]*src="data:image\/svg\+xml;base64,([^"]+)"/.exec(enrollment)?.[1];
    const svg = Buffer.from(qr ?? "", "base64").toString("utf8");
    expect(svg).toMatch(/^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg).toContain("<path");
    const secret = /data-testid="totp-secret"[^>]*>([A-Z2-7]+)</.exec(enrollment)?.[1] ?? "";
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    hub.secrets.add(secret);
    const uri = /name="otpauth_uri" value="([^"]+)"/.exec(enrollment)?.[1]?.replaceAll("&amp;", "&") ?? "";
    expect(uri).toMatch(new RegExp(`^otpauth://totp/.*alice\\?secret=${secret}&`));
    expect((await api<MfaStatus>("alice", "/api/me/mfa")).enrollmentPending).toBe(true);

    const key = base32Decode(secret);
    const step = totpStep(Date.now());
    const wrongCode = String((Number(hotp(key, step)) + 1) % 1_000_000).padStart(6, "0");
    const wrong = await action(
      "alice",
      "/settings/two-factor?/confirm",
      new URLSearchParams({ otp: wrongCode, otpauth_uri: uri }),
    );
    expect(wrong.status).toBe(400);
    const retry = await wrong.text();
    expect(retry).toMatch(/role="alert"/);
    expect(retry).toMatch(new RegExp(`data-testid="totp-secret"[^>]*>${secret}<`));
    expect((await api<MfaStatus>("alice", "/api/me/mfa")).enabled).toBe(false);

    const confirmed = await action(
      "alice",
      "/settings/two-factor?/confirm",
      new URLSearchParams({ otp: hotp(key, step), otpauth_uri: uri }),
    );
    const shown = await confirmed.text();
    expect(confirmed.status, shown.slice(0, 300)).toBe(200);
    const codes = [
      ...(/data-testid="recovery-codes"[^>]*>(.*?)<\/ol>/s.exec(shown)?.[1] ?? "").matchAll(
        /<li>([^<]+)<\/li>/g,
      ),
    ].map((match) => match[1] ?? "");
    expect(codes).toHaveLength(10);
    codes.forEach((code) => hub.secrets.add(code));
    expect(await api<MfaStatus>("alice", "/api/me/mfa")).toMatchObject({
      enabled: true,
      recoveryCodesRemaining: 10,
    });
    expect(await (await page("alice", "/settings/two-factor")).text()).not.toContain(codes[0] ?? "missing");

    const regenerated = await (
      await action("alice", "/settings/two-factor?/regenerate", new URLSearchParams())
    ).text();
    const fresh = [
      ...(/data-testid="recovery-codes"[^>]*>(.*?)<\/ol>/s.exec(regenerated)?.[1] ?? "").matchAll(
        /<li>([^<]+)<\/li>/g,
      ),
    ].map((match) => match[1] ?? "");
    expect(fresh).toHaveLength(10);
    fresh.forEach((code) => hub.secrets.add(code));
    expect(fresh).not.toContain(codes[0]);

    const off = await action("alice", "/settings/two-factor?/disable", new URLSearchParams());
    expect(off.status).toBe(200);
    expect(await off.text()).toContain("Two-factor authentication is off.");
    expect((await api<MfaStatus>("alice", "/api/me/mfa")).enabled).toBe(false);
  });

  it("shows what deleting the account removes, refuses a wrong confirmation, and deletes and signs out with the right one", async () => {
    const preview = await (await page("dave", "/settings/account")).text();
    expect(preview).toContain("Delete your account");
    expect(preview).toMatch(/Type <strong[^>]*>dave<\/strong> to confirm/);
    expect(preview).toContain("1 session");

    const wrong = await action(
      "dave",
      "/settings/account?/delete",
      new URLSearchParams({ confirm: "alice" }),
    );
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toMatch(/role="alert"[^>]*>[^<]*dave/);
    expect(
      (await hub.request("/api/whoami-v2", { headers: { cookie: cookies.get("dave") ?? "" } })).status,
    ).toBe(200);

    const deleted = await action(
      "dave",
      "/settings/account?/delete",
      new URLSearchParams({ confirm: "dave" }),
    );
    expect(deleted.status).toBe(303);
    expect(deleted.headers.get("location")).toBe("/");
    const cleared = deleted.headers.getSetCookie();
    for (const name of ["hub_session", "hub_csrf"]) {
      expect(cleared.find((cookie) => cookie.startsWith(`${name}=`))).toMatch(
        /Max-Age=0|Expires=Thu, 01 Jan 1970/i,
      );
    }
    expect(
      (await hub.request("/api/whoami-v2", { headers: { cookie: cookies.get("dave") ?? "" } })).status,
    ).toBe(401);
    expect((await hub.request("/api/users/dave/overview")).status).toBe(404);
  });
});

/** The shortest reauthentication window the hub allows, so the test sees the prompt after a short wait. */
const REAUTH_WINDOW_SECONDS = 10;

/** Where the API asks for the password again, the pages show the prompt, and its answer lets the change through. */
describe("the account settings pages after the reauthentication window", () => {
  let hub: InProcessHub;
  let cookie: string;
  let password: string;

  const action = (pathname: string, fields: Record<string, string> = {}) =>
    postForm(hub, pathname, fields, { cookie });

  beforeAll(
    async () => {
      hub = await startInProcessHub({ env: { HUB_REAUTH_WINDOW: String(REAUTH_WINDOW_SECONDS) } });
      ({ password } = await hub.createUser("erin"));
      cookie = await hub.signIn("erin", password);
      await new Promise((resolve) => setTimeout(resolve, (REAUTH_WINDOW_SECONDS + 1) * 1000));
    },
    (REAUTH_WINDOW_SECONDS + 30) * 1000,
  );
  afterAll(() => hub?.stop());

  it("prompts for the password on two-factor, rename and deletion, and goes on once it is given", async () => {
    for (const [pathname, fields] of [
      ["/settings/two-factor?/start", {}],
      ["/settings/profile?/rename", { username: "erin-renamed" }],
      ["/settings/account?/delete", { confirm: "erin" }],
    ] as const) {
      const refused = await action(pathname, fields);
      expect(refused.status, pathname).toBe(401);
      expect(await refused.text(), pathname).toContain("Confirm it is you");
    }
    expect((await hub.request("/api/whoami-v2", { headers: { cookie } })).status).toBe(200);

    const wrong = await action("/settings/two-factor?/reauthenticate", { password: "not my password" });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toMatch(/role="alert"/);
    const right = await action("/settings/two-factor?/reauthenticate", { password });
    expect(right.status).toBe(200);
    const started = await action("/settings/two-factor?/start");
    expect(started.status).toBe(200);
    expect(await started.text()).toContain("data:image/svg+xml;base64,");
  });
});
