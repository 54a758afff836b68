import type { Handle, HandleServerError } from "@sveltejs/kit";
import { ApiFailure, CSRF_COOKIE, viewerOf } from "$lib/server/api";

/** What pages fetch on the server that the hub itself answers rather than a page route. */
function isHubPath(pathname: string): boolean {
  return (
    pathname.startsWith("/api/") ||
    pathname.startsWith("/.well-known/") ||
    /^\/(?:(?:datasets|spaces)\/)?[^/]+\/[^/]+\/(?:resolve|raw)\//.test(pathname)
  );
}

export const handle: Handle = async ({ event, resolve }) => {
  if (event.isSubRequest && isHubPath(event.url.pathname)) {
    if (!event.platform) throw new Error("The web runs inside the hub, which passes it the `hub` platform.");
    // A page's write carries the session's request-forgery token, as the browser's own requests do.
    const request = new Request(event.request);
    const token = event.cookies.get(CSRF_COOKIE);
    if (token && !["GET", "HEAD"].includes(request.method)) request.headers.set("x-csrf-token", token);
    return event.platform.hub(request);
  }
  try {
    event.locals.viewer = await viewerOf(event);
  } catch (err) {
    // An error thrown here would skip the site's error page. The viewer is unknown (rate limited, the hub
    // failing): pages render as for a visitor, keeping the cookie; their own API calls meet the same answer, and
    // pages for the signed-in show the failure instead of asking to sign in (`requireViewer`).
    if (!(err instanceof ApiFailure)) throw err;
    event.locals.viewer = null;
    event.locals.failure = failureOf(err);
  }
  let response = await resolve(event);
  const failure = event.locals.failure;
  if (failure && response.status === 500 && failure.status !== 500) {
    // SvelteKit renders an unexpected error as 500; an API failure keeps its own status.
    response = new Response(response.body, { status: failure.status, headers: response.headers });
  }
  if (failure?.retryAfter && response.status === 429) response.headers.set("retry-after", failure.retryAfter);
  response.headers.set("x-frame-options", "DENY");
  response.headers.set("referrer-policy", "same-origin");
  return response;
};

const SERVER_FAILURE = "Something went wrong on the hub's side; try again.";

/**
 * What the error page says for an error no page handled. An API failure keeps its status: a 401 asks to sign in
 * again, a 429 says when to retry, another refusal gives the API's message (written for people); 5xx details
 * stay in the log.
 */
export const handleError: HandleServerError = ({ error, event, status }) => {
  if (status === 404) return { message: "Not found" };
  if (error instanceof ApiFailure && error.status < 500) {
    event.locals.failure = failureOf(error);
    return { message: event.locals.failure.message, code: error.code, status: error.status };
  }
  console.error(error);
  return { message: SERVER_FAILURE, status: 500 };
};

/** What the error page shows for an API failure. */
function failureOf(error: ApiFailure): NonNullable<App.Locals["failure"]> {
  if (error.status >= 500) return { status: 500, message: SERVER_FAILURE };
  const message =
    error.status === 401
      ? "Your session has ended or does not allow this; sign in again."
      : error.status === 404
        ? "Not found"
        : error.message;
  return { status: error.status, message, retryAfter: error.retryAfter };
}
