import type { ApiError, FollowEntry, OrgOverview, UserOverview } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { readJson, startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";

describe.each(DIALECTS)("following accounts and organizations, on %s", (dialect) => {
  let hub: InProcessHub;
  const tokens: Record<string, string> = {};

  const handles = async (path: string) => {
    const response = await hub.request(path);
    expect(response.status, path).toBe(200);
    return (await readJson<FollowEntry[]>(response)).map((entry) => entry.user);
  };
  const follow = (who: string, path: string, method = "POST") =>
    hub.request(`${path}/follow`, { method, token: tokens[who] });

  beforeAll(async () => {
    hub = await startInProcessHub({ dialect });
    for (const handle of ["alice", "bob", "carol"]) {
      await hub.createUser(handle);
      tokens[handle] = await hub.createToken(handle);
    }
    const org = await hub.request("/api/organizations", {
      method: "POST",
      token: tokens.alice,
      json: { name: "acme" },
    });
    expect(org.status).toBe(201);
  });
  afterAll(() => hub?.stop());

  it("follows an account once however often it is asked, and lists both sides", async () => {
    expect((await follow("bob", "/api/users/alice")).status).toBe(204);
    expect((await follow("bob", "/api/users/alice")).status).toBe(204);
    expect((await follow("carol", "/api/users/alice")).status).toBe(204);
    expect(await handles("/api/users/alice/followers")).toEqual(["bob", "carol"]);
    expect(await handles("/api/users/bob/following")).toEqual(["alice"]);
    expect(await handles("/api/users/alice/following")).toEqual([]);
    const entry = (await readJson<FollowEntry[]>(await hub.request("/api/users/alice/followers")))[0];
    expect(entry).toEqual({
      type: "user",
      user: "bob",
      fullname: expect.any(String),
      avatarUrl: `${hub.url}/api/users/bob/avatar`,
    });
    const overview = await readJson<UserOverview>(await hub.request("/api/users/alice/overview"));
    expect([overview.numFollowers, overview.numFollowing]).toEqual([2, 0]);
  });

  it("unfollows, and unfollowing again is no error", async () => {
    expect((await follow("carol", "/api/users/alice", "DELETE")).status).toBe(204);
    expect((await follow("carol", "/api/users/alice", "DELETE")).status).toBe(204);
    expect(await handles("/api/users/alice/followers")).toEqual(["bob"]);
  });

  it("follows organizations", async () => {
    expect((await follow("bob", "/api/organizations/acme")).status).toBe(204);
    expect((await follow("carol", "/api/organizations/acme")).status).toBe(204);
    expect(await handles("/api/organizations/acme/followers")).toEqual(["bob", "carol"]);
    const overview = await readJson<OrgOverview>(await hub.request("/api/organizations/acme/overview"));
    expect(overview.numFollowers).toBe(2);
    expect((await follow("carol", "/api/organizations/acme", "DELETE")).status).toBe(204);
    expect(await handles("/api/organizations/acme/followers")).toEqual(["bob"]);
  });

  it("refuses what cannot be followed or who may not follow, changing nothing", async () => {
    const self = await follow("alice", "/api/users/alice");
    expect(self.status).toBe(400);
    expect(await readJson<ApiError>(self)).toMatchObject({ code: "invalid_value" });
    expect((await follow("bob", "/api/users/nobody")).status).toBe(404);
    expect((await follow("bob", "/api/organizations/nothing")).status).toBe(404);
    expect((await hub.request("/api/users/nobody/followers")).status).toBe(404);
    expect((await hub.request("/api/users/alice/follow", { method: "POST" })).status).toBe(401);
    const reader = await hub.createToken("carol", ["--role", "read"]);
    const weak = await hub.request("/api/users/alice/follow", { method: "POST", token: reader });
    expect(weak.status).toBe(403);
    expect(await handles("/api/users/alice/followers")).toEqual(["bob"]);
  });
});
