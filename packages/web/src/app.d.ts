// See https://svelte.dev/docs/kit/types#app.d.ts

import type { Viewer } from "$lib/types";

declare global {
  namespace App {
    interface Platform {
      /**
       * Answers a request to the hub's public API (or a download path) in-process, exactly as the listener
       * would answer it over the network: same pipeline, same authorization, the browser's own cookie.
       */
      hub(request: Request): Promise<Response>;
    }
    interface Locals {
      /** Who is signed in, from `GET /api/whoami-v2`, or null. */
      viewer: Viewer | null;
      /** An API failure no page handled, whose status (and Retry-After) the error page's response takes. */
      failure?: { status: number; message: string; retryAfter?: string };
    }
    interface Error {
      message: string;
      /** The API's error code, when the failure came from the API. */
      code?: string;
      /** The status the error page shows when it differs from the one SvelteKit rendered with (an API failure). */
      status?: number;
    }
  }
}

export {};
