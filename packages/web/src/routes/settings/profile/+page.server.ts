import { fail, redirect } from "@sveltejs/kit";
import {
  SOCIAL_NETWORKS,
  type Me,
  type Profile,
  type UsernameMigration,
  type UsernamePreview,
} from "@hub/api";
import { ApiFailure, call } from "$lib/server/api";
import { needsReauthentication, reauthenticate } from "$lib/server/reauth";
import type { Actions, PageServerLoad } from "./$types";

/**
 * The viewer's profile (`GET /api/me`) and, when `?username=` names one, the preview of renaming to it
 * (`GET /api/me/profile/username`): what would move, and why it would be refused.
 */
export const load: PageServerLoad = async ({ fetch, url }) => {
  const { data: me } = await call<Me>(fetch, "/api/me");
  const wanted = (url.searchParams.get("username") ?? "").trim();
  let preview: UsernamePreview | null = null;
  let previewError: string | null = null;
  if (wanted) {
    try {
      ({ data: preview } = await call<UsernamePreview>(
        fetch,
        `/api/me/profile/username?username=${encodeURIComponent(wanted)}`,
      ));
    } catch (err) {
      if (!(err instanceof ApiFailure) || err.status >= 500) throw err;
      previewError = err.message;
    }
  }
  return {
    name: me.name,
    profile: me.profile,
    networks: [...SOCIAL_NETWORKS],
    reservedUsernames: me.reservedUsernames,
    wanted,
    preview,
    previewError,
  };
};

/** A refused action: the reauthentication prompt, or the API's message (naming its field) for the form. */
function refused(err: unknown, form: string, values: Record<string, string> | null = null) {
  if (needsReauthentication(err)) return fail(401, { reauth: true as const, form });
  if (err instanceof ApiFailure && err.status < 500) {
    return fail(err.status, { form, message: err.message, field: err.field, values });
  }
  throw err;
}

export const actions: Actions = {
  reauthenticate,

  /** Replaces the editable profile (`PUT /api/me/profile`): every field the form shows, empty ones cleared. */
  save: async ({ request, fetch }) => {
    const form = await request.formData();
    const text = (name: string) => String(form.get(name) ?? "");
    const fullname = text("fullname").trim();
    const values = Object.fromEntries(
      ["fullname", "bio", "location", "website", ...SOCIAL_NETWORKS].map((name) => [name, text(name)]),
    );
    const body = {
      fullname: fullname || null,
      bio: text("bio"),
      location: text("location").trim(),
      website: text("website").trim(),
      social: Object.fromEntries(SOCIAL_NETWORKS.map((network) => [network, text(network).trim()])),
    };
    try {
      await call<Profile>(fetch, "/api/me/profile", { method: "PUT", body: JSON.stringify(body) });
      return { form: "profile", saved: true as const };
    } catch (err) {
      return refused(err, "profile", values);
    }
  },

  /** Sets the avatar (`PUT /api/me/avatar`) from an uploaded file; the API judges its type and size. */
  avatar: async ({ request, fetch }) => {
    const form = await request.formData();
    const file = form.get("avatar");
    if (!(file instanceof File) || file.size === 0) {
      return fail(400, { form: "avatar", message: "Choose an image file to upload." });
    }
    try {
      await call<Profile>(fetch, "/api/me/avatar", {
        method: "PUT",
        headers: { "content-type": "application/octet-stream" },
        body: new Uint8Array(await file.arrayBuffer()),
      });
      return { form: "avatar", avatarSaved: true as const };
    } catch (err) {
      return refused(err, "avatar");
    }
  },

  /** Back to the default avatar (`DELETE /api/me/avatar`). */
  removeAvatar: async ({ fetch }) => {
    try {
      await call(fetch, "/api/me/avatar", { method: "DELETE" });
      return { form: "avatar", avatarRemoved: true as const };
    } catch (err) {
      return refused(err, "avatar");
    }
  },

  /** Renames the account (`POST /api/me/profile/username`) after the preview, then shows the new name. */
  rename: async ({ request, fetch }) => {
    const form = await request.formData();
    const username = String(form.get("username") ?? "").trim();
    if (!username) return fail(400, { form: "username", message: "Enter the new username." });
    let renamed: UsernameMigration;
    try {
      ({ data: renamed } = await call<UsernameMigration>(fetch, "/api/me/profile/username", {
        method: "POST",
        body: JSON.stringify({ username }),
      }));
    } catch (err) {
      return refused(err, "username");
    }
    redirect(303, `/settings/profile?renamed=${encodeURIComponent(renamed.previousName)}`);
  },
};
