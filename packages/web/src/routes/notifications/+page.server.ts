import { fail } from "@sveltejs/kit";
import type { NotificationList } from "@hub/api";
import { ApiFailure, asPageError, call, requireViewer } from "$lib/server/api";
import type { Actions, PageServerLoad } from "./$types";

interface InboxFilters {
  unread: boolean;
  /** `{type}/{owner}/{name}`, as the API filters by it (`model/alice/bert`). */
  repo: string;
  kind: "" | "discussion" | "pull_request";
  /** The page, from 0. */
  p: number;
}

/** A repository as typed in the filter: `model/alice/bert`, or `alice/bert` for a model. */
function repoFilter(value: string): string {
  const trimmed = value.trim().replace(/^\/+|\/+$/g, "");
  return trimmed.split("/").length === 2 ? `model/${trimmed}` : trimmed;
}

function filtersOf(query: URLSearchParams): InboxFilters {
  const kind = query.get("kind");
  const p = Number(query.get("p") ?? "0");
  return {
    unread: query.get("unread") === "1",
    repo: repoFilter(query.get("repo") ?? ""),
    kind: kind === "discussion" || kind === "pull_request" ? kind : "",
    p: Number.isInteger(p) && p >= 0 && p <= 100000 ? p : 0,
  };
}

/** The API's filters that marking all read shares with the list (not `unread`, not the page). */
function scope(filters: { repo: string; kind: string }): Record<string, string> {
  return {
    ...(filters.repo ? { repo: filters.repo } : {}),
    ...(filters.kind ? { kind: filters.kind } : {}),
  };
}

/**
 * The notifications inbox (`GET /api/notifications`): for the signed in only, 50 a page, filtered by unread,
 * repository and kind as the API filters. A filter the API refuses (a repository not written `type/owner/name`)
 * is shown as its message.
 */
export const load: PageServerLoad = async ({ locals, url, fetch }) => {
  requireViewer(locals, `${url.pathname}${url.search}`);
  const filters = filtersOf(url.searchParams);
  const query = new URLSearchParams({ ...scope(filters), p: String(filters.p) });
  if (filters.unread) query.set("unread", "1");
  try {
    const { data } = await call<NotificationList>(fetch, `/api/notifications?${query}`);
    return { filters, inbox: data, refusal: null };
  } catch (err) {
    if (!(err instanceof ApiFailure) || err.status !== 400) return asPageError(err);
    const empty: NotificationList = { notifications: [], count: 0, unreadCount: 0, start: 0 };
    return { filters, inbox: empty, refusal: err.message };
  }
};

export const actions: Actions = {
  /** Marks one notification read. */
  read: async ({ request, fetch }) => {
    const id = String((await request.formData()).get("id") ?? "");
    if (!/^[0-9a-f]{24}$/.test(id))
      return fail(404, { action: "read", id, message: "No such notification." });
    try {
      await call(fetch, `/api/notifications/${id}/read`, { method: "POST" });
      return { action: "read", id, message: null };
    } catch (err) {
      if (!(err instanceof ApiFailure) || err.status >= 500) throw err;
      return fail(err.status, { action: "read", id, message: err.message });
    }
  },

  /** Marks read every notification the list's repository and kind filters select (all of them without). */
  readAll: async ({ request, fetch }) => {
    const form = await request.formData();
    const filters = {
      repo: repoFilter(String(form.get("repo") ?? "")),
      kind: String(form.get("kind") ?? ""),
    };
    try {
      const { data } = await call<{ marked: number }>(fetch, "/api/notifications/read-all", {
        method: "POST",
        body: JSON.stringify(scope(filters)),
      });
      return {
        action: "readAll",
        id: null,
        message: null,
        done: `${data.marked} ${data.marked === 1 ? "notification" : "notifications"} marked read.`,
      };
    } catch (err) {
      if (!(err instanceof ApiFailure) || err.status >= 500) throw err;
      return fail(err.status, { action: "readAll", id: null, message: err.message });
    }
  },
};
