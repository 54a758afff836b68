/**
 * A textarea's value as the server writes it: HTML drops one newline right after `<textarea>`, so text that
 * starts with one gets another in the server's HTML (Svelte does this only for literal text). In the browser the
 * value is set as a property, which drops nothing.
 */
export function textareaValue(text: string, onServer: boolean): string {
  return onServer && /^\r?\n/.test(text) ? `\n${text}` : text;
}
