import net from "node:net";
import path from "node:path";
import { loadProvidersFile, ProvidersFileError, type ProviderConfig } from "./router/providers-file.js";

/** The surfaces `hubd serve` knows; later areas mount theirs as they are built. */
export const SURFACES = ["hub", "git", "router", "ssh"] as const;
export type Surface = (typeof SURFACES)[number];

export type DatabaseConfig = { dialect: "sqlite"; file: string } | { dialect: "postgres"; url: string };

/** Credentials for the S3-compatible store, when the environment names them (otherwise the SDK's own chain). */
export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/**
 * Where LFS and Xet objects live: the data dir (the default), or a bucket of an S3-compatible service
 * (`HUB_OBJECT_STORE=s3://bucket/prefix`; docs/storage.md).
 */
export type ObjectStoreConfig =
  | {
      kind: "local";
      /**
       * The URI prefix under which a front nginx serves `DATA_DIR/lfs/` from an `internal` location
       * (`HUB_ACCEL_REDIRECT`), or null: downloads through that nginx are then sent by nginx (X-Accel-Redirect).
       */
      accelRedirect?: string | null;
    }
  | {
      kind: "s3";
      bucket: string;
      /** Prepended to every key: empty, or ending in `/`. */
      prefix: string;
      /** The service's URL (`HUB_S3_ENDPOINT`), or null for AWS's own endpoint of the region. */
      endpoint: string | null;
      /** The endpoint presigned download URLs name, when clients reach the store at another address. */
      publicEndpoint: string | null;
      region: string;
      /** Bucket in the path rather than the host name, as MinIO and most self-hosted services need. */
      forcePathStyle: boolean;
      /** Whether LFS downloads and `resolve` redirect clients to presigned URLs, or stream through the hub. */
      presignedDownloads: boolean;
      credentials: S3Credentials | null;
    };

export interface RateLimitConfig {
  /** Requests allowed per credential (or per IP when anonymous) in one window. */
  limit: number;
  windowSeconds: number;
}

/** The Router's limits and timeouts (spec: Limits); each can be set by the operator. */
export interface RouterConfig {
  providers: ProviderConfig[];
  bodyLimitBytes: number;
  maxBufferedResponseBytes: number;
  headersTimeoutMs: number;
  firstByteTimeoutMs: number;
  bodyTimeoutMs: number;
  /** Consecutive failures after which a provider cools down, and for how long. */
  failuresBeforeCooldown: number;
  cooldownMs: number;
}

/** Webhook deliveries: timeouts, the retry schedule, and when a failing route is switched off. */
/** The collector that frees LFS objects no history points to any more. */
/** The Xet CAS (docs/xet.md). */
export interface XetConfig {
  /** How long a Xet access token lives; the clients ask for a new one before it expires. */
  tokenTtlSeconds: number;
}

/** Discovery's background work (docs/discovery.md). */
export interface DiscoveryConfig {
  /** Seconds between recomputing downloads of the last 30 days and trending scores; 0 turns it off. */
  upkeepIntervalSeconds: number;
  /** Seconds during which one caller's fetches of one repository count as one download. */
  downloadWindowSeconds: number;
}

export interface LfsCollectorConfig {
  /** Seconds between passes; 0 turns the collector off. */
  intervalSeconds: number;
  /** How long an object may stay linked without a pointer (an upload whose commit has not come yet). */
  graceSeconds: number;
}

export interface WebhooksConfig {
  /** Deliver to loopback, private and link-local addresses too (tests, single-network installs). */
  allowPrivate: boolean;
  timeoutMs: number;
  maxAttempts: number;
  retryBaseMs: number;
  retryMaxMs: number;
  concurrency: number;
  /** A route is switched off after this many failed attempts in a row... */
  disableAfterFailures: number;
  /** ...spanning at least this long, so one burst against a restarting receiver does not. */
  disableAfterSeconds: number;
  /** Days delivered and failed deliveries (and their receipts) are kept; pending ones are kept until done. */
  retentionDays: number;
}

/** The OAuth 2.0 device authorization grant (RFC 8628) that `hub login` uses. */
export interface DeviceFlowConfig {
  /** How long a device code and its user code can be approved. */
  codeTtlSeconds: number;
  /** The least time between two token polls; polling sooner answers `slow_down`. */
  pollIntervalSeconds: number;
  /** Lifetime of the access token an approved code yields. */
  tokenTtlDays: number;
}

