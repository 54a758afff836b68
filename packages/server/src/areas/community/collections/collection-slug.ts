/**
 * Collection slugs as the Hugging Face Hub builds them:
 * `{owner}/{slugified title}-{id}`, the id being 24 hexadecimal digits. The
 * id alone names the collection, so a slug made before a rename (or with any
 * title part) still finds it.
 */

/** The title as a slug's middle: lower case, ASCII letters and digits joined by hyphens. */
export function slugifyTitle(title: string): string {
  const slug = title
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60)
    .replace(/-+$/, "");
  return slug || "collection";
}

export function collectionSlug(ownerHandle: string, title: string, id: string): string {
  return `${ownerHandle}/${slugifyTitle(title)}-${id}`;
}

/** The id a slug's last segment ends with (or a bare id), or null when it names none. */
export function collectionIdOf(slugTail: string): string | null {
  return /(?:^|-)([0-9a-f]{24})$/.exec(slugTail)?.[1] ?? null;
}
