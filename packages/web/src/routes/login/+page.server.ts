import { fail, redirect } from "@sveltejs/kit";
import { ApiFailure, call } from "$lib/server/api";
import { safeNext } from "$lib/server/redirect";
import type { Actions, PageServerLoad } from "./$types";

export const load: PageServerLoad = ({ locals, url }) => {
  if (locals.viewer) redirect(303, safeNext(url.searchParams.get("next")));
  return { next: safeNext(url.searchParams.get("next")) };
};

export const actions: Actions = {
  default: async ({ request, fetch, url }) => {
    const form = await request.formData();
    const username = String(form.get("username") ?? "").trim();
    const password = String(form.get("password") ?? "");
    const otp = String(form.get("otp") ?? "").trim();
    if (!username || !password) {
      return fail(400, {
        username,
        needsOtp: false,
        message: "Enter your user name (or email) and your password.",
      });
    }
    try {
      await call(fetch, "/api/auth/login", {
        method: "POST",
        body: JSON.stringify({ username, password, ...(otp ? { otp } : {}) }),
      });
    } catch (err) {
      if (!(err instanceof ApiFailure)) throw err;
      const needsOtp = err.code === "mfa_required";
      return fail(err.status, {
        username,
        needsOtp,
        message: needsOtp
          ? "This account uses two-factor authentication: enter your password again with the 6-digit code from your authenticator app (or a recovery code)."
          : err.message,
      });
    }
    redirect(303, safeNext(url.searchParams.get("next")));
  },
};
