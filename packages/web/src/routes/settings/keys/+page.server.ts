import { fail } from "@sveltejs/kit";
import type { AccountKey } from "@hub/api";
import { ApiFailure, call } from "$lib/server/api";
import type { Actions, PageServerLoad } from "./$types";

/** The viewer's SSH and GPG keys (`GET /api/me/keys`). */
export const load: PageServerLoad = async ({ fetch }) => {
  const { data } = await call<AccountKey[]>(fetch, "/api/me/keys");
  return {
    keys: data.map(({ id, title, type, algorithm, fingerprint, created_at, last_used_at }) => ({
      id,
      title,
      type,
      algorithm,
      fingerprint,
      created_at,
      last_used_at,
    })),
  };
};

/** A refused action with the API's message; what was typed comes back so it can be corrected. */
function refused(err: unknown, values: { key: string; title: string } | null) {
  if (err instanceof ApiFailure && err.status < 500)
    return fail(err.status, { message: err.message, values });
  throw err;
}

export const actions: Actions = {
  /** Adds a public key (`POST /api/me/keys`); the API says what it refuses and why. */
  add: async ({ request, fetch }) => {
    const form = await request.formData();
    const key = String(form.get("key") ?? "").trim();
    const title = String(form.get("title") ?? "").trim();
    if (!key) return fail(400, { message: "Paste a public key.", values: { key, title } });
    try {
      const { data } = await call<AccountKey>(fetch, "/api/me/keys", {
        method: "POST",
        body: JSON.stringify({ key, ...(title ? { title } : {}) }),
      });
      return { added: { title: data.title, fingerprint: data.fingerprint } };
    } catch (err) {
      return refused(err, { key, title });
    }
  },

  /** Removes a key (`DELETE /api/me/keys/{keyId}`); it stops working at once. */
  remove: async ({ request, fetch }) => {
    const form = await request.formData();
    const id = String(form.get("key_id") ?? "");
    try {
      await call(fetch, `/api/me/keys/${encodeURIComponent(id)}`, { method: "DELETE" });
      return { removed: String(form.get("title") ?? "the key") };
    } catch (err) {
      return refused(err, null);
    }
  },
};
