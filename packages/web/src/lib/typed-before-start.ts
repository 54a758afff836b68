/**
 * What a person typed before the page's scripts took over. The server's HTML is usable at once, but when the
 * page hydrates, Svelte writes each control's `value={…}` into it, over whatever was typed meanwhile (on a slow
 * machine or link that is seconds of typing). `rememberTyped` runs before hydration (hooks.client.ts `init`),
 * notes every control whose state differs from what the server sent, and goes on noting what is typed until
 * `restoreTyped` runs once the page is mounted (the root layout) and puts each one back, firing `input` and
 * `change` so the page's own state follows.
 */

type Control = HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;

/** The value or checked state typed, or the selected option values of a select. */
type State = string | boolean | string[];

/** Controls whose content is not the person's text, or must never be written back. */
const SKIPPED = new Set(["hidden", "password", "file", "submit", "button", "reset", "image"]);

let remembered = new Map<Control, State>();

const selected = (select: HTMLSelectElement) =>
  Array.from(select.options)
    .filter((option) => option.selected)
    .map((option) => option.value);

/** The control's state, if it differs from what the server's HTML gave it. */
function typedState(control: Control): State | null {
  if (control instanceof HTMLSelectElement) {
    const changed = Array.from(control.options).some((option) => option.selected !== option.defaultSelected);
    return changed ? selected(control) : null;
  }
  if (control instanceof HTMLInputElement && (control.type === "checkbox" || control.type === "radio"))
    return control.checked !== control.defaultChecked ? control.checked : null;
  return control.value !== control.defaultValue ? control.value : null;
}

const isControl = (target: EventTarget | null): target is Control =>
  (target instanceof HTMLInputElement && !SKIPPED.has(target.type)) ||
  target instanceof HTMLTextAreaElement ||
  target instanceof HTMLSelectElement;

/** Notes a control's state as the person leaves it (an event seen before the page is live). */
const note = (event: Event) => {
  if (!isControl(event.target)) return;
  const state = typedState(event.target);
  if (state === null) remembered.delete(event.target);
  else remembered.set(event.target, state);
};

/** Notes what was typed into the page so far, and what is typed from now on; call it before hydration. */
export function rememberTyped(root: Document = document): void {
  remembered = new Map();
  for (const control of root.querySelectorAll("input, textarea, select")) {
    if (!isControl(control)) continue;
    const state = typedState(control);
    if (state !== null) remembered.set(control, state);
  }
  root.addEventListener("input", note, true);
  root.addEventListener("change", note, true);
}

/** Puts back what `rememberTyped` noted, where hydration overwrote it; call it once the page is mounted. */
export function restoreTyped(root: Document = document): void {
  root.removeEventListener("input", note, true);
  root.removeEventListener("change", note, true);
  const typed = remembered;
  remembered = new Map();
  for (const [control, state] of typed) {
    if (!control.isConnected) continue;
    if (Array.isArray(state) && control instanceof HTMLSelectElement) {
      if (selected(control).join("\u0000") === state.join("\u0000")) continue;
      for (const option of control.options) option.selected = state.includes(option.value);
    } else if (typeof state === "boolean" && control instanceof HTMLInputElement) {
      if (control.checked === state) continue;
      control.checked = state;
    } else if (typeof state === "string") {
      if (control.value === state) continue;
      control.value = state;
    } else continue;
    control.dispatchEvent(new Event("input", { bubbles: true }));
    control.dispatchEvent(new Event("change", { bubbles: true }));
  }
}
