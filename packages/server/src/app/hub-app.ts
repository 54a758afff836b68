import { randomUUID } from "node:crypto";
import swagger from "@fastify/swagger";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { ApiError, Health, HealthQuery, OAuthError } from "@hub/api";
import { noteArrival } from "../db/change-epoch.js";
import type { HealthChecks } from "./health-checks.js";
import type { DownloadCounter } from "../areas/repositories/metadata/download-counter.js";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from "fastify";
import type { AccountService } from "../areas/accounts/account/account.service.js";
import { accountRoutes } from "../areas/accounts/account/account.routes.js";
import { authRoutes } from "../areas/accounts/auth/auth.routes.js";
import type { SessionInferenceService } from "../areas/accounts/auth/session-inference.service.js";
import { profileRoutes } from "../areas/accounts/profile/profile.routes.js";
import type { ProfileService } from "../areas/accounts/profile/profile.service.js";
import type { SocialIdentities } from "../areas/accounts/profile/social-identities.js";
import { usernameRoutes } from "../areas/accounts/username/username.routes.js";
import { hardwareRoutes } from "../areas/accounts/hardware/hardware.routes.js";
import { contentPreferencesRoutes } from "../areas/accounts/content-preferences/content-preferences.routes.js";
import type { ContentPreferencesService } from "../areas/accounts/content-preferences/content-preferences.service.js";
import { papersRoutes } from "../areas/community/papers/papers.routes.js";
import { discussionsRoutes } from "../areas/community/discussions/discussions.routes.js";
import type { DiscussionsService } from "../areas/community/discussions/discussions.service.js";
import { notificationsRoutes } from "../areas/community/notifications/notifications.routes.js";
import type { NotificationsService } from "../areas/community/notifications/notifications.service.js";
import type { PapersService } from "../areas/community/papers/papers.service.js";
import { followsRoutes } from "../areas/accounts/follows/follows.routes.js";
import { storageRoutes } from "../areas/repositories/storage/storage.routes.js";
import { tagsRoutes } from "../areas/repositories/tags/tags.routes.js";
import type { StorageService } from "../areas/repositories/storage/storage.service.js";
import type { RepoDuplication } from "../areas/repositories/repos/duplicate.js";
import type { FollowsService } from "../areas/accounts/follows/follows.service.js";
import { likesRoutes } from "../areas/community/likes/likes.routes.js";
import type { LikesService } from "../areas/community/likes/likes.service.js";
import { collectionsRoutes } from "../areas/community/collections/collections.routes.js";
import type { CollectionsService } from "../areas/community/collections/collections.service.js";
import type { CollectionItemsService } from "../areas/community/collections/collection-items.service.js";
import type { HardwareService } from "../areas/accounts/hardware/hardware.service.js";
import { gatingRoutes } from "../areas/repositories/gating/gating.routes.js";
import type { GatingService } from "../areas/repositories/gating/gating.service.js";
import { mfaRoutes } from "../areas/accounts/mfa/mfa.routes.js";
import type { MfaService } from "../areas/accounts/mfa/mfa.service.js";
import { billingRoutes } from "../areas/accounts/billing/billing.routes.js";
import type { BillingService } from "../areas/accounts/billing/billing.service.js";
import { accountDeletionRoutes } from "../areas/accounts/account-deletion/account-deletion.routes.js";
import type { AccountDeletionService } from "../areas/accounts/account-deletion/account-deletion.service.js";
import type { UsernameService } from "../areas/accounts/username/username.service.js";
import type { AuthService } from "../areas/accounts/auth/auth.service.js";
import { filesRoutes } from "../areas/repositories/files/files.routes.js";
import type { FilesService } from "../areas/repositories/files/files.service.js";
import { xetRoutes } from "../areas/repositories/xet/xet.routes.js";
import type { XetService } from "../areas/repositories/xet/xet.service.js";
import type { RepoFiles } from "../git/repo-files.js";
import { reposRoutes } from "../areas/repositories/repos/repos.routes.js";
import { refsRoutes } from "../areas/repositories/refs/refs.routes.js";
import type { RefsService } from "../areas/repositories/refs/refs.service.js";
import type { ReposService } from "../areas/repositories/repos/repos.service.js";
import { tokensRoutes } from "../areas/accounts/tokens/tokens.routes.js";
import { devicePageRoutes } from "../areas/accounts/device/device-page.routes.js";
import { deviceRoutes } from "../areas/accounts/device/device.routes.js";
import type { DeviceService } from "../areas/accounts/device/device.service.js";
import { hubConfigurationRoutes } from "../areas/platform/hub-configuration/hub-configuration.routes.js";
import { createMcpTools } from "../areas/platform/mcp/mcp-tools.js";
import { mcpRoutes } from "../areas/platform/mcp/mcp.routes.js";
import { orgsRoutes } from "../areas/organizations/orgs/orgs.routes.js";
import { ssoRoutes } from "../areas/organizations/sso/sso.routes.js";
import type { SsoService } from "../areas/organizations/sso/sso.service.js";
import { keysRoutes } from "../areas/accounts/keys/keys.routes.js";
import { inferenceRoutes } from "../areas/inference/settings/inference.routes.js";
import { webhooksRoutes } from "../areas/integrations/webhooks/webhooks.routes.js";
import { hfWebhooksRoutes } from "../areas/integrations/webhooks/hf-webhooks.routes.js";
import type { WebhooksService } from "../areas/integrations/webhooks/webhooks.service.js";
import type { InferenceService } from "../areas/inference/settings/inference.service.js";
import type { Catalog } from "../router/candidates.js";
import type { LiveStats } from "../router/live-stats.js";
import type { SessionAffinity } from "../router/session-affinity.js";
import type { KeysService } from "../areas/accounts/keys/keys.service.js";
import type { OrgsService } from "../areas/organizations/orgs/orgs.service.js";
import { smartHttpRoutes } from "../git/http/smart-http.js";
import { installJsonBodyParser } from "../http/json-body.js";
import type { GitServiceRunner } from "../git/git-service.js";
import type { RepoStorage } from "../git/repo-storage.js";
import { lfsRoutes } from "../git/lfs/lfs.routes.js";
import type { LfsLocksService } from "../git/lfs/lfs-locks.service.js";
import type { LfsService } from "../git/lfs/lfs.service.js";
import type { ObjectStore } from "../git/lfs/object-store.js";
import type { TokensService } from "../areas/accounts/tokens/tokens.service.js";
import type { Authenticate } from "../auth/authenticate.js";
import type { Authorize } from "../auth/authorizer.js";
import type { RateLimiter } from "../auth/rate-limit/rate-limiter.js";
import type { Config } from "../config.js";
import type { Db } from "../db/database.js";
import { createCsrf } from "../auth/csrf.js";
import { installAccess } from "../http/access.js";
import { AccessLog, lazyChildLoggers } from "../http/access-log.js";
import {
  answerClientError,
  installErrorHandling,
  renderHubError,
  toHubError,
} from "../http/error-handler.js";
import { createValidatorCompiler } from "../http/validation.js";
import { webRoutes } from "./web.js";

