import { WEBHOOK_DOMAINS, type WatchedItem, type WebhookDomain } from "@hub/api";
import { ApiFailure, call } from "./api";

type Fetch = typeof globalThis.fetch;

/** What a webhook form holds, kept as typed so a refused form comes back filled in. */
export interface WebhookFormValues {
  url: string;
  watched: string;
  domains: string[];
  description: string;
}

/** A watched item as the form writes it: a handle, `owner/name` (a model), `datasets/…`, `spaces/…`, `mcp/…`. */
export function watchedLine(item: WatchedItem): string {
  if (item.type === "user" || item.type === "org" || item.type === "model") return item.name;
  return `${item.type === "mcp" ? "mcp" : `${item.type}s`}/${item.name}`;
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
 * Reads the watched lines into the API's items. A bare handle is a namespace: the API is asked whether an
 * organization has it (`GET /api/organizations/{handle}`), otherwise it is a user's.
 */
export async function watchedItems(fetch: Fetch, text: string): Promise<WatchedItem[] | string> {
  const items: WatchedItem[] = [];
  for (const line of text
    .split(/[\n,]+/)
    .map((l) => l.trim())
    .filter(Boolean)) {
    const parts = line.split("/");
    if (parts.length === 1) {
      items.push({ type: (await isOrganization(fetch, line)) ? "org" : "user", name: line });
    } else if (parts.length === 2) {
      items.push({ type: "model", name: line });
    } else if (parts.length === 3 && ["datasets", "spaces", "mcp"].includes(parts[0] ?? "")) {
      const type = parts[0] === "datasets" ? "dataset" : parts[0] === "spaces" ? "space" : "mcp";
      items.push({ type, name: parts.slice(1).join("/") });
    } else {
      return `Watched: "${line}" is not a handle, owner/name, datasets/owner/name or spaces/owner/name.`;
    }
  }
  if (items.length === 0) return "Watched: name at least one repository or namespace.";
  return items;
}

async function isOrganization(fetch: Fetch, handle: string): Promise<boolean> {
  try {
    await call(fetch, `/api/organizations/${encodeURIComponent(handle)}`);
    return true;
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 404) return false;
    throw err;
  }
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
