import { WEBHOOK_DOMAINS, type WatchedItem, type WebhookDomain } from "@hub/api";
import { parseWatched } from "$lib/webhooks";

/** What a webhook form holds, kept as typed so a refused form comes back filled in. */
export interface WebhookFormValues {
  url: string;
  watched: string;
  domains: string[];
  description: string;
}

/** The form's fields as the user sent them. */
export function webhookValues(form: FormData): WebhookFormValues {
  return {
    url: String(form.get("url") ?? "").trim(),
    watched: String(form.get("watched") ?? ""),
    domains: form.getAll("domains").map(String),
    description: String(form.get("description") ?? "").trim(),
  };
}

/**
 * Reads the watched lines as the site's other webhook forms do (`$lib/webhooks`: `type name` a line, a bare
 * `owner/name` is a model), or the message naming the first line it cannot read.
 */
export function watchedItems(text: string): WatchedItem[] | string {
  const parsed = parseWatched(text);
  if ("bad" in parsed)
    return `Watched: cannot read “${parsed.bad}”; write one “type name” a line, e.g. “org acme” or “model acme/bert”.`;
  if (parsed.items.length === 0) return "Watched: name at least one repository or namespace.";
  return parsed.items;
}

/** The chosen event scopes, in the API's words; none chosen means every repository event (`repo`). */
export function domainsOf(values: WebhookFormValues): WebhookDomain[] {
  const chosen = WEBHOOK_DOMAINS.filter((domain) => values.domains.includes(domain));
  return chosen.length > 0 ? chosen : ["repo"];
}

/** The scopes a form offers, with what each one hears. */
export const DOMAIN_CHOICES: { value: WebhookDomain; label: string }[] = [
  { value: "repo", label: "Every repository event (created, deleted, moved, content, settings)" },
  { value: "repo.content", label: "Content: pushes, commits, branches and tags" },
  { value: "repo.config", label: "Settings: visibility and force-push protection" },
];
