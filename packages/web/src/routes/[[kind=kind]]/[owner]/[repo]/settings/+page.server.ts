import { fail, redirect } from "@sveltejs/kit";
import type { AccessRequest, RepoInfoFields, WhoamiV2 } from "@hub/api";
import { ApiFailure, call } from "$lib/server/api";
import { addressOf, type RepoAddress } from "$lib/server/repo";
import { requireWrite } from "$lib/server/write";
import { repoHref } from "$lib/repos";
import type { Actions, PageServerLoad } from "./$types";

/** Organization roles that may create repositories in the organization (the API decides; this only fills a list). */
const CREATING_ROLES = ["contributor", "write", "admin"];

/**
 * A repository's settings for those the API lets write it: visibility, gating and its access requests; renaming,
 * moving and deleting, which the API allows the owner and an organization's admins (shown to them, refused to others).
 */
export const load: PageServerLoad = async ({ parent, fetch, locals }) => {
  const { address, repo, write } = await parent();
  requireWrite(write);
  const [{ data: me }, requests, { data: storage }] = await Promise.all([
    call<WhoamiV2>(fetch, "/api/whoami-v2"),
    repo.gated
      ? call<AccessRequest[]>(fetch, `${address.api}/user-access-request/pending`).then(
          ({ data }) => ({ list: data, error: null }),
          (err: unknown) => {
            if (err instanceof ApiFailure) return { list: [] as AccessRequest[], error: err.message };
            throw err;
          },
        )
      : Promise.resolve({ list: [] as AccessRequest[], error: null }),
    call<RepoInfoFields>(fetch, `${address.api}?expand[]=usedStorage&expand[]=xetEnabled`),
  ]);
  const owner = repo.author;
  const mayAdminister =
    owner === locals.viewer?.name || me.orgs.some((org) => org.name === owner && org.roleInOrg === "admin");
  return {
    name: address.id.slice(owner.length + 1),
    requests,
    usedStorage: storage.usedStorage ?? 0,
    xetEnabled: storage.xetEnabled ?? true,
    mayAdminister,
    namespaces: [
      me.name,
      ...me.orgs.filter((org) => CREATING_ROLES.includes(org.roleInOrg)).map((org) => org.name),
    ],
  };
};

/** Runs one settings call, answering the API's refusal as the form's failure for that section. */
async function attempt(action: string, work: () => Promise<unknown>, field?: string) {
  try {
    await work();
    return null;
  } catch (err) {
    if (!(err instanceof ApiFailure)) throw err;
    return fail(err.status, { action, message: err.message, field: err.field ?? field });
  }
}

function settings(fetch: typeof globalThis.fetch, address: RepoAddress, body: Record<string, unknown>) {
  return call(fetch, `${address.api}/settings`, { method: "PUT", body: JSON.stringify(body) });
}

export const actions: Actions = {
  visibility: async ({ request, params, fetch }) => {
    const address = addressOf(params);
    const visibility = (await request.formData()).get("visibility") === "private" ? "private" : "public";
    const failed = await attempt("visibility", () => settings(fetch, address, { visibility }));
    return failed ?? { action: "visibility", saved: `The repository is now ${visibility}.` };
  },

  xet: async ({ request, params, fetch }) => {
    const address = addressOf(params);
    const xetEnabled = (await request.formData()).get("xetEnabled") === "on";
    const failed = await attempt("xet", () => settings(fetch, address, { xetEnabled }));
    return (
      failed ?? {
        action: "xet",
        saved: xetEnabled
          ? "Uploads may now go through Xet."
          : "Uploads now go through Git LFS only; clients with hf_xet need HF_HUB_DISABLE_XET=1.",
      }
    );
  },

  gating: async ({ request, params, fetch }) => {
    const address = addressOf(params);
    const mode = String((await request.formData()).get("gated") ?? "");
    if (!["off", "auto", "manual"].includes(mode))
      return fail(400, {
        action: "gating",
        field: "gated",
        message: "Choose off, automatic or manual review.",
      });
    const gated = mode === "off" ? false : mode;
    const failed = await attempt("gating", () => settings(fetch, address, { gated }));
    return (
      failed ?? {
        action: "gating",
        saved:
          mode === "off"
            ? "Access is no longer gated."
            : `Access requests are now ${mode === "auto" ? "accepted at once" : "reviewed by you"}.`,
      }
    );
  },

  review: async ({ request, params, fetch }) => {
    const address = addressOf(params);
    const form = await request.formData();
    const user = String(form.get("user") ?? "");
    const status = form.get("status") === "rejected" ? "rejected" : "accepted";
    const reason = String(form.get("rejectionReason") ?? "").trim();
    const failed = await attempt("review", () =>
      call(fetch, `${address.api}/user-access-request/handle`, {
        method: "POST",
        body: JSON.stringify({
          user,
          status,
          ...(status === "rejected" && reason ? { rejectionReason: reason } : {}),
        }),
      }),
    );
    return failed ?? { action: "review", saved: `${user}'s request was ${status}.` };
  },

  grant: async ({ request, params, fetch }) => {
    const address = addressOf(params);
    const user = String((await request.formData()).get("user") ?? "").trim();
    if (!user)
      return fail(400, { action: "grant", field: "user", message: "Name the user to give access to." });
    const failed = await attempt(
      "grant",
      () =>
        call(fetch, `${address.api}/user-access-request/grant`, {
          method: "POST",
          body: JSON.stringify({ user }),
        }),
      "user",
    );
    return failed ?? { action: "grant", saved: `${user} may now download the files.` };
  },

  move: async ({ request, params, fetch }) => {
    const address = addressOf(params);
    const form = await request.formData();
    const owner = String(form.get("owner") ?? "").trim();
    const name = String(form.get("name") ?? "").trim();
    const toRepo = `${owner}/${name}`;
    if (!owner || !name)
      return fail(400, {
        action: "move",
        field: name ? "owner" : "name",
        message: "Choose the owner and the name.",
      });
    if (toRepo === address.id)
      return fail(400, { action: "move", field: "name", message: "That is the repository's name already." });
    const failed = await attempt(
      "move",
      () =>
        call(fetch, "/api/repos/move", {
          method: "POST",
          body: JSON.stringify({ fromRepo: address.id, toRepo, type: address.kind }),
        }),
      "name",
    );
    if (failed) return failed;
    redirect(303, `${repoHref(address.kind, toRepo)}/settings`);
  },

  delete: async ({ request, params, fetch }) => {
    const address = addressOf(params);
    const confirm = String((await request.formData()).get("confirm") ?? "").trim();
    if (confirm !== address.id) {
      return fail(400, {
        action: "delete",
        field: "confirm",
        message: `Type ${address.id} exactly to confirm; nothing was deleted.`,
      });
    }
    const [owner = "", name = ""] = address.id.split("/");
    const failed = await attempt("delete", () =>
      call(fetch, "/api/repos/delete", {
        method: "DELETE",
        body: JSON.stringify({ name, organization: owner, type: address.kind }),
      }),
    );
    if (failed) return failed;
    redirect(303, `/${owner}`);
  },
};
