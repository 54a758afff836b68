import { randomUUID } from "node:crypto";
import swagger from "@fastify/swagger";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { ApiError, Health } from "@hub/api";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { AccountService } from "../areas/account/account.service.js";
import { accountRoutes } from "../areas/account/account.routes.js";
import { authRoutes } from "../areas/auth/auth.routes.js";
import type { AuthService } from "../areas/auth/auth.service.js";
import { tokensRoutes } from "../areas/tokens/tokens.routes.js";
import type { TokensService } from "../areas/tokens/tokens.service.js";
import type { Authenticate } from "../auth/authenticate.js";
import type { Authorize } from "../auth/authorizer.js";
import type { RateLimiter } from "../auth/rate-limit/rate-limiter.js";
import type { Config } from "../config.js";
import type { Db } from "../db/database.js";
import { installAccess } from "./access.js";
import { installErrorHandling } from "./error-handler.js";
import { createValidatorCompiler } from "./validation.js";

export interface HubAppDeps {
  config: Readonly<Config>;
  logger: FastifyBaseLogger;
  db: Db;
  version: string;
  authenticate: Authenticate;
  authorize: Authorize;
  rateLimiter: RateLimiter;
  account: AccountService;
  auth: AuthService;
  tokens: TokensService;
}

/** Builds the Hub API surface: the pipeline every route shares, then the areas' routes. */
export async function buildHubApp(deps: HubAppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: deps.logger,
    trustProxy: config.trustProxy,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    return503OnClosing: true,
    disableRequestLogging: true,
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(createValidatorCompiler());
  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
    reply.header("x-content-type-options", "nosniff");
    reply.header("cache-control", "no-store");
  });
  installErrorHandling(app);
  // One access-log line per request, written when the response is done.
  app.addHook("onResponse", async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      "request",
    );
  });
  // While shutting down, answer in-flight requests with Connection: close so keep-alive clients let go.
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  app.addHook("onSend", async (_request, reply) => {
    if (closing) reply.header("connection", "close");
  });

  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Hub API",
        version: "1.0.0",
        description: "The Hub REST API: accounts, tokens, repositories, organizations and more.",
      },
      servers: [{ url: config.publicUrl }],
      components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    },
    // Shared schemas keep their own names (`Error`) in components.schemas.
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  app.addSchema(ApiError);
  installAccess(app, {
    authenticate: deps.authenticate,
    authorize: deps.authorize,
    rateLimiter: deps.rateLimiter,
    rateLimit: config.rateLimit,
  });

  app.get(
    "/api/health",
    {
      schema: {
        operationId: "health",
        tags: ["OpenAPI"],
        summary: "Liveness and database reachability.",
        response: { 200: Health },
      },
      config: { access: "public", unmetered: true },
    },
    async () => {
      await deps.db.selectFrom("users").select("id").limit(1).execute();
      return { status: "ok" as const, version: deps.version };
    },
  );
  app.get(
    "/api/openapi.json",
    {
      schema: {
        operationId: "openapi_get",
        tags: ["OpenAPI"],
        summary: "This API's OpenAPI 3.1 document.",
        hide: true,
      },
      config: { access: "public" },
    },
    async () => app.swagger(),
  );

  await app.register(accountRoutes({ account: deps.account }));
  await app.register(
    authRoutes({
      auth: deps.auth,
      secureCookies: config.publicUrl.startsWith("https:"),
      sessionTtlSeconds: config.sessionTtlSeconds,
    }),
  );
  await app.register(tokensRoutes({ tokens: deps.tokens }));
  return app;
}
