import { error } from "@sveltejs/kit";
import type { PageServerLoad } from "./$types";

/**
 * The page the hub shows for a form post to a page over the 1 MiB pages take (`FORM_BODY_LIMIT` in the
 * server's app/web.ts), which the hub refuses before reading it: always a 413, rendered by this folder's
 * error page with the way on. `?from=` is the path the form was posted to.
 */
export const load: PageServerLoad = () => {
  error(413, {
    message: "What the form sent is larger than the 1 MiB a page accepts, so nothing was saved.",
    code: "request_too_large",
  });
};