/** Account settings: avatars and renames. */
export interface AccountConfig {
  /** The largest avatar image accepted, in bytes. */
  avatarMaxBytes: number;
  /** Days only the account that renamed away from a username may take it back. */
  usernameReservationDays: number;
}

/** Two-factor authentication: how codes are labelled in apps, and how many wrong ones an account may send. */
export interface MfaConfig {
  /** The issuer authenticator apps show beside the handle. */
  issuer: string;
  /** Wrong codes accepted per account per window; further attempts answer 429 until the window ends. */
  failures: RateLimitConfig;
}

/** Organization single sign-on with OpenID Connect providers. */
export interface SsoConfig {
  /** Providers may use plain http and loopback or private addresses (tests, one-network installs). */
  allowPrivate: boolean;
  /** How long a provider has to answer one request (discovery, keys, token exchange). */
  timeoutMs: number;
  /** How long an SSO sign-in lasts where the organization sets no length of its own. */
  sessionSeconds: number;
}

export interface Config {
  host: string;
  ports: Record<Surface, number>;
  dataDir: string;
  database: DatabaseConfig;
  objectStore: ObjectStoreConfig;
  /**
   * Whether serving processes keep hot reads until the database changes
   * (`HUB_DISABLE_READ_CACHE=1` turns it off, to rule it out when debugging).
   */
  readCache: boolean;
  redisUrl: string | null;
  redisPrefix: string;
  publicUrl: string;
  /** Base URL of git over HTTPS as clients see it. */
  gitPublicUrl: string;
  /** SSH address as clients see it, `ssh://git@host:port`. */
  sshPublicUrl: string;
  /** Base URL of the inference Router as clients see it; OpenAI clients add `/v1`. */
  routerPublicUrl: string;
  /** The shared signing secret, when several machines serve one hub; otherwise one is kept in the data dir. */
  secretKey: string | null;
  /** Open SSH connections one key may hold at once. */
  sshMaxConnectionsPerKey: number;
  /** Largest blob a push may carry outside LFS, in bytes. */
  maxGitBlobBytes: number;
  tokenPrefix: string;
  reauthWindowSeconds: number;
  sessionTtlSeconds: number;
  /** Seconds a browser session's Router credential (the web's playground) lives at most. */
  sessionInferenceTtlSeconds: number;
  rateLimit: RateLimitConfig;
  /** File downloads (`resolve`, `raw`) count in a bucket of their own, sized for downloading whole repositories. */
  downloadRateLimit: RateLimitConfig;
  logLevel: string;
  trustProxy: boolean;
  router: RouterConfig;
  webhooks: WebhooksConfig;
  lfsCollector: LfsCollectorConfig;
  discovery: DiscoveryConfig;
  xet: XetConfig;
  device: DeviceFlowConfig;
  account: AccountConfig;
  mfa: MfaConfig;
  sso: SsoConfig;
}

/** Raised when the environment holds a setting the hub cannot use. */
export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}; got "${raw}".`);
  }
  return value;
}

function flag(env: Env, name: string): boolean {
  const raw = (env[name] ?? "").toLowerCase();
  if (["", "0", "false", "no"].includes(raw)) return false;
  if (["1", "true", "yes"].includes(raw)) return true;
  throw new ConfigError(`${name} must be 1 or 0; got "${env[name]}".`);
}

function secretKey(env: Env): string | null {
  const value = env.HUB_SECRET_KEY;
  if (!value) return null;
  if (value.length < 32)
    throw new ConfigError("HUB_SECRET_KEY must hold at least 32 characters of random text.");
  return value;
}

function databaseConfig(env: Env, dataDir: string): DatabaseConfig {
  const url = env.HUB_DATABASE_URL;
  if (!url) return { dialect: "sqlite", file: path.join(dataDir, "hub.db") };
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) {
    return { dialect: "postgres", url };
  }
  if (url.startsWith("sqlite:")) return { dialect: "sqlite", file: path.resolve(url.slice(7)) };
  throw new ConfigError(
    "HUB_DATABASE_URL must start with postgres:// (PostgreSQL) or sqlite: (a SQLite file path).",
  );
}

function endpointUrl(env: Env, name: string): string | null {
  const raw = env[name];
  if (!raw) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an http:// or https:// URL; got "${raw}".`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    throw new ConfigError(`${name} must be an http:// or https:// URL; got "${raw}".`);
  return parsed.href.replace(/\/$/, "");
}

