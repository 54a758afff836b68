import { fail, redirect } from "@sveltejs/kit";
import type { Collection } from "@hub/api";
import { ApiFailure, call, load as apiLoad } from "$lib/server/api";
import { collectionApi, mayEdit } from "$lib/server/collections";
import type { Actions, PageServerLoad } from "./$types";

/** One collection (`GET /api/collections/{slug}`): its items as the viewer may see them, and its edit forms. */
export const load: PageServerLoad = async ({ fetch, params, locals }) => {
  const slug = `${params.namespace}/${params.slug}`;
  const { data } = await apiLoad<Collection>(fetch, collectionApi(slug));
  // An old slug (the title changed since) still names it: show it at its address.
  if (data.slug !== slug) redirect(301, `/collections/${data.slug}`);
  return { collection: data, editable: mayEdit(locals.viewer, data) };
};

/** The API's refusal as the form's message; anything else goes to the error page. */
function refusal(err: unknown) {
  if (err instanceof ApiFailure && err.status < 500) return fail(err.status, { message: err.message });
  throw err;
}

const slugOf = (params: { namespace: string; slug: string }) => `${params.namespace}/${params.slug}`;

export const actions: Actions = {
  /** Title, description and visibility (`PATCH /api/collections/{slug}`); a new title moves the slug. */
  update: async ({ request, fetch, params }) => {
    const form = await request.formData();
    let updated: Collection;
    try {
      const { data } = await call<{ data: Collection }>(fetch, collectionApi(slugOf(params)), {
        method: "PATCH",
        body: JSON.stringify({
          title: String(form.get("title") ?? ""),
          description: String(form.get("description") ?? ""),
          private: form.get("private") === "on",
        }),
      });
      updated = data.data;
    } catch (err) {
      return refusal(err);
    }
    redirect(303, `/collections/${updated.slug}`);
  },

  /** Deletes the collection (`DELETE /api/collections/{slug}`) and goes to its owner's collections. */
  delete: async ({ fetch, params }) => {
    try {
      await call(fetch, collectionApi(slugOf(params)), { method: "DELETE" });
    } catch (err) {
      return refusal(err);
    }
    redirect(303, `/collections/${encodeURIComponent(params.namespace)}`);
  },

  /** Changes an item's note (`PATCH …/items/{itemId}`); an empty note removes it. */
  note: async ({ request, fetch, params }) => {
    const form = await request.formData();
    try {
      await call(
        fetch,
        `${collectionApi(slugOf(params))}/items/${encodeURIComponent(String(form.get("item")))}`,
        {
          method: "PATCH",
          body: JSON.stringify({ note: String(form.get("note") ?? "") }),
        },
      );
    } catch (err) {
      return refusal(err);
    }
    return { saved: true as const };
  },

  /** Takes an item out (`DELETE …/items/{itemId}`). */
  remove: async ({ request, fetch, params }) => {
    const form = await request.formData();
    try {
      await call(
        fetch,
        `${collectionApi(slugOf(params))}/items/${encodeURIComponent(String(form.get("item")))}`,
        {
          method: "DELETE",
        },
      );
    } catch (err) {
      return refusal(err);
    }
    return { removed: true as const };
  },
};
