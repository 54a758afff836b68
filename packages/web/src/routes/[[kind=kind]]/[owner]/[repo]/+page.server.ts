import { download } from "$lib/server/api";
import { renderCard } from "$lib/server/render";
import { resolveHref } from "$lib/server/repo";
import type { PageServerLoad } from "./$types";

/** The card tab: `README.md` at the default branch, rendered, its front matter as metadata. */
export const load: PageServerLoad = async ({ parent, fetch }) => {
  const { address, repo, defaultBranch } = await parent();
  const rev = repo.sha ?? defaultBranch;
  const bytes = repo.sha === null ? null : await download(fetch, resolveHref(address, rev, "README.md"));
  const card =
    bytes === null
      ? null
      : renderCard(new TextDecoder().decode(bytes), {
          blobBase: `${address.href}/blob/${encodeURIComponent(defaultBranch)}`,
          rawBase: `${address.href}/resolve/${encodeURIComponent(defaultBranch)}`,
        });
  return { card, description: card ? summaryOf(card.html) : null };
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