export interface AppDeps {
  git: GitServiceRunner;
  config: Readonly<Config>;
  logger: FastifyBaseLogger;
  db: Db;
  version: string;
  authenticate: Authenticate;
  authorize: Authorize;
  rateLimiter: RateLimiter;
  downloadRateLimiter: RateLimiter;
  account: AccountService;
  profiles: ProfileService;
  identities: SocialIdentities;
  usernames: UsernameService;
  hardware: HardwareService;
  preferences: ContentPreferencesService;
  downloads: DownloadCounter;
  gating: GatingService;
  papers: PapersService;
  discussions: DiscussionsService;
  notifications: NotificationsService;
  follows: FollowsService;
  likes: LikesService;
  collections: CollectionsService;
  collectionItems: CollectionItemsService;
  repoStorage: StorageService;
  repoDuplication: RepoDuplication;
  auth: AuthService;
  sessionInference: SessionInferenceService;
  mfa: MfaService;
  tokens: TokensService;
  device: DeviceService;
  orgs: OrgsService;
  keys: KeysService;
  repos: ReposService;
  storage: RepoStorage;
  objectStore: ObjectStore;
  healthChecks: HealthChecks;
  files: FilesService;
  refs: RefsService;
  repoFiles: RepoFiles;
  serverKey: Buffer;
  lfs: LfsService;
  lfsLocks: LfsLocksService;
  xet: XetService;
  clock: () => Date;
  inference: InferenceService;
  billing: BillingService;
  deletion: AccountDeletionService;
  webhooks: WebhooksService;
  sso: SsoService;
  catalog: Catalog;
  stats: LiveStats;
  affinity: SessionAffinity;
  startedAt: number;
}

