import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The cookie that carries a browser session's request-forgery token. Unlike the session cookie it is
 * readable by the hub's own pages, which send it back in `X-CSRF-Token`; another site can neither read it
 * nor set that header (OWASP's signed double-submit cookie).
 */
export const CSRF_COOKIE = "hub_csrf";
export const CSRF_HEADER = "x-csrf-token";

/** The token of a browser session: an HMAC of its id under the hub's key, so it needs no storage. */
export function createCsrf(serverKey: Buffer) {
  const token = (sessionId: string) =>
    createHmac("sha256", serverKey).update(`api-csrf\n${sessionId}`).digest("base64url");
  return {
    token,
    /** Whether `presented` is the session's token, compared in constant time. */
    matches(sessionId: string, presented: string | undefined): boolean {
      const expected = Buffer.from(token(sessionId));
      const given = Buffer.from(presented ?? "");
      return expected.length === given.length && timingSafeEqual(expected, given);
    },
  };
}

export type Csrf = ReturnType<typeof createCsrf>;

/** The Set-Cookie value of a session's token (empty and expired to clear it). */
export function csrfCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return [`${CSRF_COOKIE}=${value}`, "Path=/", "SameSite=Strict", `Max-Age=${maxAgeSeconds}`]
    .concat(secure ? ["Secure"] : [])
    .join("; ");
}
