import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { Type } from "@sinclair/typebox";
import type { FastifyBaseLogger, FastifyRequest } from "fastify";
import type { Principal } from "../../../auth/credential.js";
import { HubError, boundQuotes } from "../../../errors.js";
import { createValidatorCompiler, fieldOf, type ValidationIssue } from "../../../http/validation.js";
import type { McpTool } from "./mcp-tools.js";

/** The request headers the Streamable HTTP transport reads; nothing else of the request reaches it. */
const TRANSPORT_HEADERS = ["accept", "content-type", "mcp-protocol-version", "mcp-session-id"];

const INSTRUCTIONS =
  "Tools to find models, datasets, spaces and papers on this hub, read a repository's card, list its files, and see which models its inference Router serves. Every call acts as the caller: with an access token, private repositories it may see are found too; without one, only public content.";

/** A tool's answer that tells the assistant what went wrong, so it can correct its call. */
function toolError(message: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text: message }] };
}

/** A sentence naming the argument at fault and the rule it broke. */
function describeArgumentError(issue: ValidationIssue, tool: McpTool): string {
  const field = fieldOf(issue);
  const property = tool.inputSchema.properties[field.split(".")[0] ?? ""] as
    { anyOf?: Array<{ const?: unknown }> } | undefined;
  switch (issue.keyword) {
    case "required":
      return `The argument "${field}" is required.`;
    case "additionalProperties":
      return `${tool.name} takes no argument "${field}"; it takes ${Object.keys(tool.inputSchema.properties).join(", ")}.`;
    case "anyOf":
      return `The argument "${field}" must be one of ${(property?.anyOf ?? []).map((option) => JSON.stringify(option.const)).join(", ")}.`;
    default:
      return `The argument "${field || "arguments"}" ${issue.message ?? "is invalid"}.`;
  }
}

/**
 * The hub's MCP server as one request's caller sees it: `tools/list` and
 * `tools/call` over the tools, arguments checked against each tool's input
 * schema as the API checks bodies (nothing coerced, unknown names refused).
 * A refusal or a bad argument is a tool result with `isError`, whose text
 * says what to do, as the protocol asks; an unknown tool is a protocol error.
 * https://modelcontextprotocol.io/specification/2025-06-18/server/tools
 */
function mcpServerFor(
  tools: McpTool[],
  validators: Map<string, ReturnType<ReturnType<typeof createValidatorCompiler>>>,
  caller: Principal | null,
  version: string,
  log: FastifyBaseLogger,
): McpServer {
  const mcp = new McpServer({ name: "hub", title: "Hub", version }, { instructions: INSTRUCTIONS });
  // The tools are answered by the handlers below (McpServer's own would take zod schemas), through its Server.
  mcp.server.registerCapabilities({ tools: { listChanged: false } });
  mcp.server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema,
      outputSchema: tool.outputSchema,
      annotations: { title: tool.title, readOnlyHint: true, openWorldHint: false },
    })),
  }));
  mcp.server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = tools.find((candidate) => candidate.name === request.params.name);
    const validate = validators.get(request.params.name);
    if (!tool || !validate) {
      throw new McpError(
        ErrorCode.InvalidParams,
        boundQuotes(
          `There is no tool "${request.params.name}"; the tools are ${tools.map((t) => t.name).join(", ")}.`,
        ),
      );
    }
    const args = request.params.arguments ?? {};
    if (!validate(args)) {
      const issues = (validate.errors ?? []) as ValidationIssue[];
      // A value none of a union's options take is reported option by option, then as the union's: name the union.
      const issue = issues.find((candidate) => candidate.keyword === "anyOf") ?? issues[0];
      return toolError(
        issue ? boundQuotes(describeArgumentError(issue, tool)) : "The arguments are invalid.",
      );
    }
    try {
      const answer = await tool.run(caller, args);
      return { content: [{ type: "text", text: answer.text }], structuredContent: answer.structured };
    } catch (err) {
      if (err instanceof HubError && err.status < 500) return toolError(err.message);
      log.error({ err, tool: tool.name }, "MCP tool failed");
      return toolError("The hub could not complete this call; try again later.");
    }
  });
  return mcp;
}

/**
 * The caller of an MCP request: an access token or nobody. A browser session
 * is refused even with its forgery token: MCP clients send tokens, and a page
 * has no business calling tools as the person looking at it. A request a
 * browser sends from another site's page (its Origin names that site) is
 * refused too, as the transport's specification asks against DNS rebinding.
 */
function callerOf(request: FastifyRequest, publicOrigin: string): Principal | null {
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== publicOrigin) {
    throw new HubError(
      403,
      "origin_not_allowed",
      `The MCP server answers MCP clients and this hub's own pages, not pages of ${origin}; call it from a client that sends no Origin.`,
    );
  }
  const principal = request.principal;
  if (principal && principal.credential.type !== "access_token") {
    throw new HubError(
      403,
      "token_required",
      "The MCP server takes an access token, not a browser session or SSH key: send Authorization: Bearer <token>, or no credential for public content.",
    );
  }
  return principal;
}

/**
 * `POST /mcp`: the Model Context Protocol over Streamable HTTP, stateless (a
 * server and transport per request, answered as JSON), so every message is
 * authenticated, metered and answered on its own like an API call.
 * `GET` and `DELETE` (a server-sent event stream, ending a session) answer 405,
 * as a server without sessions does.
 * https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#streamable-http
 */
export function mcpRoutes({
  tools,
  publicUrl,
  version,
}: {
  tools: McpTool[];
  publicUrl: string;
  version: string;
}): FastifyPluginAsyncTypebox {
  const publicOrigin = new URL(publicUrl).origin;
  const compile = createValidatorCompiler();
  const validators = new Map(
    tools.map((tool) => [
      tool.name,
      compile({ schema: tool.inputSchema, method: "POST", url: "/mcp", httpPart: "body" }),
    ]),
  );
  return async (app) => {
    app.post(
      "/mcp",
      {
        schema: {
          operationId: "mcp",
          tags: ["MCP"],
          summary:
            "The hub's MCP server (Streamable HTTP, JSON answers): a JSON-RPC message of the Model Context Protocol, sent with Accept: application/json, text/event-stream.",
          body: Type.Unknown({
            description: "A JSON-RPC 2.0 message (or batch) of the Model Context Protocol.",
          }),
        },
        config: { access: "optional" },
      },
      async (request, reply) => {
        const caller = callerOf(request, publicOrigin);
        const headers = new Headers();
        for (const name of TRANSPORT_HEADERS) {
          const value = request.headers[name];
          if (typeof value === "string") headers.set(name, value);
        }
        const mcp = mcpServerFor(tools, validators, caller, version, request.log);
        const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
        await mcp.connect(transport);
        try {
          const response = await transport.handleRequest(
            new Request(`${publicUrl}/mcp`, { method: "POST", headers }),
            { parsedBody: request.body },
          );
          reply.status(response.status);
          response.headers.forEach((value, name) => void reply.header(name, value));
          return reply.send(Buffer.from(await response.arrayBuffer()));
        } finally {
          await mcp.close();
        }
      },
    );
    for (const method of ["GET", "DELETE"] as const) {
      app.route({
        method,
        url: "/mcp",
        schema: { hide: true },
        config: { access: "public" },
        handler: async () => {
          throw new HubError(
            405,
            "bad_request",
            "This MCP server keeps no sessions and sends no event stream: send each message with POST /mcp.",
            { headers: { allow: "POST" } },
          );
        },
      });
    }
  };
}
