import type { TokenList } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJson } from "../test-support/hub-process.js";
import { startInProcessHub, type InProcessHub } from "../test-support/hub-inprocess.js";
import { postForm, readPage } from "../test-support/web.js";

/** The settings pages rendered on the server: access tokens made, shown once and revoked through the API. */
describe("the settings pages", () => {
  let hub: InProcessHub;
  let cookies: string;

  const action = (path: string, fields: URLSearchParams) => postForm(hub, path, fields, { cookie: cookies });
  const tokens = async () =>
    (await readJson<TokenList>(await hub.request("/api/me/tokens", { headers: { cookie: cookies } }))).tokens;

  beforeAll(async () => {
    hub = await startInProcessHub();
    const { password } = await hub.createUser("alice");
    cookies = await hub.signIn("alice", password);
  });
  afterAll(() => hub?.stop());

  it("sends a visitor who is not signed in to the sign-in page", async () => {
    const response = await readPage(hub, "/settings/tokens", { redirect: "manual" });
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/login?next=%2Fsettings%2Ftokens");
  });

  it("creates a fine-grained token, shows its secret once, lists it without it, and revokes it", async () => {
    const created = await action(
      "/settings/tokens?/create",
      new URLSearchParams([
        ["name", "ci-uploads"],
        ["kind", "fine-grained"],
        ["scopes", "repo:read"],
        ["scopes", "repo:write"],
        ["repositories", "alice/one\nalice/two"],
        ["expires", "7"],
      ]),
    );
    const page = await created.text();
    expect(created.status, page.slice(0, 500)).toBe(200);
    const secret = /data-testid="new-token"[^>]*>([^<]+)</.exec(page)?.[1] ?? "";
    expect(secret).toMatch(/^hf_\w+$/);
    hub.secrets.add(secret);

    const [token] = await tokens();
    expect(token).toMatchObject({
      name: "ci-uploads",
      kind: "fine-grained",
      scopes: ["repo:read", "repo:write"],
      repositories: ["alice/one", "alice/two"],
    });
    const days = (Date.parse(token?.expires_at ?? "") - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.9);
    expect(days).toBeLessThan(7.1);
    const whoami = await hub.request("/api/whoami-v2", { token: secret });
    expect(whoami.status).toBe(200);

    const list = await (await readPage(hub, "/settings/tokens", { cookie: cookies })).text();
    expect(list).toContain("ci-uploads");
    expect(list).not.toContain(secret);

    const revoked = await action(
      "/settings/tokens?/revoke",
      new URLSearchParams({ token_id: token?.token_id ?? "", name: "ci-uploads" }),
    );
    expect(revoked.status).toBe(200);
    expect(await revoked.text()).toContain("Revoked ci-uploads");
    expect(await tokens()).toEqual([]);
    expect((await hub.request("/api/whoami-v2", { token: secret })).status).toBe(401);
  });

  it("keeps what was typed and names the problem when the API refuses", async () => {
    const refused = await action(
      "/settings/tokens?/create",
      new URLSearchParams({
        name: "bad",
        kind: "fine-grained",
        scopes: "repo:read",
        repositories: "not a repo",
      }),
    );
    expect(refused.status).toBe(400);
    const page = await refused.text();
    expect(page).toMatch(/role="alert"[^>]*>[^<]*repositor/i);
    expect(page).toContain('value="bad"');
    const empty = await action("/settings/tokens?/create", new URLSearchParams({ name: "", kind: "read" }));
    expect(empty.status).toBe(400);
    expect(await tokens()).toEqual([]);
  });
});
