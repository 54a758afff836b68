/**
 * Makes a `<details>` element behave as a menu from the keyboard and the mouse: Escape closes it and puts focus
 * back on its `<summary>`; moving focus out of it (Tab past its last item) or clicking elsewhere closes it.
 * Opening it stays native (Enter or Space on the summary), so it also works without JavaScript.
 * Use as an attachment: `<details {@attach menu}>`. See the WAI-ARIA disclosure pattern
 * (https://www.w3.org/WAI/ARIA/apg/patterns/disclosure/).
 */
export function menu(details: HTMLDetailsElement): () => void {
  const summary = details.querySelector("summary");

  function onKeydown(event: KeyboardEvent) {
    if (event.key !== "Escape" || !details.open) return;
    event.preventDefault();
    event.stopPropagation();
    details.open = false;
    summary?.focus();
  }
  function onFocusout(event: FocusEvent) {
    const next = event.relatedTarget;
    if (details.open && next instanceof Node && !details.contains(next)) details.open = false;
  }
  function onPointerdown(event: PointerEvent) {
    if (details.open && event.target instanceof Node && !details.contains(event.target)) details.open = false;
  }

  details.addEventListener("keydown", onKeydown);
  details.addEventListener("focusout", onFocusout);
  document.addEventListener("pointerdown", onPointerdown);
  return () => {
    details.removeEventListener("keydown", onKeydown);
    details.removeEventListener("focusout", onFocusout);
    document.removeEventListener("pointerdown", onPointerdown);
  };
}
