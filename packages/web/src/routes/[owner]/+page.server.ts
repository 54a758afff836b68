import { error } from "@sveltejs/kit";
import type { OrgOverview, UserOverview } from "@hub/api";
import { ApiFailure, call } from "$lib/server/api";
import { listing } from "$lib/server/listing";
import type { PageServerLoad } from "./$types";

/** A person's or an organization's page: who they are, and the repositories the viewer may see. */
export const load: PageServerLoad = async (event) => {
  const name = event.params.owner;
  const profile = await overview(event.fetch, name);
  const author = new URL(event.url);
  author.searchParams.set("author", name);
  const scoped = { fetch: event.fetch, url: author };
  const [models, datasets, spaces] = await Promise.all([
    listing(scoped, "model", 30),
    listing(scoped, "dataset", 30),
    listing(scoped, "space", 30),
  ]);
  return { profile, models, datasets, spaces };
};

async function overview(fetch: typeof globalThis.fetch, name: string): Promise<UserOverview | OrgOverview> {
  const encoded = encodeURIComponent(name);
  for (const path of [`/api/users/${encoded}/overview`, `/api/organizations/${encoded}/overview`]) {
    try {
      return (await call<UserOverview | OrgOverview>(fetch, path)).data;
    } catch (err) {
      if (!(err instanceof ApiFailure) || err.status !== 404) throw err;
    }
  }
  error(404, { message: "Not found" });
}