/** A URI path prefix of nginx's, such as `/_hub_lfs/`: it starts and ends with `/` and holds no `..`, `?` or `#`. */
function accelRedirectPrefix(raw: string): string {
  if (
    !/^\/(?:[A-Za-z0-9._~-]+\/)+$/.test(raw) ||
    raw.split("/").some((part) => part === "." || part === "..")
  ) {
    throw new ConfigError(
      `HUB_ACCEL_REDIRECT must be the URI prefix of nginx's internal location for DATA_DIR/lfs/, such as /_hub_lfs/ (starting and ending with /); got "${raw}".`,
    );
  }
  return raw;
}

/** `HUB_OBJECT_STORE` and the `HUB_S3_*` settings; credentials come from `AWS_*` or the SDK's usual sources. */
export function objectStoreConfig(env: Env): ObjectStoreConfig {
  const raw = env.HUB_OBJECT_STORE;
  const accel = env.HUB_ACCEL_REDIRECT;
  if (!raw || raw === "local")
    return { kind: "local", accelRedirect: accel ? accelRedirectPrefix(accel) : null };
  if (accel) {
    throw new ConfigError(
      "HUB_ACCEL_REDIRECT applies to the local object store; with HUB_OBJECT_STORE=s3://… downloads go to presigned URLs of the store. Unset one of them.",
    );
  }
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(raw);
  const prefix = (match?.[2] ?? "").replace(/\/+$/, "");
  if (!match?.[1] || prefix.startsWith("/") || prefix.includes("//")) {
    throw new ConfigError(
      `HUB_OBJECT_STORE must be "local" or s3://BUCKET[/PREFIX] (a bucket name of 3 to 63 lower-case letters, digits, dots and dashes); got "${raw}".`,
    );
  }
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  return {
    kind: "s3",
    bucket: match[1],
    prefix: prefix === "" ? "" : `${prefix}/`,
    endpoint: endpointUrl(env, "HUB_S3_ENDPOINT"),
    publicEndpoint: endpointUrl(env, "HUB_S3_PUBLIC_ENDPOINT"),
    region: env.HUB_S3_REGION || env.AWS_REGION || "us-east-1",
    forcePathStyle: flag(env, "HUB_S3_FORCE_PATH_STYLE"),
    presignedDownloads: !env.HUB_S3_PRESIGNED_DOWNLOADS || flag(env, "HUB_S3_PRESIGNED_DOWNLOADS"),
    credentials:
      accessKeyId && secretAccessKey
        ? {
            accessKeyId,
            secretAccessKey,
            ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
          }
        : null,
  };
}

