import { fail } from "@sveltejs/kit";
import { SCOPES, type CreatedToken, type TokenList, type WhoamiV2 } from "@hub/api";
import { ApiFailure, call } from "$lib/server/api";
import { needsReauthentication, reauthenticate } from "$lib/server/reauth";
import type { Actions, PageServerLoad } from "./$types";

const DAY = 24 * 60 * 60 * 1000;
const EXPIRIES = [7, 30, 90, 365] as const;

/** The viewer's tokens (`GET /api/me/tokens`), or the reauthentication prompt when the API asks for it. */
export const load: PageServerLoad = async ({ fetch }) => {
  const { data: me } = await call<WhoamiV2>(fetch, "/api/whoami-v2");
  const choices = {
    scopes: [...SCOPES],
    expiries: [...EXPIRIES],
    organizations: me.orgs.map((org) => org.name),
  };
  try {
    const { data } = await call<TokenList>(fetch, "/api/me/tokens");
    return { ...choices, tokens: data.tokens, needsReauth: false };
  } catch (err) {
    if (needsReauthentication(err)) return { ...choices, tokens: [], needsReauth: true };
    throw err;
  }
};

/** What the create form held, kept so it comes back filled in after a refusal. */
interface TokenFormValues {
  name: string;
  kind: string;
  days: number;
  organization: string;
  scopes: string[];
  repositories: string;
}

/** A failed action, with what the person typed kept so the form comes back filled in. */
function refused(err: unknown, values: TokenFormValues | null) {
  if (needsReauthentication(err)) return fail(401, { reauth: true as const, values });
  if (err instanceof ApiFailure && err.status < 500) {
    return fail(err.status, { message: err.message, field: err.field, values });
  }
  throw err;
}

export const actions: Actions = {
  reauthenticate,

  create: async ({ request, fetch }) => {
    const form = await request.formData();
    const name = String(form.get("name") ?? "").trim();
    const kind = String(form.get("kind") ?? "read");
    const days = Number(form.get("expires") ?? 30);
    const organization = String(form.get("organization") ?? "");
    const scopes = form.getAll("scopes").map(String);
    const repositories = String(form.get("repositories") ?? "")
      .split(/[\s,]+/)
      .filter(Boolean);
    const values: TokenFormValues = {
      name,
      kind,
      days,
      organization,
      scopes,
      repositories: repositories.join("\n"),
    };
    if (!name)
      return fail(400, { message: "Give the token a name you will recognise.", field: "name", values });
    if (kind === "fine-grained" && scopes.length === 0) {
      return fail(400, {
        message: "Choose at least one scope for a fine-grained token.",
        field: "scopes",
        values,
      });
    }
    const body = {
      name,
      expires_at: new Date(Date.now() + (Number.isFinite(days) && days > 0 ? days : 30) * DAY).toISOString(),
      ...(organization ? { organization } : {}),
      ...(kind === "fine-grained"
        ? { scopes, ...(repositories.length > 0 ? { repositories } : {}) }
        : { role: kind === "write" ? "write" : "read" }),
    };
    try {
      const { data } = await call<CreatedToken>(fetch, "/api/me/tokens", {
        method: "POST",
        body: JSON.stringify(body),
      });
      // The secret is in this one response; the list never shows it again.
      return { created: { name: data.name, token: data.token } };
    } catch (err) {
      return refused(err, values);
    }
  },

  revoke: async ({ request, fetch }) => {
    const form = await request.formData();
    const id = String(form.get("token_id") ?? "");
    try {
      await call(fetch, `/api/me/tokens/${encodeURIComponent(id)}`, { method: "DELETE" });
      return { revoked: String(form.get("name") ?? "the token") };
    } catch (err) {
      return refused(err, null);
    }
  },
};
