import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { TOKEN_ROLES, type TokenRole } from "@hub/api";
import type { FastifyInstance } from "fastify";
import pino from "pino";
import { expect } from "vitest";
import { buildHubApp } from "../app/hub-app.js";
import { loadConfig, type Config } from "../config.js";
import type { Db } from "../db/database.js";
import { loggerOptions } from "../logger.js";
import { prepareServe } from "../main.js";
import { createTestDatabase, type Dialect, type TestDatabase } from "./databases.js";
import {
  browserHeaders,
  freePorts,
  reauthenticateThrough,
  runAdminHere,
  signInThrough,
  type CliResult,
} from "./hub-process.js";

export { readJson } from "./hub-process.js";

export interface InProcessOptions {
  dialect?: Dialect;
  /** HUB_* settings, read by the same `loadConfig` a real process uses. */
  env?: Record<string, string>;
}

/** What `fetch` does with a redirect it follows: 303 (and 301/302 after a POST) turn into a GET without a body. */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

type Served = Awaited<ReturnType<typeof prepareServe>>;

/**
 * The Hub API built in the test's own process, as `hubd serve` builds it
 * (`prepareServe`, then `buildHubApp`), on a fresh data dir and database, and
 * driven with Fastify's `inject()`: no listener, no child process. Its API
 * helpers match `TestHub`'s, so a logic test moves here by swapping
 * `startHub` for `startInProcessHub`. The log is kept in memory, and `stop()`
 * fails the test if a secret the test made reached it.
 *
 * Only the Hub API surface exists here: git, SSH and the Router need a real
 * process (`startHub`).
 */
export class InProcessHub {
  readonly secrets = new Set<string>();

  constructor(
    /** The hub's log lines, kept in memory. */
    readonly logs: string[],
    readonly dialect: Dialect,
    readonly dataDir: string,
    readonly database: TestDatabase,
    readonly config: Readonly<Config>,
    private readonly env: NodeJS.ProcessEnv,
    private readonly served: Served,
    private readonly app: FastifyInstance,
  ) {}

  /** The hub's own database, for tests that check what was (or was not) recorded. */
  get db(): Db {
    return this.served.deps.db;
  }

  /** The hub's services, for tests that drive background work (indexing, collecting) themselves. */
  get deps(): Served["deps"] {
    return this.served.deps;
  }

  /** The Hub API's public URL; requests to it go to `inject()`, nothing listens there. */
  get url(): string {
    return this.config.publicUrl;
  }

  /** Runs an admin command against this hub's data dir and database, in this process (`runAdminHere`). */
  cli(args: string[], stdin = ""): Promise<CliResult> {
    return runAdminHere(args, this.env, stdin);
  }

  /**
   * `fetch` for tests: URLs on the hub's public URL are injected into the app,
   * following redirects as `fetch` does unless `redirect` says otherwise; any
   * other URL goes to the real `fetch`.
   */
  async fetch(input: string | URL, init: RequestInit = {}): Promise<Response> {
    let request = new Request(input, init);
    let payload = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    for (let hops = 0; ; hops++) {
      const url = new URL(request.url);
      if (url.origin !== new URL(this.url).origin) {
        const { method, headers, redirect, signal } = request;
        return fetch(url, { method, headers, body: payload, redirect, signal });
      }
      const response = await this.inject(request, url, payload);
      const location = response.headers.get("location");
      if (!REDIRECTS.has(response.status) || location === null || request.redirect === "manual") {
        return withUrl(response, request.url, hops > 0);
      }
      if (request.redirect === "error" || hops === 20) throw new TypeError("fetch failed: redirect");
      const next = new URL(location, url);
      const toGet =
        (response.status === 303 && request.method !== "HEAD") ||
        ([301, 302].includes(response.status) && request.method === "POST");
      const headers = new Headers(request.headers);
      if (toGet) {
        payload = undefined;
        for (const name of ["content-type", "content-length", "content-encoding", "content-language"])
          headers.delete(name);
      }
      if (next.origin !== url.origin) headers.delete("authorization");
      request = new Request(next, {
        method: toGet ? "GET" : request.method,
        headers,
        redirect: request.redirect,
      });
    }
  }

  /** Sends a request to the Hub API; `token` becomes a Bearer credential. */
  request(pathname: string, init: RequestInit & { token?: string; json?: unknown } = {}): Promise<Response> {
    const { token, json, ...rest } = init;
    const headers = browserHeaders(rest);
    if (token !== undefined) headers.set("authorization", `Bearer ${token}`);
    let body = rest.body;
    if (json !== undefined) {
      headers.set("content-type", "application/json");
      body = JSON.stringify(json);
    }
    return this.fetch(`${this.url}${pathname}`, { ...rest, headers, body });
  }

  /** Creates an account as `hubd user create` does and remembers its password as a secret. */
  async createUser(handle: string, password = `pw-${handle}-${Math.random().toString(36).slice(2)}`) {
    await this.served.deps.account.createUser({
      handle,
      email: `${handle}@example.com`,
      password,
      admin: false,
    });
    this.secrets.add(password);
    return { handle, password };
  }

