import { rememberTyped } from "$lib/typed-before-start";

/** Runs once, before the page hydrates: notes what was typed into the server's HTML meanwhile. */
export const init = (): void => {
  rememberTyped();
};
