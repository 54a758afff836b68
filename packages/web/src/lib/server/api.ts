import { error, redirect, type RequestEvent } from "@sveltejs/kit";
import type { WhoamiV2 } from "@hub/api";
import type { Viewer } from "$lib/types";

/** The cookie that carries the browser session (the hub's `auth/authenticate.ts` names it too). */
export const SESSION_COOKIE = "hub_session";
/** The cookie that carries the session's request-forgery token, sent back as X-CSRF-Token (`auth/csrf.ts`). */
export const CSRF_COOKIE = "hub_csrf";

type Fetch = RequestEvent["fetch"];

/** A failed API call: the status and the hub's error body (`{ error, code, field }`). */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    /** The hub's Retry-After on a 429, in seconds. */
    readonly retryAfter?: string,
    /** Where a redirect answer points (a renamed repository's new API address). */
    readonly location?: string,
  ) {
    super(message);
  }
}

/** The hub's answer to one API call: its JSON and the headers pages read (Link pagination). */
export interface ApiAnswer<T> {
  data: T;
  headers: Headers;
}

/**
 * Calls the hub's public API from a page's server code with the page's own fetch, which carries the
 * browser's cookie; the hub answers it in-process (hooks.server.ts). A non-2xx answer throws ApiFailure.
 */
export async function call<T>(fetch: Fetch, path: string, init: RequestInit = {}): Promise<ApiAnswer<T>> {
  const headers = new Headers(init.headers);
  headers.set("accept", "application/json");
  if (init.body !== undefined && typeof init.body === "string" && !headers.has("content-type"))
    headers.set("content-type", "application/json");
  const response = await fetch(path, { ...init, headers, redirect: "manual" });
  if (!response.ok) {
    const body = (await response.json().catch(() => null)) as {
      error?: string;
      code?: string;
      field?: string;
    } | null;
    throw new ApiFailure(
      response.status,
      body?.code ?? "unknown",
      body?.error ?? `The hub answered ${response.status}.`,
      body?.field,
      response.headers.get("retry-after") ?? undefined,
      response.headers.get("location") ?? undefined,
    );
  }
  // Some writes answer 200 with no body (settings, move): no JSON is no data.
  const body = response.status === 204 ? "" : await response.text();
  const data = body === "" ? null : JSON.parse(body);
  return { data: data as T, headers: response.headers };
}

/** `call` for what a page cannot render without: hiding things it may not see as a not-found page. */
export async function load<T>(fetch: Fetch, path: string): Promise<ApiAnswer<T>> {
  try {
    return await call<T>(fetch, path);
  } catch (err) {
    return asPageError(err);
  }
}

/** A failed call as the page's error: what the viewer may not see is "not found", as the API means it. */
export function asPageError(err: unknown): never {
  if (err instanceof ApiFailure) {
    // A private repository answers 401 to the anonymous and 404 to outsiders: both see "not found".
    if ([401, 403, 404].includes(err.status)) error(404, { message: "Not found", code: err.code });
  }
  // Anything else (a 429, a 5xx) becomes the site's error page with its status in hooks.server.ts.
  throw err;
}

/**
 * The signed-in viewer of a page only for them: anyone else is sent to sign in first. When the hub could not
 * say who is signed in (rate limited, failing), the page shows that failure instead of asking to sign in again.
 */
export function requireViewer(locals: App.Locals, next: string): Viewer {
  if (locals.viewer) return locals.viewer;
  if (locals.failure) error(locals.failure.status, { message: locals.failure.message });
  redirect(303, `/login?next=${encodeURIComponent(next)}`);
}

/** The signed-in person behind the browser's session cookie, or null (a stale cookie is cleared). */
export async function viewerOf(event: RequestEvent): Promise<Viewer | null> {
  if (!event.cookies.get(SESSION_COOKIE)) return null;
  try {
    const { data } = await call<WhoamiV2>(event.fetch, "/api/whoami-v2");
    return {
      name: data.name,
      fullname: data.fullname,
      avatarUrl: `/api/users/${encodeURIComponent(data.name)}/avatar`,
      orgs: data.orgs.map((org) => org.name),
    };
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 401) {
      event.cookies.delete(SESSION_COOKIE, { path: "/" });
      event.cookies.delete(CSRF_COOKIE, { path: "/" });
      return null;
    }
    throw err;
  }
}

/**
 * The bytes of a download path (`…/resolve/{rev}/{path}`), or null when there is no such file; `range`
 * (`bytes=0-1023`) asks for part of it.
 */
export async function download(fetch: Fetch, path: string, range?: string): Promise<Uint8Array | null> {
  const response = await fetch(path, range ? { headers: { range } } : {});
  if (response.status === 404) return null;
  if (!response.ok)
    throw new ApiFailure(response.status, "download_failed", `The hub answered ${response.status}.`);
  return new Uint8Array(await response.arrayBuffer());
}
