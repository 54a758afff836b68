import type { HubConfiguration } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJson, startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";
import { runHubd } from "../../../test-support/hub-process.js";

describe("the discovery document", () => {
  let hub: InProcessHub;

  beforeAll(async () => {
    hub = await startInProcessHub({
      env: {
        HUB_ROUTER_PUBLIC_URL: "https://router.example.com/",
        HUB_SSH_PUBLIC_URL: "ssh://git@ssh.example.com:22",
      },
    });
  });
  afterAll(() => hub?.stop());

  it("names every surface and the device sign-in endpoints, without a token", async () => {
    const response = await hub.request("/.well-known/hub-configuration");
    expect(response.status).toBe(200);
    expect(await readJson<HubConfiguration>(response)).toEqual({
      api_url: hub.url,
      git_url: `http://127.0.0.1:${hub.config.ports.git}`,
      ssh_url: "ssh://git@ssh.example.com:22",
      inference_url: "https://router.example.com",
      device_authorization_endpoint: `${hub.url}/oauth/device/code`,
      token_endpoint: `${hub.url}/oauth/token`,
      mcp_url: `${hub.url}/mcp`,
      scopes_supported: [
        "repo:read",
        "repo:write",
        "repo:delete",
        "community:write",
        "jobs:run",
        "inference:run",
        "account:keys",
        "webhooks:manage",
        "read",
        "write",
      ],
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
    });
  });

  it("is in the OpenAPI document with the OAuth endpoints, which take form and JSON bodies", async () => {
    const openapi = (await (await hub.request("/api/openapi.json")).json()) as {
      paths: Record<string, { post?: { requestBody: { content: object } } }>;
    };
    expect(Object.keys(openapi.paths)).toEqual(
      expect.arrayContaining(["/.well-known/hub-configuration", "/oauth/device/code", "/oauth/token"]),
    );
    expect(Object.keys(openapi.paths)).not.toContain("/device");
    for (const path of ["/oauth/device/code", "/oauth/token"]) {
      expect(Object.keys(openapi.paths[path]?.post?.requestBody.content ?? {}).sort()).toEqual([
        "application/json",
        "application/x-www-form-urlencoded",
      ]);
    }
  });

  it("refuses a Router address that is not http or https, naming the setting", async () => {
    const env = { PATH: process.env.PATH, HUB_DATA_DIR: hub.dataDir, HUB_ROUTER_PUBLIC_URL: "ftp://x" };
    const result = await runHubd(["serve"], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/HUB_ROUTER_PUBLIC_URL must use http or https/);
  });
});
