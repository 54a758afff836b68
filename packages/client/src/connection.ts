import type { HubConfiguration } from "@hub/api";
import { AbortedError, ConnectionError, HubError, errorFromResponse } from "./errors.js";

/**
 * The hub's addresses, from its discovery document
 * (`GET {endpoint}/.well-known/hub-configuration`, the `@hub/api` schema): one
 * endpoint setting is enough, every other address is read from it. A hub
 * without the document is addressed at its endpoint for the API and git.
 */
export type DiscoveredHub = Partial<HubConfiguration> & Pick<HubConfiguration, "api_url" | "git_url">;

/**
 * Where and as whom the SDK talks to a hub. Every SDK call takes one in its
 * params object; it is a plain object, so it can be built inline.
 */
export interface Connection {
  /** The hub's base URL, e.g. `http://127.0.0.1:8080`. */
  endpoint: string;
  /** An access token (`hf_...`), sent as `Authorization: Bearer`. */
  token?: string;
  /** The fetch implementation; defaults to the global one. Inject one to trace, proxy or test. */
  fetch?: typeof fetch;
  /** Sent as `User-Agent`. */
  userAgent?: string;
  /**
   * Addresses known in advance. Whatever is missing is read from the hub's
   * discovery document on first use, once per connection object.
   */
  discovery?: Partial<HubConfiguration>;
}

/** What one request needs besides the connection. */
export interface RequestOptions {
  method?: string;
  /** A path (`/api/whoami`) under the Hub API base, or an absolute URL. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  /** A JSON body; sets `Content-Type: application/json`. */
  json?: unknown;
  body?: RequestInit["body"];
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
  /** Send the connection's token (default true). Never sent to another host than the hub's. */
  auth?: boolean;
  /** Statuses that are answers rather than errors (e.g. 404 for "not there"). */
  accept?: number[];
}

const DEFAULT_USER_AGENT = "hub-client/1.0";
const discovered = new WeakMap<Connection, Promise<DiscoveredHub>>();

const trimSlash = (url: string) => url.replace(/\/+$/, "");

/**
 * The hub's addresses: the connection's own `discovery` entries, then the
 * discovery document. A hub without the document is addressed at its endpoint
 * for the API and git.
 */
export function discover(connection: Connection, signal?: AbortSignal): Promise<DiscoveredHub> {
  let pending = discovered.get(connection);
  if (!pending) {
    pending = fetchDiscovery(connection, signal);
    discovered.set(connection, pending);
    pending.catch(() => discovered.delete(connection));
  }
  return pending;
}

async function fetchDiscovery(connection: Connection, signal?: AbortSignal): Promise<DiscoveredHub> {
  const endpoint = trimSlash(connection.endpoint);
  const known = connection.discovery ?? {};
  const response = await send(connection, {
    path: `${endpoint}/.well-known/hub-configuration`,
    auth: false,
    accept: [404],
    signal,
  });
  let document: Partial<HubConfiguration> = {};
  if (response.status === 404) await response.body?.cancel();
  else document = (await response.json()) as Partial<HubConfiguration>;
  const api = trimSlash(known.api_url ?? document.api_url ?? endpoint);
  return {
    ...document,
    ...known,
    api_url: api,
    git_url: trimSlash(known.git_url ?? document.git_url ?? api),
  };
}

/** The Router's OpenAI-compatible base (`{inference_url}/v1`). */
export async function routerBaseUrl(connection: Connection, signal?: AbortSignal): Promise<string> {
  const { inference_url } = await discover(connection, signal);
  if (!inference_url) {
    throw new HubError(0, "This hub does not publish the address of its inference Router.", {
      code: "router_unknown",
      url: connection.endpoint,
    });
  }
  return `${trimSlash(inference_url)}/v1`;
}

/** Sends a request to the hub and returns the response; a failed status throws the matching {@link HubError}. */
export async function send(connection: Connection, options: RequestOptions): Promise<Response> {
  const url = await resolveUrl(connection, options);
  const headers = await requestHeaders(connection, url, options);
  let body = options.body;
  if (options.json !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(options.json);
  }
  const init: RequestInit & { duplex?: "half" } = {
    method: options.method ?? (body === undefined ? "GET" : "POST"),
    headers,
    body,
    signal: options.signal,
  };
  if (body instanceof ReadableStream) init.duplex = "half";
  let response: Response;
  try {
    response = await (connection.fetch ?? fetch)(url, init);
  } catch (err) {
    throw transportError(err, url, options.signal);
  }
  if (response.ok || options.accept?.includes(response.status)) return response;
  throw errorFromResponse(response, await readErrorBody(response), url);
}

/**
 * The headers of a request to `url`: the caller's, a User-Agent, and the token
 * when `auth` is not false and the URL is one of the hub's own addresses.
 */
export async function requestHeaders(
  connection: Connection,
  url: string,
  options: { headers?: Record<string, string>; auth?: boolean },
): Promise<Headers> {
  const headers = new Headers(options.headers);
  if (!headers.has("user-agent")) headers.set("user-agent", connection.userAgent ?? DEFAULT_USER_AGENT);
  if (options.auth !== false && connection.token && (await sameService(connection, url))) {
    headers.set("authorization", `Bearer ${connection.token}`);
  }
  return headers;
}

/** Sends a request and parses its JSON answer as `T` (the response type the `@hub/api` schema gives). */
export async function sendJson<T>(connection: Connection, options: RequestOptions): Promise<T> {
  const response = await send(connection, options);
  return (await response.json()) as T;
}

/** A fetch failure (refused, reset, DNS, aborted) as a HubError the CLI can print in one line. */
export function transportError(err: unknown, url: string, signal?: AbortSignal | null): HubError {
  if (err instanceof HubError) return err;
  if (signal?.aborted || (err instanceof Error && err.name === "AbortError")) {
    return new AbortedError(0, "The request was cancelled.", { code: "aborted", url, cause: err });
  }
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const code =
    typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : "connection_failed";
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new ConnectionError(0, `Could not reach the hub at ${new URL(url).origin}: ${reason}.`, {
    code: code.toLowerCase(),
    url,
    cause: err,
  });
}

/** The JSON of an error body, or undefined when it is empty or not JSON. */
export async function readErrorBody(response: Response): Promise<unknown> {
  try {
    const text = await response.text();
    return text ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    return undefined;
  }
}

async function resolveUrl(connection: Connection, options: RequestOptions): Promise<string> {
  const base = /^https?:\/\//.test(options.path)
    ? options.path
    : `${(await discover(connection, options.signal ?? undefined)).api_url}${options.path}`;
  const url = new URL(base);
  for (const [key, value] of Object.entries(options.query ?? {})) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  return url.href;
}

/** Whether a URL belongs to the hub (its endpoint or a discovered address), so it may see the token. */
async function sameService(connection: Connection, url: string): Promise<boolean> {
  const origin = new URL(url).origin;
  if (origin === new URL(connection.endpoint).origin) return true;
  const found = discovered.get(connection) ?? Promise.resolve(connection.discovery ?? {});
  const addresses = await found.catch(() => ({}) as Partial<HubConfiguration>);
  return [addresses.api_url, addresses.git_url, addresses.inference_url].some(
    (address) => address !== undefined && new URL(address).origin === origin,
  );
}
