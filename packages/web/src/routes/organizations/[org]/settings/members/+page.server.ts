import { fail, redirect } from "@sveltejs/kit";
import type { OrgMember } from "@hub/api";
import { call } from "$lib/server/api";
import { orgApi, refusal, refusePage } from "$lib/server/org";
import type { Actions, PageServerLoad } from "./$types";

const ROLES = ["read", "contributor", "write", "admin"] as const;
const roleOf = (value: FormDataEntryValue | null) => ROLES.find((role) => role === value);

/** The members and their roles (`GET …/members`). */
export const load: PageServerLoad = async ({ params, fetch }) => {
  try {
    const { data } = await call<OrgMember[]>(fetch, `${orgApi(params.org)}/members`);
    return { members: data, roles: [...ROLES] };
  } catch (err) {
    refusePage(err);
  }
};

export const actions: Actions = {
  /** `POST …/members`: adds someone by handle with a role. */
  add: async ({ request, params, fetch }) => {
    const form = await request.formData();
    const user = String(form.get("user") ?? "").trim();
    const role = roleOf(form.get("role"));
    const keep = { values: { user, role: role ?? "read" } };
    if (!user)
      return fail(400, { action: "add", field: "user", message: "Name the person to add.", ...keep });
    if (!role) return fail(400, { action: "add", field: "role", message: "Choose a role.", ...keep });
    try {
      await call(fetch, `${orgApi(params.org)}/members`, {
        method: "POST",
        body: JSON.stringify({ user, role }),
      });
    } catch (err) {
      const { status, ...why } = refusal(err);
      return fail(status, { action: "add", ...why, ...keep });
    }
    return { action: "add", done: `Added ${user} as ${role}.` };
  },

  /** `PUT …/members/{user}`: changes a role (the API refuses to demote the last admin). */
  role: async ({ request, params, fetch }) => {
    const form = await request.formData();
    const user = String(form.get("user") ?? "");
    const role = roleOf(form.get("role"));
    if (!role) return fail(400, { action: "role", user, message: "Choose a role." });
    try {
      await call(fetch, `${orgApi(params.org)}/members/${encodeURIComponent(user)}`, {
        method: "PUT",
        body: JSON.stringify({ role }),
      });
    } catch (err) {
      const { status, ...why } = refusal(err);
      return fail(status, { action: "role", ...why, ...{ user } });
    }
    return { action: "role", user, done: `${user} is now ${role}.` };
  },

  /** `DELETE …/members/{user}`: removes a member (never the last admin). */
  remove: async ({ request, params, fetch }) => {
    const user = String((await request.formData()).get("user") ?? "");
    try {
      await call(fetch, `${orgApi(params.org)}/members/${encodeURIComponent(user)}`, { method: "DELETE" });
    } catch (err) {
      const { status, ...why } = refusal(err);
      return fail(status, { action: "remove", ...why, ...{ user } });
    }
    return { action: "remove", user, done: `Removed ${user} from the organization.` };
  },

  /** `POST …/leave`: the viewer leaves; they no longer manage it, so its page opens. */
  leave: async ({ params, fetch }) => {
    try {
      await call(fetch, `${orgApi(params.org)}/leave`, { method: "POST" });
    } catch (err) {
      const { status, ...why } = refusal(err);
      return fail(status, { action: "leave", ...why });
    }
    redirect(303, `/${encodeURIComponent(params.org)}`);
  },
};