function publicUrl(env: Env, name: string, fallback: string, protocols: string[]): string {
  const raw = env[name] || fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute URL; got "${raw}".`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(
      `${name} must use ${protocols.map((p) => p.slice(0, -1)).join(" or ")}; got "${raw}".`,
    );
  }
  return parsed.href.replace(/\/+$/, "");
}

/**
 * Port 0 means "any free port". Clone URLs and LFS links carry the port, so
 * free ports are chosen before the configuration is read, not by the listener.
 */
export async function withFreePorts(env: Env): Promise<Env> {
  const names = ["HUB_PORT", "HUB_GIT_PORT", "HUB_ROUTER_PORT", "HUB_SSH_PORT"];
  const resolved: Env = { ...env };
  // A free port may still be one another surface is configured to take: never hand that one out.
  const taken = new Set(names.map((name) => resolved[name]).filter((value) => value && value !== "0"));
  for (const name of names) {
    if (resolved[name] !== "0") continue;
    let port: string;
    do {
      port = String(await freePort(env.HUB_HOST || "127.0.0.1"));
    } while (taken.has(port));
    taken.add(port);
    resolved[name] = port;
  }
  return resolved;
}

function freePort(host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, host, () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no free port")),
      );
    });
  });
}

/** The issuer in TOTP key URIs: `HUB_MFA_ISSUER`, or the public URL's host name. */
function mfaIssuer(env: Env, publicUrlValue: string): string {
  const issuer = (env.HUB_MFA_ISSUER || new URL(publicUrlValue).hostname).trim();
  if (!/^[^:]{1,64}$/.test(issuer)) {
    throw new ConfigError(
      `HUB_MFA_ISSUER must hold 1 to 64 characters and no colon (apps split their labels at colons); got "${issuer}". ` +
        "Set it when HUB_PUBLIC_URL's host is an IPv6 address.",
    );
  }
  return issuer;
}

const MiB = 1024 * 1024;

function routerConfig(env: Env): RouterConfig {
  let providers: ProviderConfig[] = [];
  if (env.HUB_PROVIDERS) {
    try {
      providers = loadProvidersFile(path.resolve(env.HUB_PROVIDERS), env);
    } catch (err) {
      if (err instanceof ProvidersFileError) throw new ConfigError(err.message);
      throw err;
    }
  }
  return {
    providers,
    bodyLimitBytes: integer(env, "HUB_ROUTER_BODY_LIMIT", 8 * MiB, 1024, 32 * MiB),
    maxBufferedResponseBytes: integer(env, "HUB_ROUTER_MAX_RESPONSE", 64 * MiB, 1024, 1024 * MiB),
    headersTimeoutMs: integer(env, "HUB_ROUTER_HEADERS_TIMEOUT_MS", 30_000, 10, 600_000),
    firstByteTimeoutMs: integer(env, "HUB_ROUTER_FIRST_BYTE_TIMEOUT_MS", 30_000, 10, 600_000),
    bodyTimeoutMs: integer(env, "HUB_ROUTER_BODY_TIMEOUT_MS", 600_000, 10, 3_600_000),
    failuresBeforeCooldown: integer(env, "HUB_ROUTER_FAILURES_BEFORE_COOLDOWN", 3, 1, 1000),
    cooldownMs: integer(env, "HUB_ROUTER_COOLDOWN_MS", 30_000, 0, 3_600_000),
  };
}

/** Reads and validates the environment once; the only module that touches process.env. */
export function loadConfig(env: Env = process.env): Readonly<Config> {
  const host = env.HUB_HOST || "127.0.0.1";
  const dataDir = path.resolve(env.HUB_DATA_DIR || "./data");
  const ports: Record<Surface, number> = {
    hub: integer(env, "HUB_PORT", 8080, 0, 65535),
    git: integer(env, "HUB_GIT_PORT", 8081, 0, 65535),
    router: integer(env, "HUB_ROUTER_PORT", 8090, 0, 65535),
    ssh: integer(env, "HUB_SSH_PORT", 2222, 0, 65535),
  };
  const hostForUrl = host.includes(":") ? `[${host}]` : host;
  const tokenPrefix = env.HUB_TOKEN_PREFIX ?? "hf_";
  if (!/^[A-Za-z0-9_]{0,16}$/.test(tokenPrefix)) {
    throw new ConfigError("HUB_TOKEN_PREFIX may hold up to 16 letters, digits or underscores.");
  }
  const hubPublicUrl = publicUrl(env, "HUB_PUBLIC_URL", `http://${hostForUrl}:${ports.hub}`, [
    "http:",
    "https:",
  ]);
  const config: Config = {
    host,
    ports,
    dataDir,
    database: databaseConfig(env, dataDir),
    objectStore: objectStoreConfig(env),
    readCache: !flag(env, "HUB_DISABLE_READ_CACHE"),
    redisUrl: env.HUB_REDIS_URL || null,
    redisPrefix: env.HUB_REDIS_PREFIX || "hub:",
    publicUrl: hubPublicUrl,
    gitPublicUrl: publicUrl(env, "HUB_GIT_PUBLIC_URL", `http://${hostForUrl}:${ports.git}`, [
      "http:",
      "https:",
    ]),
    sshPublicUrl: publicUrl(env, "HUB_SSH_PUBLIC_URL", `ssh://git@${hostForUrl}:${ports.ssh}`, ["ssh:"]),
    routerPublicUrl: publicUrl(env, "HUB_ROUTER_PUBLIC_URL", `http://${hostForUrl}:${ports.router}`, [
      "http:",
      "https:",
    ]),
    secretKey: secretKey(env),
    sshMaxConnectionsPerKey: integer(env, "HUB_SSH_MAX_CONNECTIONS_PER_KEY", 10, 1, 10_000),
    maxGitBlobBytes: integer(env, "HUB_MAX_GIT_BLOB_BYTES", 10 * 1024 * 1024, 1024, 2 ** 40),
    tokenPrefix,
    reauthWindowSeconds: integer(env, "HUB_REAUTH_WINDOW", 600, 10, 86_400),
    sessionTtlSeconds: integer(env, "HUB_SESSION_TTL", 14 * 86_400, 60, 365 * 86_400),
    sessionInferenceTtlSeconds: integer(env, "HUB_SESSION_INFERENCE_TTL", 300, 5, 600),
    rateLimit: {
      limit: integer(env, "HUB_RATE_LIMIT", 1000, 1, 1_000_000_000),
      windowSeconds: integer(env, "HUB_RATE_LIMIT_WINDOW", 300, 1, 86_400),
    },
    downloadRateLimit: {
      limit: integer(env, "HUB_DOWNLOAD_RATE_LIMIT", 20_000, 1, 1_000_000_000),
      windowSeconds: integer(env, "HUB_DOWNLOAD_RATE_LIMIT_WINDOW", 300, 1, 86_400),
    },
    logLevel: env.HUB_LOG_LEVEL || "info",
    trustProxy: flag(env, "HUB_TRUST_PROXY"),
    router: routerConfig(env),
    lfsCollector: {
      intervalSeconds: integer(env, "HUB_LFS_COLLECT_INTERVAL_SECONDS", 3600, 0, 7 * 86_400),
      graceSeconds: integer(env, "HUB_LFS_GRACE_SECONDS", 86_400, 1, 365 * 86_400),
    },
    discovery: {
      upkeepIntervalSeconds: integer(env, "HUB_TRENDING_INTERVAL_SECONDS", 600, 0, 86_400),
      downloadWindowSeconds: integer(env, "HUB_DOWNLOAD_WINDOW_SECONDS", 300, 1, 86_400),
    },
    xet: { tokenTtlSeconds: integer(env, "HUB_XET_TOKEN_TTL_SECONDS", 900, 60, 86_400) },
    webhooks: {
      allowPrivate: flag(env, "HUB_WEBHOOKS_ALLOW_PRIVATE"),
      timeoutMs: integer(env, "HUB_WEBHOOKS_TIMEOUT_MS", 10_000, 100, 120_000),
      maxAttempts: integer(env, "HUB_WEBHOOKS_MAX_ATTEMPTS", 10, 1, 100),
      retryBaseMs: integer(env, "HUB_WEBHOOKS_RETRY_BASE_MS", 10_000, 10, 3_600_000),
      retryMaxMs: integer(env, "HUB_WEBHOOKS_RETRY_MAX_MS", 3_600_000, 10, 86_400_000),
      concurrency: integer(env, "HUB_WEBHOOKS_CONCURRENCY", 16, 1, 1000),
      disableAfterFailures: integer(env, "HUB_WEBHOOKS_DISABLE_AFTER_FAILURES", 20, 1, 100_000),
      disableAfterSeconds: integer(env, "HUB_WEBHOOKS_DISABLE_AFTER_SECONDS", 86_400, 0, 30 * 86_400),
      retentionDays: integer(env, "HUB_WEBHOOKS_RETENTION_DAYS", 30, 0, 3650),
    },
    device: {
      codeTtlSeconds: integer(env, "HUB_DEVICE_CODE_TTL_SECONDS", 900, 1, 86_400),
      pollIntervalSeconds: integer(env, "HUB_DEVICE_POLL_INTERVAL_SECONDS", 5, 1, 60),
      tokenTtlDays: integer(env, "HUB_DEVICE_TOKEN_TTL_DAYS", 90, 1, 3650),
    },
    account: {
      avatarMaxBytes: integer(env, "HUB_AVATAR_MAX_BYTES", 2 * MiB, 1024, 16 * MiB),
      usernameReservationDays: integer(env, "HUB_USERNAME_RESERVATION_DAYS", 90, 0, 3650),
    },
    mfa: {
      issuer: mfaIssuer(env, hubPublicUrl),
      failures: {
        limit: integer(env, "HUB_MFA_MAX_FAILURES", 5, 1, 1000),
        windowSeconds: integer(env, "HUB_MFA_FAILURE_WINDOW", 300, 1, 86_400),
      },
    },
    sso: {
      allowPrivate: flag(env, "HUB_SSO_ALLOW_PRIVATE"),
      timeoutMs: integer(env, "HUB_SSO_TIMEOUT_MS", 10_000, 100, 120_000),
      sessionSeconds: integer(env, "HUB_SSO_SESSION_SECONDS", 7 * 86_400, 1, 365 * 86_400),
    },
  };
  return Object.freeze(config);
}