/** What every surface shares: request ids, security headers, one access-log line, errors, the access pipeline. */
async function createApp(deps: AppDeps, options: { openapi: boolean }) {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: deps.logger,
    trustProxy: config.trustProxy,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    return503OnClosing: true,
    logController: new AccessLog(deps.logger),
    childLoggerFactory: lazyChildLoggers,
    // Pushes and LFS transfers can take longer than any fixed limit; idle sockets still time out.
    requestTimeout: 0,
    // What the router and Node's parser refuse before a route runs comes in the shared error schema too.
    frameworkErrors: (error, _request, reply: FastifyReply) => {
      const hubError = toHubError(error);
      void reply.status(hubError.status).headers(hubError.headers).send(renderHubError(hubError));
    },
    clientErrorHandler: answerClientError,
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Before anything reads: what the read cache knew before this request arrived is asked again.
  app.server.prependListener("request", noteArrival);
  app.setValidatorCompiler(createValidatorCompiler());
  installJsonBodyParser(app, ["application/json", /^application\/[\w.+-]+\+json(?:;|$)/i]);
  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
    reply.header("x-content-type-options", "nosniff");
    reply.header("cache-control", "no-store");
  });
  installErrorHandling(app);
  // While shutting down, answer in-flight requests with Connection: close so keep-alive clients let go.
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  app.addHook("onSend", async (_request, reply) => {
    if (closing) reply.header("connection", "close");
  });
  if (options.openapi) await registerOpenApi(app, config);
  app.addSchema(ApiError);
  installAccess(app, {
    authenticate: deps.authenticate,
    authorize: deps.authorize,
    rateLimiter: deps.rateLimiter,
    rateLimit: config.rateLimit,
    downloadRateLimiter: deps.downloadRateLimiter,
    downloadRateLimit: config.downloadRateLimit,
    csrf: createCsrf(deps.serverKey),
    publicOrigin: new URL(config.publicUrl).origin,
  });
  return app;
}

function smartHttp(deps: AppDeps) {
  return smartHttpRoutes({
    repos: deps.repos,
    git: deps.git,
    authenticate: deps.authenticate,
    authorize: deps.authorize,
    pullRequests: deps.discussions.pullRequests,
  });
}

function lfs(deps: AppDeps, baseUrl: string) {
  return lfsRoutes({
    lfs: deps.lfs,
    locks: deps.lfsLocks,
    repos: deps.repos,
    authenticate: deps.authenticate,
    authorize: deps.authorize,
    pullRequests: deps.discussions.pullRequests,
    offerXet: deps.xet.offerUpload,
    baseUrl,
  });
}

/** The git surface: smart HTTP and Git LFS, on its own listener. */
export async function buildGitApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = await createApp(deps, { openapi: false });
  await app.register(smartHttp(deps));
  await app.register(lfs(deps, deps.config.gitPublicUrl));
  return app;
}

async function registerOpenApi(app: FastifyInstance, config: Readonly<Config>) {
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Hub API",
        version: "1.0.0",
        description: "The Hub REST API: accounts, tokens, repositories, organizations and more.",
      },
      servers: [{ url: config.publicUrl }],
      components: {
        securitySchemes: {
          bearer: { type: "http", scheme: "bearer" },
          xetToken: {
            type: "http",
            scheme: "bearer",
            description:
              "A Xet CAS token: the accessToken of xet-read-token or xet-write-token (docs/xet.md).",
          },
        },
      },
    },
    // Shared schemas keep their own names (`Error`) in components.schemas.
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
}

