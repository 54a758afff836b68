import { error } from "@sveltejs/kit";
import { ApiFailure } from "./api";
import { needsReauthentication } from "./reauth";

/** An organization's place in the Hub API (`/api/organizations/{handle}`), where its settings live too. */
export function orgApi(org: string): string {
  return `/api/organizations/${encodeURIComponent(org)}`;
}

/**
 * Stops an organization settings page when the API refuses its read: the API's own message becomes the
 * page (a 404 stays "not found"), never its JSON. Anything else is the hub's own failure.
 */
export function refusePage(err: unknown): never {
  if (err instanceof ApiFailure) {
    if (err.status === 404) error(404, { message: "Not found", code: err.code });
    if (err.status < 500) error(err.status, { message: err.message, code: err.code });
  }
  throw err;
}

/** What a form action answers for an API refusal: its status, message and field, or the reauthentication prompt. */
export interface Refusal {
  status: number;
  message: string;
  field: string | undefined;
  /** The API asked for the password again (`reauthentication_required`): the page shows the prompt. */
  reauth: boolean;
}

/**
 * Reads an API refusal for a form action to return with `fail(refusal.status, …)`: the API's own message and
 * field, and whether it asked for a fresh password. The hub's own failures are thrown.
 */
export function refusal(err: unknown): Refusal {
  if (err instanceof ApiFailure && err.status < 500)
    return { status: err.status, message: err.message, field: err.field, reauth: needsReauthentication(err) };
  throw err;
}
