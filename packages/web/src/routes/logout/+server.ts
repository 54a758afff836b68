import { redirect } from "@sveltejs/kit";
import { ApiFailure, call, CSRF_COOKIE, SESSION_COOKIE } from "$lib/server/api";
import type { RequestHandler } from "./$types";

/** Ends the browser session (`POST /api/auth/logout`) and goes home. */
export const POST: RequestHandler = async ({ fetch, cookies }) => {
  try {
    await call(fetch, "/api/auth/logout", { method: "POST" });
  } catch (err) {
    // A session that already ended is as good as signed out.
    if (!(err instanceof ApiFailure) || err.status !== 401) throw err;
  }
  cookies.delete(SESSION_COOKIE, { path: "/" });
  cookies.delete(CSRF_COOKIE, { path: "/" });
  redirect(303, "/");
};
