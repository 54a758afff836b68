import { redirect } from "@sveltejs/kit";
import type { LayoutServerLoad } from "./$types";

/** Settings are the signed-in person's own: anyone else is sent to sign in first. */
export const load: LayoutServerLoad = ({ locals, url }) => {
  if (!locals.viewer) redirect(303, `/login?next=${encodeURIComponent(url.pathname)}`);
  return { viewer: locals.viewer };
};
