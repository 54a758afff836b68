import { fail } from "@sveltejs/kit";
import type { OrganizationSso } from "@hub/api";
import { call } from "$lib/server/api";
import { orgApi, refusal, refusePage } from "$lib/server/org";
import { reauthenticate } from "$lib/server/reauth";
import type { Actions, PageServerLoad } from "./$types";

/** The organization's OpenID Connect settings (`GET …/sso`); the client secret is never part of them. */
export const load: PageServerLoad = async ({ params, fetch }) => {
  try {
    const { data } = await call<OrganizationSso>(fetch, `${orgApi(params.org)}/sso`);
    return { sso: data };
  } catch (err) {
    refusePage(err);
  }
};

export const actions: Actions = {
  reauthenticate,

  /** `PUT …/sso`: the whole configuration; a secret left empty keeps the stored one. */
  save: async ({ request, params, fetch }) => {
    const form = await request.formData();
    const values = {
      issuer: String(form.get("issuer") ?? "").trim(),
      clientId: String(form.get("clientId") ?? "").trim(),
      emailDomain: String(form.get("emailDomain") ?? "").trim(),
      required: form.get("required") === "on",
      sessionSeconds: String(form.get("sessionSeconds") ?? "").trim(),
    };
    const clientSecret = String(form.get("clientSecret") ?? "").trim();
    const keep = { values };
    const seconds = values.sessionSeconds === "" ? null : Number(values.sessionSeconds);
    if (seconds !== null && !Number.isInteger(seconds))
      return fail(400, {
        action: "save",
        field: "sessionSeconds",
        message: "Sign-in length: a whole number of seconds, or empty for the hub's default.",
        ...keep,
      });
    try {
      await call<OrganizationSso>(fetch, `${orgApi(params.org)}/sso`, {
        method: "PUT",
        body: JSON.stringify({
          issuer: values.issuer,
          clientId: values.clientId,
          ...(clientSecret ? { clientSecret } : {}),
          emailDomain: values.emailDomain || null,
          required: values.required,
          sessionSeconds: seconds,
        }),
      });
    } catch (err) {
      const { status, ...why } = refusal(err);
      return fail(status, { action: "save", ...why, ...keep });
    }
    return { action: "save", done: "Single sign-on is saved." };
  },

  /** `DELETE …/sso`: removes it and every sign-in made with it. */
  remove: async ({ params, fetch }) => {
    try {
      await call(fetch, `${orgApi(params.org)}/sso`, { method: "DELETE" });
    } catch (err) {
      const { status, ...why } = refusal(err);
      return fail(status, { action: "remove", ...why });
    }
    return { action: "remove", done: "Single sign-on is removed." };
  },
};
