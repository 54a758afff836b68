import { error } from "@sveltejs/kit";
import type { OrgMember, OrgOverview, UserOverview } from "@hub/api";
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
  return { profile, models, datasets, spaces, members: await membersOf(event, profile) };
};

/** What an organization's page shows of its members: the list and roles as the API shows them to the viewer. */
interface MembersView {
  list: OrgMember[];
  /** Why there is no list: the API's refusal, or null. */
  refusal: string | null;
  /** Whether the viewer is one of its members (who may leave). */
  member: boolean;
  /** Whether the viewer is one of its admins (who get a link to its settings). */
  admin: boolean;
}

/** `GET /api/organizations/{org}/members` answers members only; others see the count the overview gives. */
async function membersOf(
  event: Parameters<PageServerLoad>[0],
  profile: UserOverview | OrgOverview,
): Promise<MembersView | null> {
  if (profile.type !== "org") return null;
  const viewer = event.locals.viewer;
  if (!viewer?.orgs.includes(profile.name)) return { list: [], refusal: null, member: false, admin: false };
  try {
    const { data } = await call<OrgMember[]>(
      event.fetch,
      `/api/organizations/${encodeURIComponent(profile.name)}/members`,
    );
    const admin = data.some((member) => member.user === viewer.name && member.role === "admin");
    return { list: data, refusal: null, member: true, admin };
  } catch (err) {
    // A member without the single sign-on the organization requires is refused, with where to sign in.
    if (err instanceof ApiFailure && err.status === 403)
      return { list: [], refusal: err.message, member: true, admin: false };
    throw err;
  }
}

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
