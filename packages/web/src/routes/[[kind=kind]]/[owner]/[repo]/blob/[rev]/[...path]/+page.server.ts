import { error, redirect } from "@sveltejs/kit";
import type { TreeEntry } from "@hub/api";
import { call, download } from "$lib/server/api";
import { highlightFile, isProbablyText } from "$lib/server/render";
import { resolveHref } from "$lib/server/repo";
import { encodePath } from "$lib/repos";
import type { PageServerLoad } from "./$types";

/** Text over this size is cut: the page shows its first lines and offers the whole file as a download. */
const TEXT_CAP = 512 * 1024;
const IMAGES = /\.(png|jpe?g|gif|webp|avif|bmp)$/i;

/** One file at a revision: what it is (paths-info), then its text highlighted, an image, or its facts. */
export const load: PageServerLoad = async ({ parent, params, fetch }) => {
  const { address } = await parent();
  const { data } = await call<TreeEntry[]>(
    fetch,
    `${address.api}/paths-info/${encodeURIComponent(params.rev)}`,
    {
      method: "POST",
      body: JSON.stringify({ paths: [params.path] }),
    },
  ).catch(() => error(404, { message: "Not found" }));
  const entry = data[0];
  if (!entry) error(404, { message: "Not found" });
  if (entry.type === "directory") {
    redirect(303, `${address.href}/tree/${encodeURIComponent(params.rev)}/${encodePath(params.path)}`);
  }
  const downloadHref = resolveHref(address, params.rev, params.path);
  const size = entry.lfs?.size ?? entry.size;
  const facts = {
    rev: params.rev,
    path: params.path,
    size,
    lfs: entry.lfs ?? null,
    oid: entry.oid,
    downloadHref,
  };
  if (IMAGES.test(params.path) && size <= 20 * 1024 * 1024)
    return { ...facts, view: "image" as const, lines: [], cut: false };
  if (entry.lfs) return { ...facts, view: "facts" as const, lines: [], cut: false };
  const cut = size > TEXT_CAP;
  const bytes = await download(fetch, downloadHref, cut ? `bytes=0-${TEXT_CAP - 1}` : undefined);
  if (!bytes) error(404, { message: "Not found" });
  if (!isProbablyText(bytes)) return { ...facts, view: "facts" as const, lines: [], cut: false };
  const text = new TextDecoder().decode(bytes);
  // A cut file ends at its last whole line.
  const shown = cut ? text.slice(0, Math.max(0, text.lastIndexOf("\n") + 1)) : text;
  return { ...facts, view: "text" as const, lines: highlightFile(shown, params.path), cut };
};
