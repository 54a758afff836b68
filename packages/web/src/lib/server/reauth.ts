import { fail, type RequestEvent } from "@sveltejs/kit";
import { ApiFailure, call } from "./api";

/** Whether the API asked for a fresh password (sensitive account changes need one within a few minutes). */
export function needsReauthentication(err: unknown): boolean {
  return err instanceof ApiFailure && err.code === "reauthentication_required";
}

/**
 * The form action behind the reauthentication prompt: `POST /api/auth/reauthenticate` with the password
 * (and two-factor code), for the session the browser holds. Pages add it as `reauthenticate`.
 */
export async function reauthenticate({ request, fetch }: Pick<RequestEvent, "request" | "fetch">) {
  const form = await request.formData();
  const password = String(form.get("password") ?? "");
  const otp = String(form.get("otp") ?? "").trim();
  try {
    await call(fetch, "/api/auth/reauthenticate", {
      method: "POST",
      body: JSON.stringify({ password, ...(otp ? { otp } : {}) }),
    });
  } catch (err) {
    if (err instanceof ApiFailure && err.status < 500) {
      return fail(err.status, { reauth: true as const, message: err.message });
    }
    throw err;
  }
  return { reauthenticated: true as const };
}
