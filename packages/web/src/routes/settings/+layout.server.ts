import { requireViewer } from "$lib/server/api";
import type { LayoutServerLoad } from "./$types";

/** Settings are the signed-in person's own: anyone else is sent to sign in first. */
export const load: LayoutServerLoad = ({ locals, url }) => {
  return { viewer: requireViewer(locals, url.pathname) };
};
