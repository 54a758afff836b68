import type { UnreadCount } from "@hub/api";
import { ApiFailure, call } from "$lib/server/api";
import type { LayoutServerLoad } from "./$types";

/**
 * Who is signed in, and for them how many notifications are unread (the header's badge): one cheap call, made
 * only for the signed in. A failure (rate limited, the hub failing) shows no badge rather than failing the page.
 */
export const load: LayoutServerLoad = async ({ locals, fetch }) => {
  if (!locals.viewer) return { viewer: null, unread: null };
  let unread: number | null = null;
  try {
    unread = (await call<UnreadCount>(fetch, "/api/notifications/unread-count")).data.unreadCount;
  } catch (err) {
    if (!(err instanceof ApiFailure)) throw err;
  }
  return { viewer: locals.viewer, unread };
};
