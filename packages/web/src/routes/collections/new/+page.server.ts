import { fail, redirect } from "@sveltejs/kit";
import type { Collection } from "@hub/api";
import { ApiFailure, call, requireViewer } from "$lib/server/api";
import { collectionApi } from "$lib/server/collections";
import type { Actions, PageServerLoad } from "./$types";

/** The repository a new collection starts with, from "Add to collection": `models/alice/bert`. */
const ITEM = /^(model|dataset|space)s\/([^/]+\/[^/]+)$/;

/** A new collection, for the viewer or one of their organizations; optionally holding a repository at once. */
export const load: PageServerLoad = async ({ locals, url }) => {
  const viewer = requireViewer(locals, url.pathname + url.search);
  const asked = url.searchParams.get("namespace");
  return {
    namespaces: [viewer.name, ...viewer.orgs],
    namespace: asked && [viewer.name, ...viewer.orgs].includes(asked) ? asked : viewer.name,
    item: ITEM.test(url.searchParams.get("item") ?? "") ? url.searchParams.get("item") : null,
  };
};

export const actions: Actions = {
  /** `POST /api/collections`, then `POST …/items` for the repository it was opened from. */
  default: async ({ request, fetch, locals, url }) => {
    requireViewer(locals, url.pathname);
    const form = await request.formData();
    const values = {
      title: String(form.get("title") ?? "").trim(),
      description: String(form.get("description") ?? "").trim(),
      namespace: String(form.get("namespace") ?? ""),
      private: form.get("private") === "on",
    };
    const item = ITEM.exec(String(form.get("item") ?? ""));
    let created: Collection;
    try {
      ({ data: created } = await call<Collection>(fetch, "/api/collections", {
        method: "POST",
        body: JSON.stringify({
          title: values.title,
          namespace: values.namespace,
          private: values.private,
          ...(values.description ? { description: values.description } : {}),
        }),
      }));
      if (item)
        await call(fetch, `${collectionApi(created.slug)}/items`, {
          method: "POST",
          body: JSON.stringify({ item: { type: item[1], id: item[2] } }),
        });
    } catch (err) {
      if (err instanceof ApiFailure && err.status < 500)
        return fail(err.status, { message: err.message, values });
      throw err;
    }
    redirect(303, `/collections/${created.slug}`);
  },
};
