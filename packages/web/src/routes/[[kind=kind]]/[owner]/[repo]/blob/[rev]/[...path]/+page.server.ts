import { error, redirect } from "@sveltejs/kit";
import type { TreeEntry } from "@hub/api";
import { call, download } from "$lib/server/api";
import { highlightFile, isProbablyText } from "$lib/server/render";
import { resolveHref } from "$lib/server/repo";
import { encodePath } from "$lib/repos";
import type { PageServerLoad } from "./$types";

/** Text over this size is not shown in the page; it is offered as a download. */
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
    return { ...facts, view: "image" as const, lines: [] };
  if (entry.lfs || size > TEXT_CAP) return { ...facts, view: "facts" as const, lines: [] };
  const bytes = await download(fetch, downloadHref);
  if (!bytes) error(404, { message: "Not found" });
  if (!isProbablyText(bytes)) return { ...facts, view: "facts" as const, lines: [] };
  return {
    ...facts,
    view: "text" as const,
    lines: highlightFile(new TextDecoder().decode(bytes), params.path),
  };
};
