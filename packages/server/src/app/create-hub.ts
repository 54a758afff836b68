import { mkdir } from "node:fs/promises";
import path from "node:path";
import { createFilesService } from "../areas/repositories/files/files.service.js";
import { createRefsService } from "../areas/repositories/refs/refs.service.js";
import { createRepoFiles } from "../git/repo-files.js";
import { createCommitDiff } from "../git/commit-diff.js";
import {
  batchCommandSupported,
  createObjectReader,
  createSpawningObjectReader,
} from "../git/object-reader.js";
import type { Logger } from "pino";
import { createAccountService } from "../areas/accounts/account/account.service.js";
import { AVATAR_NAMESPACE, createAvatarStore } from "../areas/accounts/profile/avatar-store.js";
import { createProfileService } from "../areas/accounts/profile/profile.service.js";
import { createSocialIdentities } from "../areas/accounts/profile/social-identities.js";
import { createUsernameService } from "../areas/accounts/username/username.service.js";
import { createHardwareService, loadHardwareCatalog } from "../areas/accounts/hardware/hardware.service.js";
import { createContentPreferencesService } from "../areas/accounts/content-preferences/content-preferences.service.js";
import { createGatingService } from "../areas/repositories/gating/gating.service.js";
import { createMfaService } from "../areas/accounts/mfa/mfa.service.js";
import { createBillingService } from "../areas/accounts/billing/billing.service.js";
import { createAccountDeletionService } from "../areas/accounts/account-deletion/account-deletion.service.js";
import { createAuthService } from "../areas/accounts/auth/auth.service.js";
import { createSessionInferenceService } from "../areas/accounts/auth/session-inference.service.js";
import { createOrgsService } from "../areas/organizations/orgs/orgs.service.js";
import { createOpenIdClient } from "../areas/organizations/sso/openid-client.js";
import { createSsoService } from "../areas/organizations/sso/sso.service.js";
import { createCommitSignatures } from "../areas/accounts/keys/commit-signatures.js";
import { createKeysService } from "../areas/accounts/keys/keys.service.js";
import { createTokensService } from "../areas/accounts/tokens/tokens.service.js";
import { createDeviceService } from "../areas/accounts/device/device.service.js";
import { createAuthenticator, createCredentialResolver } from "../auth/authenticate.js";
import { loadServerKey } from "../auth/server-key.js";
import { createMultipartStagingFor, createObjectStore } from "../git/lfs/create-object-store.js";
import { createLeftoverCollector } from "../git/lfs/upload-leftovers.js";
import { createLfsService } from "../git/lfs/lfs.service.js";
import { createLfsLocksService } from "../git/lfs/lfs-locks.service.js";
import { createAuthorizer } from "../auth/authorizer.js";
import { createMemoryRateLimiter } from "../auth/rate-limit/memory-rate-limiter.js";
import type { RateLimiter } from "../auth/rate-limit/rate-limiter.js";
import { createRedisRateLimiter } from "../auth/rate-limit/redis-rate-limiter.js";
import type { Config, RateLimitConfig } from "../config.js";
import { migrateToLatest, openDatabase, writeCountOf } from "../db/database.js";
import { cacheReadsOf } from "../db/cached-read.js";
import { openChangeEpoch, openSharedChangeCounter } from "../db/change-epoch.js";
import { createWriteLocks } from "../db/write-locks.js";
import { createHealthChecks } from "./health-checks.js";
import { createReposService } from "../areas/repositories/repos/repos.service.js";
import { createRepoStorage } from "../git/repo-storage.js";
import { createGitService } from "../git/git-service.js";
import { createInferenceService } from "../areas/inference/settings/inference.service.js";
import { createSealer } from "../auth/sealed-secret.js";
import { createCatalog } from "../router/candidates.js";
import { createLiveStats } from "../router/live-stats.js";
import { createRedisLiveStats } from "../router/redis-live-stats.js";
import { createSessionAffinity } from "../router/session-affinity.js";
import { createRedisSessionAffinity } from "../router/redis-session-affinity.js";
import { closeRedis, openRedis } from "../db/redis.js";
import { createDeliveryWorker } from "../areas/integrations/webhooks/delivery-worker.js";
import { createRepoEvents } from "../areas/integrations/webhooks/events.js";
import { combineRepoEvents } from "../domain/repo-events.js";
import { createCardCitations } from "../areas/community/papers/card-citations.js";
import { createMetadataIndexer } from "../areas/repositories/metadata/metadata-indexer.js";
import {
  createDownloadCounter,
  createRedisDownloadWindow,
} from "../areas/repositories/metadata/download-counter.js";
import { createDiscoveryUpkeep } from "../areas/repositories/metadata/discovery-upkeep.js";
import {
  createDiscussionsService,
  type DiscussionsService,
} from "../areas/community/discussions/discussions.service.js";
import { createPullRequestGit } from "../git/pull-requests.js";
import { createNotificationListener } from "../areas/community/notifications/notification-listener.js";
import { createNotificationsService } from "../areas/community/notifications/notifications.service.js";
import { createPapersService } from "../areas/community/papers/papers.service.js";
import { createFollowsService } from "../areas/accounts/follows/follows.service.js";
import { createLikesService } from "../areas/community/likes/likes.service.js";
import { createCollectionsService } from "../areas/community/collections/collections.service.js";
import { createCollectionItemsService } from "../areas/community/collections/collection-items.service.js";
import { createCollectionReader } from "../areas/community/collections/collection-reader.js";
import { createStorageService } from "../areas/repositories/storage/storage.service.js";
import { createRepoDuplication } from "../areas/repositories/repos/duplicate.js";
import { createLfsCollector } from "../areas/repositories/storage/lfs-collector.js";
import { createRepoMaintenance } from "../git/repo-maintenance.js";
import { createWebhooksService } from "../areas/integrations/webhooks/webhooks.service.js";
import { createXetCollector } from "../areas/repositories/xet/xet-collector.js";
import { xetStorageOf } from "../areas/repositories/xet/xet-storage.js";
import { createXetService, XORB_NAMESPACE } from "../areas/repositories/xet/xet.service.js";
import { hubVersion } from "../version.js";
import { loadXetHashing } from "../xet/hashing.js";

