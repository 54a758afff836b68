import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { HubConfiguration, SCOPES_SUPPORTED } from "@hub/api";
import type { Config } from "../../../config.js";

/**
 * `GET /.well-known/hub-configuration`: the addresses of every surface and of
 * the device sign-in and the MCP server, so a client configured with the hub's base URL finds the rest.
 */
export function hubConfigurationRoutes({
  config,
  version,
}: {
  config: Readonly<Config>;
  version: string;
}): FastifyPluginAsyncTypebox {
  const document: HubConfiguration = {
    api_url: config.publicUrl,
    git_url: config.gitPublicUrl,
    ssh_url: config.sshPublicUrl,
    inference_url: config.routerPublicUrl,
    device_authorization_endpoint: `${config.publicUrl}/oauth/device/code`,
    token_endpoint: `${config.publicUrl}/oauth/token`,
    mcp_url: `${config.publicUrl}/mcp`,
    scopes_supported: SCOPES_SUPPORTED,
    version,
  };
  return async (app) => {
    app.get(
      "/.well-known/hub-configuration",
      {
        schema: {
          operationId: "hub_configuration",
          tags: ["OAuth"],
          summary:
            "Where the API, git, SSH, the Router, the device sign-in endpoints and the MCP server are.",
          response: { 200: HubConfiguration },
        },
        config: { access: "public" },
      },
      async () => document,
    );
  };
}
