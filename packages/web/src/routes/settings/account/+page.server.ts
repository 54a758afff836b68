import { fail, redirect } from "@sveltejs/kit";
import type { AccountDeletionPreview } from "@hub/api";
import { ApiFailure, call, CSRF_COOKIE, SESSION_COOKIE } from "$lib/server/api";
import { needsReauthentication, reauthenticate } from "$lib/server/reauth";
import type { Actions, PageServerLoad } from "./$types";

/** What deleting the account would remove and what stops it (`GET /api/me/account-deletion`). */
export const load: PageServerLoad = async ({ fetch }) => {
  const { data } = await call<AccountDeletionPreview>(fetch, "/api/me/account-deletion");
  return { preview: data };
};

export const actions: Actions = {
  reauthenticate,

  /**
   * Deletes the account (`DELETE /api/me/account` with the typed username as `confirm`; the API judges it),
   * then signs the browser out and sends it home.
   */
  delete: async ({ request, fetch, cookies }) => {
    const form = await request.formData();
    const confirm = String(form.get("confirm") ?? "").trim();
    try {
      await call(fetch, "/api/me/account", { method: "DELETE", body: JSON.stringify({ confirm }) });
    } catch (err) {
      if (needsReauthentication(err)) return fail(401, { reauth: true as const });
      if (err instanceof ApiFailure && err.status < 500)
        return fail(err.status, { message: err.message, confirm });
      throw err;
    }
    cookies.delete(SESSION_COOKIE, { path: "/" });
    cookies.delete(CSRF_COOKIE, { path: "/" });
    redirect(303, "/");
  },
};
