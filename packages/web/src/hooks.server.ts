import type { Handle, HandleServerError } from "@sveltejs/kit";
import { CSRF_COOKIE, viewerOf } from "$lib/server/api";

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
  event.locals.viewer = await viewerOf(event);
  const response = await resolve(event);
  response.headers.set("x-frame-options", "DENY");
  response.headers.set("referrer-policy", "same-origin");
  return response;
};

export const handleError: HandleServerError = ({ error, status }) => {
  if (status === 404) return { message: "Not found" };
  console.error(error);
  return { message: "Something went wrong on the hub's side; try again." };
};
