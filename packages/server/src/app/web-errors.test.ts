import { rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJson } from "../test-support/hub-process.js";
import { startInProcessHub, type InProcessHub } from "../test-support/hub-inprocess.js";
import { HTML, postForm, readPage } from "../test-support/web.js";

/** A response is one of the site's pages (its layout, its error section), never the API's JSON. */
async function expectErrorPage(response: Response, status: number, heading: RegExp): Promise<string> {
  const body = await response.text();
  expect(response.status, body.slice(0, 300)).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^text\/html/);
  expect(body).toMatch(/^<!doctype html>/i);
  expect(body).toContain('<nav aria-label="Main"');
  expect(body).toMatch(heading);
  expect(body).not.toMatch(/\{"error":/);
  return body;
}

/** The site's error pages for what the API answers with an error while a page loads: never raw JSON. */
describe("the web site's error pages", () => {
  let hub: InProcessHub;
  let token: string;
  let cookies: string;

  beforeAll(async () => {
    hub = await startInProcessHub();
    const { password } = await hub.createUser("alice");
    token = await hub.createToken("alice");
    cookies = await hub.signIn("alice", password);
    for (const name of ["alice/broken", "alice/fine"]) {
      const created = await hub.request("/api/repos", {
        method: "POST",
        token,
        json: { repo_id: name, repo_type: "model" },
      });
      expect(created.status).toBeLessThan(300);
    }
  });
  afterAll(() => hub?.stop());

  it("shows the error page with a 500 when the API fails on its side during a page load", async () => {
    const { _id: id } = await readJson<{ _id: string }>(
      await hub.request("/api/models/alice/broken", { token }),
    );
    // The repository's git directory is gone: reading its files fails on the hub's side.
    rmSync(path.join(hub.dataDir, "repositories", id.slice(0, 2), `${id}.git`), {
      recursive: true,
      force: true,
    });
    expect((await hub.request("/api/models/alice/broken/tree/main", { token })).status).toBe(500);

    for (const page of ["/alice/broken/tree/main", "/alice/broken/commits/main"]) {
      const body = await expectErrorPage(
        await readPage(hub, page, { cookie: cookies }),
        500,
        /<h1>Something went wrong<\/h1>/,
      );
      expect(body).toMatch(/Something went wrong on the hub(?:'|&#39;)s side; try again\./);
    }
  });

  it("answers a 401 on a repository's settings page with a page asking to sign in", async () => {
    const body = await expectErrorPage(
      await readPage(hub, "/alice/fine/settings"),
      401,
      /<h2>Sign in to change this repository<\/h2>/,
    );
    expect(body).toContain('href="/login?next=%2Falice%2Ffine%2Fsettings"');
  });

  it("sends a browser whose session ended from a settings page, or its form, to sign in", async () => {
    const { password } = await hub.createUser("carol");
    const session = await hub.signIn("carol", password);
    const ended = await hub.request("/api/auth/logout", { method: "POST", headers: { cookie: session } });
    expect(ended.status).toBeLessThan(300);
    const page = await readPage(hub, "/settings/tokens", { cookie: session, redirect: "manual" });
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/login?next=%2Fsettings%2Ftokens");
    const form = await postForm(hub, "/settings/profile?/save", { fullname: "Carol" }, { cookie: session });
    expect(form.status).toBe(303);
    expect(form.headers.get("location")).toBe("/login?next=%2Fsettings%2Fprofile");
  });
});

/** A viewer over the hub's rate limit sees the site's error page with when to retry, not the API's JSON. */
describe("the web site's error page for a rate-limited viewer", () => {
  let hub: InProcessHub;
  let cookies: string;
  const LIMIT = 6;

  beforeAll(async () => {
    hub = await startInProcessHub({ env: { HUB_RATE_LIMIT: String(LIMIT), HUB_RATE_LIMIT_WINDOW: "300" } });
    const { password } = await hub.createUser("alice");
    cookies = await hub.signIn("alice", password);
  });
  afterAll(() => hub?.stop());

  /** Loads a page until the hub stops answering 200, and returns that answer. */
  async function untilLimited(page: string, headers: Record<string, string>): Promise<Response> {
    for (let i = 0; i < LIMIT * 3; i++) {
      const response = await hub.request(page, { headers: { ...HTML, ...headers }, redirect: "manual" });
      if (response.status !== 200) return response;
      await response.text();
    }
    throw new Error(`${page} was never limited`);
  }

  it("answers 429 with the error page and Retry-After, on a listing and on a page that calls the API itself", async () => {
    for (const page of ["/models", "/alice"]) {
      // Each page has its own client address, so each starts with a fresh allowance.
      const response = await untilLimited(page, { "x-forwarded-for": page });
      const body = await expectErrorPage(response, 429, /<h1>Too many requests<\/h1>/);
      expect(response.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(body).toMatch(/retry in \d+ seconds/);
    }
  });

  it("answers 429 with the error page to a signed-in viewer on a settings page", async () => {
    const response = await untilLimited("/settings/profile", { cookie: cookies });
    await expectErrorPage(response, 429, /<h1>Too many requests<\/h1>/);
    expect(response.headers.get("retry-after")).toMatch(/^\d+$/);
  });
});