/**
 * A rate limiter in Redis when one is configured (shared by every hub process),
 * else in this process's memory. `failClosed` for limits against guessing.
 */
export function createRateLimiter(
  config: Readonly<Config>,
  limits: RateLimitConfig,
  logger: Logger,
  options: { failClosed?: boolean } = {},
): RateLimiter {
  return config.redisUrl
    ? createRedisRateLimiter(limits, config.redisUrl, config.redisPrefix, logger, options)
    : createMemoryRateLimiter(limits);
}

/** What `serve` gives `createHub` beyond the configuration: limiters shared with its other processes. */
export interface HubOptions {
  /** Counts wrong two-factor codes per account; in memory unless given (the admin CLI checks no codes). */
  mfaFailures?: RateLimiter;
  /**
   * Keeps the hot reads (credentials, memberships, repositories, billing
   * settings) until the database changes (`db/cached-read.ts`); serving
   * processes do, one-shot commands need not.
   */
  cacheReads?: boolean;
}

/** Opens the database (migrated) and wires every service; the admin CLI and the server share it. */
export async function createHub(
  config: Readonly<Config>,
  logger: Logger,
  { mfaFailures = createMemoryRateLimiter(config.mfa.failures), cacheReads = false }: HubOptions = {},
) {
  await loadXetHashing();
  const db = openDatabase(config.database);
  await migrateToLatest(db, config.database);
  const writes = writeCountOf(db);
  // Several processes (PostgreSQL and Redis) tell each other of their changes through Redis.
  const changeCounter =
    config.redisUrl && config.database.dialect === "postgres"
      ? openSharedChangeCounter(config.redisUrl, `${config.redisPrefix}change-epoch`, (error) =>
          logger.warn({ err: error.message }, "the shared change counter is unreachable"),
        )
      : null;
  if (changeCounter) writes.announce = changeCounter.announce;
  const changes =
    cacheReads && config.readCache
      ? openChangeEpoch(
          config.database,
          writes,
          (error) =>
            logger.warn(
              { err: error },
              "change notifications interrupted; reading uncached until they resume",
            ),
          { shared: changeCounter ?? undefined },
        )
      : null;
  if (changes) cacheReadsOf(db, changes);
  // What the hub processes of one deployment keep together (docs/configuration.md, "Several processes").
  const shared = config.redisUrl ? openRedis(config.redisUrl, logger) : null;
  const writeLocks = createWriteLocks(config.database);
  const clock = () => new Date();
  const serverKey = await loadServerKey(config.dataDir, config.secretKey);
  const tokens = createTokensService({ db, clock, secretPrefix: config.tokenPrefix });
  const mfa = createMfaService({
    db,
    clock,
    sealer: createSealer(serverKey, "mfa-totp"),
    failures: mfaFailures,
    config: config.mfa,
  });
  const auth = createAuthService({
    db,
    clock,
    tokens,
    mfa,
    sessionTtlSeconds: config.sessionTtlSeconds,
    reauthWindowSeconds: config.reauthWindowSeconds,
  });
  const sessionInference = createSessionInferenceService({
    db,
    clock,
    ttlSeconds: config.sessionInferenceTtlSeconds,
  });
  const device = createDeviceService({ db, clock, tokens, config: config.device });
  const identities = createSocialIdentities({ db, clock });
  const objectStore = createObjectStore(config);
  const healthChecks = createHealthChecks({ db, objectStore, redis: shared });
  const profiles = createProfileService({
    db,
    clock,
    avatars: createAvatarStore(
      config.dataDir,
      config.objectStore.kind === "s3" ? objectStore.namespace(AVATAR_NAMESPACE) : null,
    ),
    identities,
    publicUrl: config.publicUrl,
    avatarMaxBytes: config.account.avatarMaxBytes,
  });
  const account = createAccountService({
    db,
    clock,
    reauthWindowSeconds: config.reauthWindowSeconds,
    profiles,
    identities,
    mfa,
  });
  const orgs = createOrgsService({ db, clock });
  const keys = createKeysService({ db, clock });
  const authorize = createAuthorizer({
    db,
    clock,
    reauthWindowSeconds: config.reauthWindowSeconds,
    publicUrl: config.publicUrl,
  });
  const storage = createRepoStorage(config.dataDir);
  const authenticate = createAuthenticator({ tokens, auth, keys, serverKey });
  const resolveCredentialKey = createCredentialResolver({ tokens, auth, keys });
  const repoFiles = createRepoFiles(storage, path.join(config.dataDir, "tmp"));
  const webhookSecrets = createSealer(serverKey, "webhook-secrets");
  const deliveries = createDeliveryWorker({
    db,
    clock,
    sealer: webhookSecrets,
    config: config.webhooks,
    userAgent: `Hub-Webhooks/${hubVersion()} (+${config.publicUrl})`,
    logger,
  });
  const metadataIndexer = createMetadataIndexer({ db, clock, repoFiles, objectStore, logger });
  const events = combineRepoEvents(
    createRepoEvents({
      db,
      clock,
      repoFiles,
      publicUrl: config.publicUrl,
      maxAttempts: config.webhooks.maxAttempts,
      logger,
      notify: deliveries.notify,
    }),
    createCardCitations({ db, clock, repoFiles, logger }),
    metadataIndexer.listener,
    // Commits arriving on refs/pr/{num} join their pull request's timeline (the service is made below).
    {
      async publish(event) {
        if (event.scope !== "repo.content") return;
        try {
          await discussions.refsMoved(event.repo, event.updatedRefs, event.actor);
        } catch (err) {
          logger.error(
            { err: (err as Error).message, repo: event.repo.fullName },
            "pull request timeline not updated",
          );
        }
      },
    },
  );
  const repos = createReposService({ db, storage, repoFiles, objectStore, events, clock, config });
  const downloads = createDownloadCounter({
    db,
    clock,
    logger,
    windowMs: config.discovery.downloadWindowSeconds * 1000,
    ...(shared ? { window: createRedisDownloadWindow(shared, config.redisPrefix, logger) } : {}),
  });
  const likes = createLikesService({ db, clock, publicUrl: config.publicUrl });
  const discoveryUpkeep = createDiscoveryUpkeep({
    db,
    clock,
    logger,
    indexer: metadataIndexer,
    findById: (id) => repos.findById(id),
    intervalSeconds: config.discovery.upkeepIntervalSeconds,
    recentLikes: likes.recentByDay,
  });
  const discussions: DiscussionsService = createDiscussionsService({
    db,
    clock,
    repos,
    storage,
    repoFiles,
    git: createPullRequestGit(storage),
    authorize,
    events,
    publicUrl: config.publicUrl,
    listeners: [createNotificationListener({ db, clock, publicUrl: config.publicUrl, logger })],
  });
  const notifications = createNotificationsService({ db, clock, publicUrl: config.publicUrl, repos });
  const git = createGitService({ storage, repos, maxGitBlobBytes: config.maxGitBlobBytes });
  const usernames = createUsernameService({
    db,
    clock,
    events,
    reauthWindowSeconds: config.reauthWindowSeconds,
    config: {
      publicUrl: config.publicUrl,
      gitPublicUrl: config.gitPublicUrl,
      sshPublicUrl: config.sshPublicUrl,
      reservationDays: config.account.usernameReservationDays,
    },
  });
  const webhooks = createWebhooksService({
    db,
    clock,
    sealer: webhookSecrets,
    repos,
    authorize,
    allowPrivateTargets: config.webhooks.allowPrivate,
    notify: deliveries.notify,
  });
  await mkdir(config.dataDir, { recursive: true });
  const objectReader = (await batchCommandSupported(config.dataDir))
    ? createObjectReader(storage)
    : createSpawningObjectReader(storage);
  const staging = createMultipartStagingFor(config);
  const lfs = createLfsService({
    db,
    repos,
    store: objectStore,
    authorize,
    resolveCredentialKey,
    serverKey,
    staging,
    clock,
  });
  const lfsLocks = createLfsLocksService({ db, authorize, clock });
  const xet = createXetService({
    db,
    repos,
    store: objectStore,
    authorize,
    resolveCredentialKey,
    serverKey,
    clock,
    publicUrl: config.publicUrl,
    tokenTtlSeconds: config.xet.tokenTtlSeconds,
    logger,
  });
  const files = createFilesService({
    db,
    reader: objectReader,
    repos,
    storage,
    files: repoFiles,
    store: objectStore,
    maxGitBlobBytes: config.maxGitBlobBytes,
    pullRequests: discussions.pullRequests,
    writeLocks,
  });
  const hardware = createHardwareService({
    db,
    clock,
    catalog: loadHardwareCatalog(),
    storage,
    repoFiles,
  });
  const preferences = createContentPreferencesService({
    db,
    clock,
    repos,
    listing: repos,
    storage,
    repoFiles,
    authorize,
    logger,
  });
  const gating = createGatingService({ db, clock, repos, authorize });
  const papers = createPapersService({ db, clock, repos, publicUrl: config.publicUrl });
  const follows = createFollowsService({ db, clock, publicUrl: config.publicUrl });
  const collectionReader = createCollectionReader({ db, clock, publicUrl: config.publicUrl });
  const collectionDeps = { db, clock, publicUrl: config.publicUrl, repos, reader: collectionReader };
  const collections = createCollectionsService(collectionDeps);
  const collectionItems = createCollectionItemsService(collectionDeps);
  const repoDuplication = createRepoDuplication({ db, repos, storage, clock });
  const repoStorage = createStorageService({
    db,
    repos,
    storage,
    maintenance: createRepoMaintenance(storage, path.join(config.dataDir, "tmp")),
    store: objectStore,
    clock,
    xetStorageOf: (ids) => xetStorageOf(db, ids),
    lfsGraceSeconds: config.lfsCollector.graceSeconds,
  });
  const lfsCollector = createLfsCollector({
    storage: repoStorage,
    then: [
      {
        name: "Xet",
        collect: createXetCollector({
          db,
          xorbs: objectStore.namespace(XORB_NAMESPACE),
          clock,
          graceSeconds: config.lfsCollector.graceSeconds,
        }),
      },
      {
        name: "Upload leftovers",
        collect: createLeftoverCollector({
          store: objectStore,
          staging,
          clock,
          graceSeconds: config.lfsCollector.graceSeconds,
        }),
      },
    ],
    intervalSeconds: config.lfsCollector.intervalSeconds,
    logger,
  });
  const refs = createRefsService({
    db,
    files,
    repos,
    repoFiles,
    signatures: createCommitSignatures({ db }),
    commitDiff: createCommitDiff(storage),
  });
  const catalog = createCatalog(config.router.providers);
  const cooldown = {
    failuresBeforeCooldown: config.router.failuresBeforeCooldown,
    cooldownMs: config.router.cooldownMs,
  };
  const stats = shared
    ? createRedisLiveStats({ redis: shared, prefix: config.redisPrefix, logger, ...cooldown })
    : createLiveStats({ clock: Date.now, ...cooldown });
  const affinity = shared
    ? createRedisSessionAffinity({ redis: shared, prefix: config.redisPrefix, logger })
    : createSessionAffinity(Date.now);
  const openid = createOpenIdClient({
    allowPrivate: config.sso.allowPrivate,
    timeoutMs: config.sso.timeoutMs,
    userAgent: `Hub-SSO/${hubVersion()} (+${config.publicUrl})`,
  });
  const sso = createSsoService({
    db,
    clock,
    openid,
    secrets: createSealer(serverKey, "sso-client-secrets"),
    verifiers: createSealer(serverKey, "sso-code-verifiers"),
    publicUrl: config.publicUrl,
    allowPrivate: config.sso.allowPrivate,
    defaultSessionSeconds: config.sso.sessionSeconds,
  });
  const inference = createInferenceService({
    db,
    clock,
    catalog,
    sealer: createSealer(serverKey, "provider-keys"),
  });
  const billing = createBillingService({ db, clock, inference });
  const deletion = createAccountDeletionService({
    db,
    dialect: config.database.dialect,
    clock,
    reauthWindowSeconds: config.reauthWindowSeconds,
    reservationDays: config.account.usernameReservationDays,
    storage,
    objectStore,
    profiles,
    inference,
    events,
    logger,
  });
  return {
    db,
    logger,
    tokens,
    auth,
    sessionInference,
    mfa,
    device,
    account,
    profiles,
    identities,
    usernames,
    hardware,
    preferences,
    gating,
    papers,
    discussions,
    notifications,
    follows,
    likes,
    collections,
    collectionItems,
    repoDuplication,
    repoStorage,
    lfsCollector,
    metadataIndexer,
    downloads,
    discoveryUpkeep,
    orgs,
    keys,
    storage,
    git,
    repos,
    objectStore,
    lfs,
    lfsLocks,
    xet,
    files,
    refs,
    repoFiles,
    serverKey,
    catalog,
    stats,
    affinity,
    inference,
    billing,
    deletion,
    webhooks,
    deliveries,
    sso,
    startedAt: Date.now(),
    clock,
    authenticate,
    authorize,
    healthChecks,
    close: async () => {
      objectReader.close();
      await preferences.flush();
      await mfaFailures.close();
      await openid.close();
      if (shared) await closeRedis(shared);
      await changes?.close();
      await writeLocks.close();
      await db.destroy();
      await changeCounter?.close();
    },
  };
}

export type Hub = Awaited<ReturnType<typeof createHub>>;
