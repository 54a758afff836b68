import { fail } from "@sveltejs/kit";
import { ApiFailure } from "./api";

/**
 * A form action's answer to an API refusal: the API's own message (and the field it names) with what the
 * person typed, so the form comes back filled in; a server error is thrown on to the error page.
 */
export function refused<V = never>(err: unknown, values: V | null = null) {
  if (err instanceof ApiFailure && err.status < 500) {
    return fail(err.status, { message: err.message, field: err.field ?? null, values });
  }
  throw err;
}
