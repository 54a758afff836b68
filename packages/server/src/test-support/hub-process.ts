import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runAdmin } from "../bin/admin.js";
import { expect } from "vitest";
import { createTestDatabase, type Dialect, type TestDatabase } from "./databases.js";

const HUBD = fileURLToPath(new URL("../../dist/bin/hubd.js", import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface StartOptions {
  dialect?: Dialect;
  env?: Record<string, string>;
  /** Share another hub's data dir and database (a second process of one deployment). */
  sharing?: TestHub;
}

/**
 * A real `hubd serve` process on free ports with its own data dir and database.
 * It remembers every secret the test made, and `stop()` fails the test if any
 * of them reached the log.
 */
export class TestHub {
  readonly logs: string[] = [];
  readonly secrets = new Set<string>();
  /** Base URL of the Hub API listener. */
  url = "";
  /** Base URL of the git over HTTPS listener. */
  gitUrl = "";
  /** `ssh://git@host:port` of the SSH listener. */
  sshUrl = "";
  /** Base URL of the inference Router listener. */
  routerUrl = "";
  private child: ChildProcess | null = null;
  private signalled = false;
  private exit: Promise<number | null> = Promise.resolve(null);

  constructor(
    readonly dialect: Dialect,
    readonly dataDir: string,
    readonly database: TestDatabase,
    readonly env: Record<string, string>,
    private readonly ownsStorage: boolean,
    private readonly ports: { hub: number; git: number; ssh: number; router: number },
  ) {}

  /** The environment every hubd process of this deployment runs with. */
  processEnv(): NodeJS.ProcessEnv {
    return {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      HUB_DATA_DIR: this.dataDir,
      HUB_PORT: String(this.ports.hub),
      HUB_GIT_PORT: String(this.ports.git),
      HUB_SSH_PORT: String(this.ports.ssh),
      HUB_ROUTER_PORT: String(this.ports.router),
      HUB_LOG_LEVEL: "debug",
      ...(this.database.url ? { HUB_DATABASE_URL: this.database.url } : {}),
      ...this.env,
    };
  }

  async start(): Promise<void> {
    const child = spawn(process.execPath, [HUBD, "serve"], {
      env: this.processEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    this.exit = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
    const listening = new Map<string, string>();
    await new Promise<void>((resolve, reject) => {
      let buffered = "";
      const onData = (chunk: Buffer) => {
        buffered += chunk.toString("utf8");
        const lines = buffered.split("\n");
        buffered = lines.pop() ?? "";
        for (const line of lines) {
          this.logs.push(line);
          const entry = parseJson(line);
          if (
            entry?.msg === "listening" &&
            typeof entry.url === "string" &&
            typeof entry.surface === "string"
          ) {
            listening.set(entry.surface, entry.url);
            if (listening.size === 4) resolve();
          }
        }
      };
      child.stdout.on("data", onData);
      child.stderr.on("data", (chunk: Buffer) => this.logs.push(chunk.toString("utf8")));
      child.once("exit", (code) =>
        reject(new Error(`hubd exited with ${code} before listening:\n${this.logs.join("\n")}`)),
      );
    });
    this.url = listening.get("hub") ?? "";
    this.gitUrl = listening.get("git") ?? "";
    this.sshUrl = listening.get("ssh") ?? "";
    this.routerUrl = listening.get("router") ?? "";
  }

  /** Runs an admin command against this deployment's database (in the test's process: `runAdmin`). */
  cli(args: string[], stdin = ""): Promise<CliResult> {
    return runAdminHere(args, this.processEnv(), stdin);
  }

  /** Sends a request to the Hub API; `token` becomes a Bearer credential. */
  request(pathname: string, init: RequestInit & { token?: string; json?: unknown } = {}): Promise<Response> {
    const headers = browserHeaders(init);
    if (init.token !== undefined) headers.set("authorization", `Bearer ${init.token}`);
    let body = init.body;
    if (init.json !== undefined) {
      headers.set("content-type", "application/json");
      body = JSON.stringify(init.json);
    }
    return fetch(`${this.url}${pathname}`, { ...init, headers, body });
  }

  /** Creates an account through the admin CLI and remembers its password as a secret. */
  async createUser(handle: string, password = `pw-${handle}-${Math.random().toString(36).slice(2)}`) {
    const result = await this.cli(
      ["user", "create", handle, "--email", `${handle}@example.com`, "--password-stdin"],
      `${password}\n`,
    );
    expect(result.code, result.stderr).toBe(0);
    this.secrets.add(password);
    return { handle, password };
  }

  /** Mints a token through the admin CLI and returns its secret (the last line of stdout). */
  async createToken(handle: string, args: string[] = ["--role", "write"]): Promise<string> {
    const result = await this.cli([
      "token",
      "create",
      handle,
      "--name",
      `t-${Math.random().toString(36).slice(2)}`,
      ...args,
    ]);
    expect(result.code, result.stderr).toBe(0);
    const secret = result.stdout.trim().split("\n").pop() ?? "";
    this.secrets.add(secret);
    return secret;
  }

  /** Reauthenticates a token with the account password, as token management requires. */
  reauthenticate(token: string, password: string): Promise<void> {
    return reauthenticateThrough(this, token, password);
  }

  /** Signs in with a password as a browser does and returns the session cookie (`hub_session=…`). */
  signIn(handle: string, password: string): Promise<string> {
    return signInThrough(this, handle, password);
  }

  /** Sends a signal and waits for the process to exit; returns its exit code. */
  async signal(signal: NodeJS.Signals): Promise<number | null> {
    this.signalled = true;
    this.child?.kill(signal);
    return this.exit;
  }

  /** Stops the process, checks its log held none of the test's secrets, and removes its storage. */
  async stop(): Promise<void> {
    const crashed = this.child !== null && this.child.exitCode !== null && !this.signalled;
    if (this.child && this.child.exitCode === null) await this.signal("SIGTERM");
    const log = this.logs.join("\n");
    expect(crashed, `hubd exited on its own:\n${log.slice(-3000)}`).toBe(false);
    for (const secret of this.secrets) expect(log.includes(secret), "a secret reached the log").toBe(false);
    if (this.ownsStorage) {
      await this.database.drop();
      rmSync(this.dataDir, { recursive: true, force: true });
    }
  }
}

function parseJson(line: string): Record<string, unknown> | null {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** Ports nothing listens on right now, all held open together so the kernel cannot hand out one twice. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const server = net.createServer();
          server.once("error", reject);
          server.listen(0, "127.0.0.1", () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => {
    const address = server.address();
    return typeof address === "object" && address ? address.port : 0;
  });
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** The admin command running in this process: they take turns (see `runAdminHere`). */
let adminTurn: Promise<unknown> = Promise.resolve();

/**
 * Runs an admin command in this process: the code the `hubd` program runs (bin/admin.ts), without a node
 * process to start for each. Tests that set up through admin commands use it; `bin/hubd.test.ts` runs the
 * program itself (`runHubd`). Commands take turns: on SQLite a connection waiting for the write lock
 * blocks the event loop, so two commands writing at once in one process would wait on each other.
 */
export function runAdminHere(args: string[], env: NodeJS.ProcessEnv, stdin = ""): Promise<CliResult> {
  const run = adminTurn.then(async () => {
    let stdout = "";
    let stderr = "";
    const code = await runAdmin(args, {
      env,
      stdin: async () => stdin,
      stdout: (text) => (stdout += text),
      stderr: (text) => (stderr += text),
    });
    return { code, stdout, stderr };
  });
  adminTurn = run.catch(() => undefined);
  return run;
}

/** Runs the hubd binary with the given arguments, environment and standard input. */
export function runHubd(args: string[], env: NodeJS.ProcessEnv, stdin = ""): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [HUBD, ...args], { env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.once("exit", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

/** Starts a hub process on a fresh database of the dialect (or sharing another hub's storage). */
export async function startHub(options: StartOptions = {}): Promise<TestHub> {
  const { sharing } = options;
  const dialect = sharing?.dialect ?? options.dialect ?? "sqlite";
  const dataDir = sharing?.dataDir ?? mkdtempSync(path.join(os.tmpdir(), "hub-test-"));
  const database = sharing?.database ?? (await createTestDatabase(dialect));
  // A port found free can be taken by another test's process before hubd binds it: then try other ports.
  for (let attempt = 1; ; attempt++) {
    const [hubPort = 0, gitPort = 0, sshPort = 0, routerPort = 0] = await freePorts(4);
    const ports = { hub: hubPort, git: gitPort, ssh: sshPort, router: routerPort };
    const hub = new TestHub(dialect, dataDir, database, { ...sharing?.env, ...options.env }, !sharing, ports);
    try {
      await hub.start();
      return hub;
    } catch (error) {
      if (attempt >= 3 || !String(error).includes("EADDRINUSE")) throw error;
    }
  }
}

/** A response body read as the API type the test expects it to be. */
export function readJson<T>(response: Response): Promise<T> {
  return response.json() as Promise<T>;
}

/** What both harnesses (a real process, the in-process app) offer to the shared helpers below. */
interface ApiHarness {
  readonly secrets: Set<string>;
  request(pathname: string, init?: RequestInit & { token?: string; json?: unknown }): Promise<Response>;
}

/**
 * Starts an organization's SSO sign-in through `hub` and lets the provider (a fake that approves at once)
 * answer it: the callback path the browser would be sent back to, its code and state remembered as secrets.
 */
export async function ssoCallbackThrough(
  hub: ApiHarness,
  organization: string,
  token: string,
): Promise<string> {
  const login = await hub.request(`/api/organizations/${organization}/sso/login`, {
    token,
    redirect: "manual",
  });
  expect(login.status, await login.clone().text()).toBe(302);
  const approved = await fetch(login.headers.get("location") ?? "", { redirect: "manual" });
  const back = new URL(approved.headers.get("location") ?? "");
  for (const name of ["code", "state"]) hub.secrets.add(back.searchParams.get(name) ?? "");
  return `${back.pathname}${back.search}`;
}

/** Reauthenticates a token with the account password, as token management requires. */
export async function reauthenticateThrough(hub: ApiHarness, token: string, password: string): Promise<void> {
  const response = await hub.request("/api/auth/reauthenticate", {
    method: "POST",
    token,
    json: { password },
  });
  expect(response.status).toBe(200);
}

/**
 * Signs in with a password as a browser does and returns its cookies (`hub_session=…; hub_csrf=…`),
 * remembered as secrets. Requests sent with them carry the X-CSRF-Token the hub's pages would send.
 */
export async function signInThrough(hub: ApiHarness, handle: string, password: string): Promise<string> {
  const response = await hub.request("/api/auth/login", {
    method: "POST",
    json: { username: handle, password },
  });
  expect(response.status).toBe(200);
  const cookies = response.headers.getSetCookie().map((cookie) => cookie.split(";")[0] ?? "");
  const session = cookies.find((cookie) => cookie.startsWith("hub_session=")) ?? "";
  hub.secrets.add(session.split("=")[1] ?? "");
  return cookies.join("; ");
}

/**
 * The request's headers, with X-CSRF-Token added to a write that carries the browser-session cookies, as
 * the hub's pages add it (a test that wants it absent sends the header empty).
 */
export function browserHeaders(init: RequestInit): Headers {
  const headers = new Headers(init.headers);
  const token = /(?:^|;\s*)hub_csrf=([^;]+)/.exec(headers.get("cookie") ?? "")?.[1];
  const method = (init.method ?? "GET").toUpperCase();
  if (token && !["GET", "HEAD", "OPTIONS"].includes(method) && !headers.has("x-csrf-token")) {
    headers.set("x-csrf-token", token);
  }
  return headers;
}
