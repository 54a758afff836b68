import { vitePreprocess } from "@sveltejs/vite-plugin-svelte";
import hubAdapter from "./adapter.js";

/** @type {import('@sveltejs/kit').Config} */
export default {
  preprocess: vitePreprocess(),
  kit: {
    adapter: hubAdapter(),
    // SvelteKit's own start-up script is the one inline script; it is allowed by its hash, nothing else is.
    csp: {
      mode: "hash",
      directives: {
        "default-src": ["self"],
        "script-src": ["self"],
        "style-src": ["self", "unsafe-inline"],
        "img-src": ["self", "data:"],
        "connect-src": ["self"],
        "font-src": ["self"],
        "object-src": ["none"],
        "base-uri": ["none"],
        "form-action": ["self"],
        "frame-ancestors": ["none"],
      },
    },
    appDir: "_app",
    // Absolute asset paths, so a page at any depth and its error page load the same files.
    paths: { relative: false },
  },
};
