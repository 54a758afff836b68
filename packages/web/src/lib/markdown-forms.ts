import { applyAction } from "$app/forms";
import type { SubmitFunction } from "@sveltejs/kit";

/**
 * `use:enhance` for forms with a Markdown box: a Preview (`?/preview`) only shows the server's rendering, so
 * it neither reloads the page's data nor clears what was typed; every other action updates the page as usual.
 */
export const keepTyping: SubmitFunction = ({ action }) => {
  const previewing = action.search === "?/preview";
  return async ({ result, update }) => {
    if (previewing && (result.type === "success" || result.type === "failure")) await applyAction(result);
    else await update();
  };
};
