import { fail, redirect } from "@sveltejs/kit";
import type { Collection, RepoInfoFields, RepoListItem } from "@hub/api";
import { ApiFailure, call, download } from "$lib/server/api";
import { renderCard } from "$lib/server/render";
import { addressOf, resolveHref, type RepoAddress } from "$lib/server/repo";
import { safeNext } from "$lib/server/redirect";
import type { Actions, PageServerLoad } from "./$types";

type Fetch = typeof globalThis.fetch;

/** What discovery knows of the repository, for the card tab's side column. */
const DISCOVERY_FIELDS = [
  "downloads",
  "safetensors",
  "baseModels",
  "childrenModelCount",
  "cardProblems",
] as const;

/** The model tree's relations, the tag each child carries (`base_model:{relation}:{id}`) and their names. */
const RELATIONS = [
  ["finetune", "fine-tune", "fine-tunes"],
  ["adapter", "adapter", "adapters"],
  ["quantized", "quantization", "quantizations"],
  ["merge", "merge", "merges"],
] as const;

/** The children of a model by relation: how many the listing gives (at most 100, then "100+"). */
async function childrenOf(fetch: Fetch, id: string) {
  const counts = await Promise.all(
    RELATIONS.map(async ([relation, one, many]) => {
      const filter = `base_model:${relation}:${id}`;
      const query = new URLSearchParams({ filter, limit: "100", "expand[]": "author" });
      const { data, headers } = await call<RepoListItem[]>(fetch, `/api/models?${query}`);
      const more = /rel="next"/.test(headers.get("link") ?? "");
      return { relation, count: data.length, more, label: data.length === 1 ? one : many, filter };
    }),
  );
  return counts.filter((child) => child.count > 0);
}

/** The collections the viewer may see that hold this repository (`GET /api/collections?item=`). */
async function collectionsHolding(fetch: Fetch, address: RepoAddress) {
  const query = new URLSearchParams({ item: `${address.kind}s/${address.id}`, limit: "10" });
  const { data } = await call<Collection[]>(fetch, `/api/collections?${query}`);
  return data.map((collection) => ({ slug: collection.slug, title: collection.title }));
}

/** The viewer's own collections and their organizations', which "Add to collection" offers. */
async function writableCollections(fetch: Fetch, owners: string[]) {
  const query = new URLSearchParams({ limit: "100" });
  for (const owner of owners) query.append("owner", owner);
  const { data } = await call<Collection[]>(fetch, `/api/collections?${query}`);
  return data.map((collection) => ({ slug: collection.slug, title: collection.title }));
}

/** The card tab: `README.md` at the default branch, rendered, its front matter as metadata. */
export const load: PageServerLoad = async ({ parent, fetch, locals }) => {
  const { address, repo, defaultBranch } = await parent();
  const rev = repo.sha ?? defaultBranch;
  const viewer = locals.viewer;
  const [bytes, discovery, collections, mine] = await Promise.all([
    repo.sha === null ? null : download(fetch, resolveHref(address, rev, "README.md")),
    call<RepoInfoFields>(
      fetch,
      `${address.api}?${DISCOVERY_FIELDS.filter((field) => address.kind === "model" || field !== "baseModels")
        .map((field) => `expand[]=${field}`)
        .join("&")}`,
    ).then(({ data }) => data),
    collectionsHolding(fetch, address),
    viewer ? writableCollections(fetch, [viewer.name, ...viewer.orgs]) : Promise.resolve([]),
  ]);
  const children =
    address.kind === "model" && (discovery.childrenModelCount ?? 0) > 0
      ? await childrenOf(fetch, address.id)
      : [];
  const card =
    bytes === null
      ? null
      : renderCard(new TextDecoder().decode(bytes), {
          blobBase: `${address.href}/blob/${encodeURIComponent(defaultBranch)}`,
          rawBase: `${address.href}/resolve/${encodeURIComponent(defaultBranch)}`,
        });
  const held = new Set(collections.map((collection) => collection.slug));
  return {
    card,
    description: card ? summaryOf(card.html) : null,
    downloads: discovery.downloads ?? null,
    safetensors: discovery.safetensors ?? null,
    baseModels: discovery.baseModels ?? null,
    children,
    cardProblems: discovery.cardProblems ?? [],
    collections,
    /** The viewer's collections that do not hold it yet. */
    addable: mine.filter((collection) => !held.has(collection.slug)),
  };
};

/** Back to the page the form was sent from, when it is one of this repository's. */
function back(form: FormData, address: RepoAddress): never {
  const next = safeNext(String(form.get("next") ?? ""));
  redirect(303, next === address.href || next.startsWith(`${address.href}/`) ? next : address.href);
}

export const actions: Actions = {
  /** Likes or unlikes the repository (`POST`/`DELETE …/like`), then goes back to the page it was sent from. */
  like: async ({ request, fetch, params, locals }) => {
    const address = addressOf(params);
    const form = await request.formData();
    if (!locals.viewer) redirect(303, `/login?next=${encodeURIComponent(address.href)}`);
    try {
      await call(fetch, `${address.api}/like`, { method: form.get("liked") === "true" ? "DELETE" : "POST" });
    } catch (err) {
      if (err instanceof ApiFailure && err.status < 500) return fail(err.status, { message: err.message });
      throw err;
    }
    back(form, address);
  },

  /** Adds the repository to one of the viewer's collections (`POST /api/collections/{slug}/items`). */
  addToCollection: async ({ request, fetch, params }) => {
    const address = addressOf(params);
    const form = await request.formData();
    const slug = String(form.get("collection") ?? "");
    const note = String(form.get("note") ?? "").trim();
    if (!slug) return fail(400, { message: "Choose a collection." });
    try {
      await call(fetch, `/api/collections/${slug.split("/").map(encodeURIComponent).join("/")}/items`, {
        method: "POST",
        body: JSON.stringify({ item: { type: address.kind, id: address.id }, ...(note ? { note } : {}) }),
      });
    } catch (err) {
      if (err instanceof ApiFailure && err.status < 500) return fail(err.status, { message: err.message });
      throw err;
    }
    return { added: slug };
  },
};

/** The card's first paragraph as plain text, for link previews (`og:description`). */
function summaryOf(html: string): string | null {
  const paragraph = /<p>([\s\S]*?)<\/p>/.exec(html)?.[1];
  if (!paragraph) return null;
  const text = paragraph
    .replace(/<img[^>]*\balt="([^"]*)"[^>]*>/g, "$1")
    .replace(/<[^>]*>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();
  return text.length > 200 ? `${text.slice(0, 199)}…` : text || null;
}
