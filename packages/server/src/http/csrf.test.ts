import type { ApiError } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJson } from "../test-support/hub-process.js";
import { startInProcessHub, type InProcessHub } from "../test-support/hub-inprocess.js";

/**
 * A browser session's writes must prove they come from the hub's own pages (the session's X-CSRF-Token and,
 * when the browser says, this origin); tokens are not sent by browsers on their own and need neither.
 */
describe("request forgery: writes with a browser session", () => {
  let hub: InProcessHub;
  let cookies: string;
  let csrf: string;
  let token: string;
  const origin = () => new URL(hub.url).origin;

  /** Creates a repository, the write under test; `headers` say what proof it carries. */
  const write = (name: string, headers: Record<string, string>) =>
    hub.request("/api/repos", {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ repo_id: `alice/${name}` }),
    });
  const refused = async (response: Response) => {
    expect(response.status).toBe(403);
    expect((await readJson<ApiError>(response)).code).toBe("invalid_csrf_token");
  };

  beforeAll(async () => {
    hub = await startInProcessHub();
    const { password } = await hub.createUser("alice");
    cookies = await hub.signIn("alice", password);
    csrf = /hub_csrf=([^;]+)/.exec(cookies)?.[1] ?? "";
    token = await hub.createToken("alice");
  });
  afterAll(() => hub?.stop());

  it("sets the token beside the session at sign-in, readable by pages and bound to the session", async () => {
    expect(csrf).toMatch(/^[\w-]{43}$/);
    const { password } = await hub.createUser("bob");
    const other = await hub.signIn("bob", password);
    expect(/hub_csrf=([^;]+)/.exec(other)?.[1]).not.toBe(csrf);
    const login = await hub.request("/api/auth/login", {
      method: "POST",
      json: { username: "bob", password },
    });
    const set = login.headers.getSetCookie();
    expect(set.find((c) => c.startsWith("hub_session="))).toMatch(/HttpOnly/);
    expect(set.find((c) => c.startsWith("hub_csrf="))).toMatch(/SameSite=Strict/);
    expect(set.find((c) => c.startsWith("hub_csrf="))).not.toMatch(/HttpOnly/);
    hub.secrets.add((set[0] ?? "").split(";")[0]?.split("=")[1] ?? "");
  });

  it("refuses a session's write without the token, with another session's, or from another site", async () => {
    await refused(await write("a", { cookie: cookies, "x-csrf-token": "" }));
    await refused(
      await write("b", {
        cookie: cookies,
        "x-csrf-token": `${csrf.slice(0, -1)}${csrf.endsWith("A") ? "B" : "A"}`,
      }),
    );
    await refused(await write("c", { cookie: cookies, origin: "https://evil.example" }));
    await refused(await write("d", { cookie: cookies, "sec-fetch-site": "cross-site" }));
    await refused(await write("e", { cookie: cookies, "sec-fetch-site": "same-site" }));
    const listed = await hub.request("/api/models?author=alice", { headers: { cookie: cookies } });
    expect(await readJson<unknown[]>(listed)).toEqual([]);
  });

  it("accepts the session's write from the hub's own pages, and a token's from anywhere", async () => {
    const own = await write("own", { cookie: cookies, origin: origin(), "sec-fetch-site": "same-origin" });
    expect(own.status, await own.clone().text()).toBe(201);
    expect((await write("no-origin", { cookie: cookies })).status).toBe(201);
    const bearer = await write("bearer", { authorization: `Bearer ${token}`, origin: "https://ci.example" });
    expect(bearer.status).toBe(201);
    // Reading needs no proof: a cross-site GET changes nothing.
    const read = await hub.request("/api/whoami-v2", {
      headers: { cookie: cookies, origin: "https://evil.example", "sec-fetch-site": "cross-site" },
    });
    expect(read.status).toBe(200);
  });

  it("ends with the session: sign-out clears both cookies", async () => {
    const out = await hub.request("/api/auth/logout", { method: "POST", headers: { cookie: cookies } });
    expect(out.status).toBe(204);
    expect(out.headers.getSetCookie().map((c) => c.split(";")[0])).toEqual(["hub_session=", "hub_csrf="]);
    await expect(write("after", { cookie: cookies }).then((r) => r.status)).resolves.toBe(401);
  });
});