/** The Hub API surface, with git's smart HTTP on the same paths as the fallback for remotes on the base URL. */
export async function buildHubApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const app = await createApp(deps, { openapi: true });

  app.get(
    "/api/health",
    {
      schema: {
        operationId: "health",
        tags: ["OpenAPI"],
        summary: "Liveness and database reachability; with deep=1, Redis and the object store too.",
        description:
          "Plain: 200 once the process reads its database (a load balancer's cheap probe). With `deep=1`: one cheap " +
          "call to the database, Redis (when configured) and the object store, each within 2 seconds; 200 when all " +
          'answer, 503 with `status: "unavailable"` and the failing check\'s `error` otherwise.',
        querystring: HealthQuery,
        response: { 200: Health, 503: Health },
      },
      config: { access: "public", unmetered: true },
    },
    async (request, reply) => {
      if (request.query.deep !== "1") {
        await deps.db.selectFrom("users").select("id").limit(1).execute();
        return { status: "ok" as const, version: deps.version };
      }
      const { ok, checks } = await deps.healthChecks.run();
      if (!ok) void reply.status(503);
      return { status: ok ? ("ok" as const) : ("unavailable" as const), version: deps.version, checks };
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

  app.addSchema(OAuthError);
  const secureCookies = config.publicUrl.startsWith("https:");
  await app.register(hubConfigurationRoutes({ config, version: deps.version }));
  await app.register(accountRoutes({ account: deps.account }));
  await app.register(
    profileRoutes({
      profiles: deps.profiles,
      identities: deps.identities,
      avatarMaxBytes: config.account.avatarMaxBytes,
    }),
  );
  await app.register(usernameRoutes({ usernames: deps.usernames }));
  await app.register(hardwareRoutes({ hardware: deps.hardware, repos: deps.repos }));
  await app.register(contentPreferencesRoutes({ preferences: deps.preferences }));
  await app.register(gatingRoutes({ gating: deps.gating, repos: deps.repos, publicUrl: config.publicUrl }));
  await app.register(mfaRoutes({ mfa: deps.mfa }));
  await app.register(papersRoutes({ papers: deps.papers }));
  await app.register(discussionsRoutes({ repos: deps.repos, discussions: deps.discussions }));
  await app.register(notificationsRoutes({ repos: deps.repos, notifications: deps.notifications }));
  await app.register(followsRoutes({ follows: deps.follows, publicUrl: config.publicUrl }));
  await app.register(likesRoutes({ repos: deps.repos, likes: deps.likes, publicUrl: config.publicUrl }));
  await app.register(
    collectionsRoutes({
      collections: deps.collections,
      items: deps.collectionItems,
      publicUrl: config.publicUrl,
    }),
  );
  await app.register(tagsRoutes());
  await app.register(storageRoutes({ storage: deps.repoStorage, repos: deps.repos, orgs: deps.orgs }));
  await app.register(billingRoutes({ billing: deps.billing }));
  await app.register(accountDeletionRoutes({ deletion: deps.deletion, secureCookies }));
  await app.register(
    authRoutes({
      auth: deps.auth,
      sessionInference: deps.sessionInference,
      csrf: createCsrf(deps.serverKey),
      secureCookies,
      sessionTtlSeconds: config.sessionTtlSeconds,
    }),
  );
  await app.register(tokensRoutes({ tokens: deps.tokens }));
  await app.register(deviceRoutes({ device: deps.device, publicUrl: config.publicUrl }));
  await app.register(
    devicePageRoutes({
      device: deps.device,
      auth: deps.auth,
      authorize: deps.authorize,
      serverKey: deps.serverKey,
      secureCookies,
      sessionTtlSeconds: config.sessionTtlSeconds,
    }),
  );
  await app.register(orgsRoutes({ orgs: deps.orgs }));
  await app.register(ssoRoutes({ sso: deps.sso, orgs: deps.orgs }));
  await app.register(keysRoutes({ keys: deps.keys }));
  await app.register(webhooksRoutes({ webhooks: deps.webhooks, orgs: deps.orgs }));
  await app.register(hfWebhooksRoutes({ webhooks: deps.webhooks }));
  await app.register(
    inferenceRoutes({
      inference: deps.inference,
      orgs: deps.orgs,
      catalog: deps.catalog,
      stats: deps.stats,
      startedAt: deps.startedAt,
    }),
  );
  await app.register(refsRoutes({ repos: deps.repos, refs: deps.refs, publicUrl: config.publicUrl }));
  await app.register(
    reposRoutes({
      repos: deps.repos,
      duplicate: deps.repoDuplication,
      authorize: deps.authorize,
      usedStorage: deps.repoStorage.usedStorage,
      publicUrl: config.publicUrl,
    }),
  );
  await app.register(
    filesRoutes({
      repos: deps.repos,
      files: deps.files,
      repoFiles: deps.repoFiles,
      store: deps.objectStore,
      publicUrl: config.publicUrl,
      onDownload: deps.preferences.recordDownload,
      downloads: deps.downloads,
      xet: deps.xet,
    }),
  );
  await app.register(xetRoutes({ xet: deps.xet, repos: deps.repos }));
  await app.register(
    mcpRoutes({
      tools: createMcpTools({
        repos: deps.repos,
        files: deps.files,
        papers: deps.papers,
        authorize: deps.authorize,
        catalog: deps.catalog,
        stats: deps.stats,
        startedAt: deps.startedAt,
        routerPublicUrl: config.routerPublicUrl,
      }),
      publicUrl: config.publicUrl,
      version: deps.version,
    }),
  );
  await app.register(smartHttp(deps));
  await app.register(lfs(deps, config.publicUrl));
  await app.register(
    await webRoutes({
      publicUrl: config.publicUrl,
      routerPublicUrl: config.routerPublicUrl,
      logger: deps.logger,
    }),
  );
  return app;
}