  /** Mints a token as `hubd token create` does (the same arguments) and returns its secret. */
  async createToken(handle: string, args: string[] = ["--role", "write"]): Promise<string> {
    const { values } = parseArgs({
      args,
      strict: true,
      options: {
        role: { type: "string" },
        scopes: { type: "string" },
        org: { type: "string" },
        repos: { type: "string" },
        "expires-in": { type: "string" },
      },
    });
    const role = values.role;
    if (role !== undefined && !TOKEN_ROLES.some((r) => r === role)) throw new Error(`bad --role ${role}`);
    const user = await this.served.deps.account.findUser(handle);
    const created = await this.served.deps.tokens.create(user.id, {
      name: `t-${Math.random().toString(36).slice(2)}`,
      expiresAt: expiryFrom(values["expires-in"]),
      role: role as TokenRole | undefined,
      scopes: list(values.scopes),
      organization: values.org,
      repositories: list(values.repos),
    });
    this.secrets.add(created.token);
    return created.token;
  }

  /** Reauthenticates a token with the account password, as token management requires. */
  reauthenticate(token: string, password: string): Promise<void> {
    return reauthenticateThrough(this, token, password);
  }

  /** Signs in with a password as a browser does and returns the session cookie (`hub_session=…`). */
  signIn(handle: string, password: string): Promise<string> {
    return signInThrough(this, handle, password);
  }

  /** Closes the app and every store as `hubd` does on SIGTERM, removes the storage, and checks the log. */
  async stop(): Promise<void> {
    await this.app.close();
    await this.served.close();
    await this.database.drop();
    rmSync(this.dataDir, { recursive: true, force: true });
    const log = this.logs.join("\n");
    for (const secret of this.secrets) expect(log.includes(secret), "a secret reached the log").toBe(false);
  }

  private async inject(request: Request, url: URL, payload: Buffer | undefined): Promise<Response> {
    // The headers `fetch` adds to every request, so the app sees what it would see over a socket.
    const headers: Record<string, string> = {
      host: url.host,
      accept: "*/*",
      "accept-language": "*",
      "sec-fetch-mode": "cors",
      "user-agent": "node",
    };
    request.headers.forEach((value, name) => (headers[name] = value));
    const response = await this.app.inject({
      method: request.method as "GET",
      url: `${url.pathname}${url.search}`,
      headers,
      payload,
    });
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(response.headers)) {
      if (value === undefined) continue;
      for (const item of Array.isArray(value) ? value : [value]) responseHeaders.append(name, String(item));
    }
    const empty = NULL_BODY.has(response.statusCode) || request.method === "HEAD";
    return new Response(empty ? null : response.rawPayload, {
      status: response.statusCode,
      statusText: response.statusMessage,
      headers: responseHeaders,
    });
  }
}

/** `fetch`'s responses know their final URL and whether a redirect led there. */
function withUrl(response: Response, url: string, redirected: boolean): Response {
  Object.defineProperty(response, "url", { value: url });
  Object.defineProperty(response, "redirected", { value: redirected });
  return response;
}

function list(value: string | undefined): string[] | undefined {
  return value
    ?.split(",")
    .map((item) => item.trim())
    .filter(Boolean);
}

/** `30d`, `12h`, `45m` or `90s` from now, as `hubd token create --expires-in` reads it. */
function expiryFrom(value: string | undefined): string | null {
  if (value === undefined) return null;
  const match = /^(\d+)([dhms])$/.exec(value);
  if (!match) throw new Error(`bad --expires-in ${value}`);
  const seconds = { d: 86_400, h: 3_600, m: 60, s: 1 }[match[2] as "d" | "h" | "m" | "s"];
  return new Date(Date.now() + Number(match[1]) * seconds * 1000).toISOString();
}

/**
 * Builds the Hub API in this process on a fresh data dir and a fresh database
 * of the dialect, migrated by `createHub`, with the background work (webhook
 * deliveries, the LFS collector) running as `hubd serve` runs it.
 */
export async function startInProcessHub(options: InProcessOptions = {}): Promise<InProcessHub> {
  const dialect = options.dialect ?? "sqlite";
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "hub-test-"));
  const database = await createTestDatabase(dialect);
  // Nothing listens on these ports; they only make the public URLs the app prints look like a real hub's.
  const [hubPort = 0, gitPort = 0, sshPort = 0, routerPort = 0] = await freePorts(4);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    HUB_DATA_DIR: dataDir,
    HUB_PORT: String(hubPort),
    HUB_GIT_PORT: String(gitPort),
    HUB_SSH_PORT: String(sshPort),
    HUB_ROUTER_PORT: String(routerPort),
    HUB_LOG_LEVEL: "debug",
    ...(database.url ? { HUB_DATABASE_URL: database.url } : {}),
    ...options.env,
  };
  const config = loadConfig(env);
  const logs: string[] = [];
  const logger = pino(loggerOptions(config.logLevel), {
    write: (line: string) => void logs.push(line.replace(/\n$/, "")),
  });
  const served = await prepareServe(config, logger);
  const app = await buildHubApp(served.deps);
  await app.ready();
  served.startWork();
  return new InProcessHub(logs, dialect, dataDir, database, config, env, served, app);
}
