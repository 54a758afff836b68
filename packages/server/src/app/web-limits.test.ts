import type { ApiError } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJson } from "../test-support/hub-process.js";
import { startInProcessHub, type InProcessHub } from "../test-support/hub-inprocess.js";
import { HTML, pageText, postForm } from "../test-support/web.js";
import { FORM_BODY_LIMIT } from "./web.js";

/** The site's own page (its layout, its 413 section), never the API's JSON. */
async function expectTooLargePage(response: Response): Promise<string> {
  const body = await response.text();
  expect(response.status, body.slice(0, 300)).toBe(413);
  expect(response.headers.get("content-type")).toMatch(/^text\/html/);
  expect(response.headers.get("content-security-policy")).toContain("script-src");
  expect(body).toMatch(/^<!doctype html>/i);
  expect(body).toContain('<nav aria-label="Main"');
  expect(body).toContain("<h1>This form is too large</h1>");
  expect(body).toMatch(/role="alert"[^>]*>What the form sent is larger than the 1 MiB a page accepts/);
  expect(body).not.toContain('"error":');
  return body;
}

/** A form post to a page over the limit pages take is answered with a page; the API keeps its JSON. */
describe("the web site's body limit", () => {
  let hub: InProcessHub;
  let token: string;
  let cookie: string;

  const parentOf = (body: string) => /name="parentCommit" value="([0-9a-f]{40})"/.exec(body)?.[1] ?? "";
  const resolve = (path: string) => hub.request(`/alice/limits/resolve/main/${path}`, { token });

  beforeAll(async () => {
    hub = await startInProcessHub({ env: { HUB_RATE_LIMIT: "1000000" } });
    const { password } = await hub.createUser("alice");
    token = await hub.createToken("alice");
    cookie = await hub.signIn("alice", password);
    const created = await hub.request("/api/repos", {
      method: "POST",
      token,
      json: { repo_id: "alice/limits", repo_type: "model" },
    });
    expect(created.status).toBe(201);
  });
  afterAll(() => hub?.stop());

  it("answers a new-file form over 1 MiB with a 413 page that points to the upload page, and saves nothing", async () => {
    expect(FORM_BODY_LIMIT).toBe(1024 * 1024);
    const form = await pageText(hub, "/alice/limits/new/main/docs", { cookie });
    const fields = (content: string) => ({
      parentCommit: parentOf(form),
      path: "docs/big.txt",
      content,
      summary: "A big file",
      target: "direct",
    });
    const refused = await postForm(hub, "/alice/limits/new/main/docs", fields("x".repeat(FORM_BODY_LIMIT)), {
      cookie,
    });
    const body = await expectTooLargePage(refused);
    expect(body).toContain('href="/alice/limits/upload/main/docs"');
    expect(body).toContain('href="/alice/limits/new/main/docs"');
    expect((await resolve("docs/big.txt")).status).toBe(404);

    // Just under the limit the same form commits: the limit is the boundary, not the form.
    const content = "y".repeat(FORM_BODY_LIMIT - 4096);
    const accepted = await postForm(hub, "/alice/limits/new/main/docs", fields(content), { cookie });
    expect(accepted.status, (await accepted.clone().text()).slice(0, 300)).toBe(303);
    expect(accepted.headers.get("location")).toBe("/alice/limits/blob/main/docs/big.txt");
    expect((await (await resolve("docs/big.txt")).text()).length).toBe(content.length);

    // The edit form of that file points to the upload page of its folder.
    const edit = await postForm(
      hub,
      "/alice/limits/edit/main/docs/big.txt?x=1",
      { content: "z".repeat(FORM_BODY_LIMIT + 1) },
      { cookie },
    );
    expect(await expectTooLargePage(edit)).toContain('href="/alice/limits/upload/main/docs"');
  });

  it("answers a multipart form over the limit, and an anonymous sign-in form, with the same page", async () => {
    const avatar = new FormData();
    avatar.set("avatar", new Blob([Buffer.alloc(FORM_BODY_LIMIT + 1)], { type: "image/png" }), "me.png");
    const profile = await expectTooLargePage(
      await postForm(hub, "/settings/profile?/avatar", avatar, { cookie }),
    );
    expect(profile).not.toContain("/upload/");
    expect(profile).toContain('href="/settings/profile"');

    const login = await expectTooLargePage(
      await postForm(hub, "/login", { username: "alice", password: "p".repeat(FORM_BODY_LIMIT) }),
    );
    expect(login).toContain('href="/login"');
  });

  it("links back only to a path on this hub", async () => {
    for (const from of [
      "//evil.example/alice/limits/new/main",
      "/\\evil.example/x",
      "https://evil.example/",
    ]) {
      const response = await hub.request(`/_hub/request-too-large?from=${encodeURIComponent(from)}`, {
        headers: HTML,
      });
      const body = await expectTooLargePage(response);
      expect(body, from).not.toContain("evil.example");
      expect(body, from).not.toContain("Back to the form");
    }
  });

  it("keeps the API's JSON 413 for API routes, whatever the caller accepts", async () => {
    const json = await hub.request("/api/repos", {
      method: "POST",
      token,
      headers: HTML,
      json: { repo_id: "alice/huge", description: "d".repeat(2 * FORM_BODY_LIMIT) },
    });
    expect(json.status).toBe(413);
    expect(json.headers.get("content-type")).toMatch(/^application\/json/);
    expect((await readJson<ApiError>(json)).code).toBe("request_too_large");

    // A form post to a path under /api/ that only the pages' catch-all matches is the API's too.
    const form = await postForm(
      hub,
      "/api/nothing/here",
      { content: "x".repeat(FORM_BODY_LIMIT) },
      { cookie },
    );
    expect(form.status).toBe(413);
    expect(form.headers.get("content-type")).toMatch(/^application\/json/);
    expect((await readJson<ApiError>(form)).code).toBe("request_too_large");
  });
});
