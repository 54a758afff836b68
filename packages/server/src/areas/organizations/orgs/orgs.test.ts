import type { ApiError, OrgMember, OrgOverview, OrgSummary } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { readJson, startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";

describe.each(DIALECTS)("organizations on %s", (dialect) => {
  let hub: InProcessHub;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    hub = await startInProcessHub({ dialect });
    for (const handle of ["alice", "bob", "carol", "dave"]) {
      await hub.createUser(handle);
      tokens[handle] = await hub.createToken(handle);
    }
  });
  afterAll(() => hub?.stop());

  const call = (method: string, path: string, who: string, json?: unknown) =>
    hub.request(path, { method, token: tokens[who], ...(json !== undefined ? { json } : {}) });
  const members = async (who = "alice") =>
    (await readJson<OrgMember[]>(await call("GET", "/api/organizations/acme/members", who))).map(
      (m) => `${m.user}:${m.role}`,
    );

  it("creates an organization with its creator as admin, and shows its public summary", async () => {
    const created = await call("POST", "/api/organizations", "alice", { name: "acme", fullname: "Acme Inc" });
    expect(created.status).toBe(201);
    expect(await readJson<OrgSummary>(created)).toMatchObject({
      type: "org",
      name: "acme",
      fullname: "Acme Inc",
      plan: "free",
      numMembers: 1,
    });
    expect(await members()).toEqual(["alice:admin"]);
    const anonymous = await hub.request("/api/organizations/acme");
    expect(anonymous.status).toBe(200);
    expect((await readJson<OrgSummary>(anonymous)).name).toBe("acme");
    expect((await hub.request("/api/organizations/nobody")).status).toBe(404);
    expect((await call("POST", "/api/organizations", "bob", { name: "acme" })).status).toBe(409);
    expect((await call("POST", "/api/organizations", "bob", { name: "alice" })).status).toBe(409);
    expect((await call("POST", "/api/organizations", "bob", { name: "Bad Handle" })).status).toBe(400);
    const fineGrained = await hub.createToken("bob", ["--scopes", "repo:read"]);
    expect(
      (
        await hub.request("/api/organizations", {
          method: "POST",
          token: fineGrained,
          json: { name: "bobs" },
        })
      ).status,
    ).toBe(403);
  });

  it("lets admins add members, change roles and remove them, and shows the change in whoami at once", async () => {
    expect(
      (await call("POST", "/api/organizations/acme/members", "alice", { user: "bob", role: "write" })).status,
    ).toBe(201);
    expect(
      (await call("POST", "/api/organizations/acme/members", "alice", { user: "carol", role: "read" }))
        .status,
    ).toBe(201);
    expect(
      (await call("POST", "/api/organizations/acme/members", "alice", { user: "bob", role: "read" })).status,
    ).toBe(409);
    expect(
      (await call("POST", "/api/organizations/acme/members", "alice", { user: "ghost", role: "read" }))
        .status,
    ).toBe(404);
    expect(
      (await call("POST", "/api/organizations/acme/members", "alice", { user: "dave", role: "owner" }))
        .status,
    ).toBe(400);
    expect(await members()).toEqual(["alice:admin", "bob:write", "carol:read"]);
    const whoami = async (who: string) =>
      (
        await readJson<{ orgs: Array<{ name: string; roleInOrg: string }> }>(
          await call("GET", "/api/whoami", who),
        )
      ).orgs;
    expect(await whoami("bob")).toEqual([
      { type: "org", name: "acme", fullname: "Acme Inc", roleInOrg: "write" },
    ]);
    expect(
      (await call("PUT", "/api/organizations/acme/members/bob", "alice", { role: "contributor" })).status,
    ).toBe(204);
    expect((await whoami("bob"))[0]?.roleInOrg).toBe("contributor");
    expect((await call("DELETE", "/api/organizations/acme/members/carol", "alice")).status).toBe(204);
    expect(await whoami("carol")).toEqual([]);
    expect((await call("GET", "/api/organizations/acme/members", "carol")).status).toBe(403);
  });

  it("keeps membership management to admins", async () => {
    for (const [method, path, body] of [
      ["POST", "/api/organizations/acme/members", { user: "dave", role: "admin" }],
      ["PUT", "/api/organizations/acme/members/alice", { role: "read" }],
      ["DELETE", "/api/organizations/acme/members/alice", undefined],
    ] as const) {
      const response = await call(method, path, "bob", body);
      expect(response.status, `${method} ${path}`).toBe(403);
    }
    const readToken = await hub.createToken("alice", ["--role", "read"]);
    const weak = await hub.request("/api/organizations/acme/members", {
      method: "POST",
      token: readToken,
      json: { user: "dave", role: "read" },
    });
    expect(weak.status).toBe(403);
    expect((await readJson<ApiError>(weak)).code).toBe("insufficient_scope");
    expect((await call("POST", "/api/organizations", "dave", { name: "other" })).status).toBe(201);
    const boundedElsewhere = await hub.createToken("dave", ["--role", "write", "--org", "other"]);
    const inAcme = await hub.createToken("alice", ["--role", "write", "--org", "acme"]);
    const outside = await hub.request("/api/organizations/other/members", {
      method: "POST",
      token: inAcme,
      json: { user: "bob", role: "read" },
    });
    expect(outside.status).toBe(403);
    expect((await hub.request("/api/organizations/acme/members", { token: boundedElsewhere })).status).toBe(
      403,
    );
    expect((await hub.request("/api/organizations/acme/members", { token: inAcme })).status).toBe(200);
  });

  it("shows the overview huggingface_hub reads, counting members and only public repositories", async () => {
    for (const [repo_id, repo_type, isPrivate] of [
      ["acme/public-model", "model", false],
      ["acme/hidden-model", "model", true],
      ["acme/public-data", "dataset", false],
    ] as const) {
      const created = await call("POST", "/api/repos", "alice", { repo_id, repo_type, private: isPrivate });
      expect(created.status).toBe(201);
    }
    const overview = await hub.request("/api/organizations/acme/overview");
    expect(overview.status).toBe(200);
    const body = await readJson<OrgOverview>(overview);
    expect(body).toMatchObject({ type: "org", name: "acme", numModels: 1, numDatasets: 1, numSpaces: 0 });
    expect(body.numUsers).toBe((await members()).length);
    expect((await hub.request("/api/organizations/nobody/overview")).status).toBe(404);
  });

  it("never loses its last admin, even under concurrent demotions", async () => {
    expect(
      (await call("PUT", "/api/organizations/acme/members/alice", "alice", { role: "write" })).status,
    ).toBe(409);
    expect((await call("DELETE", "/api/organizations/acme/members/alice", "alice")).status).toBe(409);
    const leave = await call("POST", "/api/organizations/acme/leave", "alice");
    expect(leave.status).toBe(409);
    expect((await readJson<ApiError>(leave)).code).toBe("last_admin");

    expect(
      (await call("PUT", "/api/organizations/acme/members/bob", "alice", { role: "admin" })).status,
    ).toBe(204);
    const results = await Promise.all([
      call("PUT", "/api/organizations/acme/members/alice", "bob", { role: "read" }),
      call("PUT", "/api/organizations/acme/members/bob", "alice", { role: "read" }),
    ]);
    // One demotion wins; the other is refused, as the last admin's (409) or as no longer an admin's (403).
    const statuses = results.map((r) => r.status).sort();
    expect(statuses[0]).toBe(204);
    expect([403, 409]).toContain(statuses[1]);
    const admins = (
      await readJson<OrgMember[]>(await call("GET", "/api/organizations/acme/members", "bob"))
    ).filter((m) => m.role === "admin");
    expect(admins).toHaveLength(1);
  });

  it("lets members leave", async () => {
    const admin =
      (await readJson<OrgMember[]>(await call("GET", "/api/organizations/acme/members", "bob"))).find(
        (m) => m.role === "admin",
      )?.user ?? "";
    expect(
      (await call("POST", "/api/organizations/acme/members", admin, { user: "dave", role: "read" })).status,
    ).toBe(201);
    expect((await call("POST", "/api/organizations/acme/leave", "dave")).status).toBe(204);
    expect((await call("POST", "/api/organizations/acme/leave", "dave")).status).toBe(403);
  });
});
