import { existsSync } from "node:fs";
import type { RepoInfo } from "@hub/api";
import { describe, expect, it } from "vitest";
import { readJson, startInProcessHub } from "./hub-inprocess.js";

describe("the in-process hub the logic tests use", () => {
  it("keeps the hub's log, and stop() removes the storage and fails if a secret the test made is in the log", async () => {
    const hub = await startInProcessHub();
    await hub.createUser("alice");
    const token = await hub.createToken("alice");
    const whoami = await hub.request("/api/whoami", { token });
    expect(whoami.status).toBe(200);
    const requestId = whoami.headers.get("x-request-id") ?? "";
    expect(hub.logs.some((line) => line.includes(requestId) && line.includes("/api/whoami"))).toBe(true);
    expect(hub.logs.join("\n")).not.toContain(token);

    hub.logs.push(`{"msg":"a careless line","value":"${token}"}`);
    await expect(hub.stop()).rejects.toThrow("a secret reached the log");
    expect(existsSync(hub.dataDir)).toBe(false);
  });

  it("follows redirects on the hub as fetch does, unless the request asks for them", async () => {
    const hub = await startInProcessHub();
    await hub.createUser("alice");
    const token = await hub.createToken("alice");
    const create = await hub.request("/api/repos", { method: "POST", token, json: { repo_id: "alice/old" } });
    expect(create.status).toBe(201);
    const move = await hub.request("/api/repos/move", {
      method: "POST",
      token,
      json: { fromRepo: "alice/old", toRepo: "alice/new", type: "model" },
    });
    expect(move.status).toBe(200);

    const manual = await hub.request("/api/models/alice/old", { token, redirect: "manual" });
    expect(manual.status).toBe(307);
    expect(manual.headers.get("location")).toBe("/api/models/alice/new");
    const followed = await hub.request("/api/models/alice/old", { token });
    expect(followed.status).toBe(200);
    expect(followed.redirected).toBe(true);
    expect(followed.url).toBe(`${hub.url}/api/models/alice/new`);
    expect((await readJson<RepoInfo>(followed)).id).toBe("alice/new");
    await hub.stop();
  });
});
