import { createHash, type Hash } from "node:crypto";
import { createReadStream } from "node:fs";
import { lstat, mkdir, open, readFile, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { TreeEntry } from "@hub/api";
import { bulkTransfer, discard } from "./bulk-transfer.js";
import { discover, type Connection } from "./connection.js";
import { HubError, NotFoundError } from "./errors.js";
import type { OnProgress } from "./file-io.js";
import { listFiles, pathsInfo, repoInfo, repoUrlPrefix, type RepoRef } from "./repos.js";

export interface DownloadParams {
  connection: Connection;
  repo: RepoRef;
  /** A branch, tag or commit; the default branch when left out. */
  revision?: string;
  /** Paths in the repository; every file when left out. */
  files?: string[];
  /**
   * The cache root (`$SERVICE_HOME/hub`), laid out like the Hugging Face cache:
   * `<type>s--<owner>--<name>/` with `blobs/<etag>`, `snapshots/<commit>/<path>`
   * (relative symlinks to the blobs) and `refs/<revision>`.
   */
  cacheDir: string;
  /** Write plain files into this folder instead of the cache; resume state lives in its `.cache/hub`. */
  localDir?: string;
  onProgress?: OnProgress;
  /** Called before each file is fetched; `resumeFrom` > 0 when an interrupted download is picked up. */
  onFileStart?: (file: { path: string; size: number; resumeFrom: number }) => void;
  signal?: AbortSignal;
}

export interface DownloadedFile {
  path: string;
  /** Where the file is now: the snapshot link, or the file in the local folder. */
  localPath: string;
  size: number;
  /** The blob was already complete on disk: nothing was fetched. */
  cached: boolean;
  /** Bytes an earlier, interrupted run had already fetched. */
  resumedFrom: number;
}

export interface DownloadResult {
  /** The commit the revision resolved to. */
  commit: string;
  /** The snapshot folder (or the local folder) holding the files. */
  root: string;
  files: DownloadedFile[];
}

/** The cache folder of a repository: `models--owner--name`, as the Hugging Face clients name it. */
export function repoCacheFolder(cacheDir: string, repo: RepoRef): string {
  return path.join(cacheDir, `${repo.type ?? "model"}s--${repo.name.replace("/", "--")}`);
}

/**
 * Downloads files of a revision through the resolve endpoint
 * (`{api_url}/{prefix}{owner}/{name}/resolve/{commit}/{path}`), streaming each to
 * an `.incomplete` file that a rerun continues with `Range: bytes=N-`, and
 * checking its SHA-256 (LFS files) or git blob id before it takes its place.
 * See hf-wire.md section 5 for the cache layout.
 */
export async function downloadFiles(params: DownloadParams): Promise<DownloadResult> {
  const { connection, repo, revision, signal } = params;
  const commit =
    revision && /^[0-9a-f]{40}$/.test(revision)
      ? revision
      : (
          await repoInfo({
            connection,
            repo,
            ...(revision ? { revision } : {}),
            ...(signal ? { signal } : {}),
          })
        ).sha;
  if (!commit)
    throw new NotFoundError(404, `${repo.name} has no commits yet.`, { code: "revision_not_found" });

  let entries: TreeEntry[];
  if (params.files && params.files.length > 0) {
    const wanted = params.files.map((file) => file.replace(/^\/+/, ""));
    entries = (
      await pathsInfo({ connection, repo, revision: commit, paths: wanted, ...(signal ? { signal } : {}) })
    ).filter((entry) => entry.type === "file");
    const missing = wanted.filter((file) => !entries.some((entry) => entry.path === file));
    if (missing.length > 0) {
      throw new NotFoundError(
        404,
        `Not in ${repo.name} at ${revision ?? "the default branch"}: ${missing.join(", ")}.`,
        {
          code: "entry_not_found",
        },
      );
    }
  } else {
    entries = [];
    for await (const entry of listFiles({
      connection,
      repo,
      revision: commit,
      recursive: true,
      ...(signal ? { signal } : {}),
    }))
      if (entry.type === "file") entries.push(entry);
  }

  const folder = repoCacheFolder(params.cacheDir, repo);
  const root = params.localDir ? path.resolve(params.localDir) : path.join(folder, "snapshots", commit);
  if (!params.localDir && revision !== commit) {
    // Without a revision, the default branch: the hub's is main.
    const ref = path.join(folder, "refs", revision ?? "main");
    await mkdir(path.dirname(ref), { recursive: true });
    await writeFile(ref, commit);
  }
  const files: DownloadedFile[] = [];
  for (const entry of entries) {
    files.push(
      params.localDir
        ? await downloadToLocalDir(params, commit, entry, root)
        : await downloadToCache(params, commit, entry, folder, root),
    );
  }
  return { commit, root, files };
}

const etagOf = (entry: TreeEntry) => entry.lfs?.oid ?? entry.oid;
const sizeOf = (entry: TreeEntry) => entry.lfs?.size ?? entry.size;

async function sizeOnDisk(file: string): Promise<number | undefined> {
  try {
    return (await stat(file)).size;
  } catch {
    return undefined;
  }
}

async function downloadToCache(
  params: DownloadParams,
  commit: string,
  entry: TreeEntry,
  folder: string,
  root: string,
): Promise<DownloadedFile> {
  const blob = path.join(folder, "blobs", etagOf(entry));
  const size = sizeOf(entry);
  const cached = (await sizeOnDisk(blob)) === size;
  let resumedFrom = 0;
  if (!cached) {
    await mkdir(path.dirname(blob), { recursive: true });
    resumedFrom = await fetchToFile(params, commit, entry, `${blob}.incomplete`);
    await rename(`${blob}.incomplete`, blob);
  }
  const link = path.join(root, ...entry.path.split("/"));
  await mkdir(path.dirname(link), { recursive: true });
  const target = path.relative(path.dirname(link), blob);
  const existing = await lstat(link).catch(() => undefined);
  if (existing) await rm(link, { force: true });
  await symlink(target, link);
  return { path: entry.path, localPath: link, size, cached, resumedFrom };
}

async function downloadToLocalDir(
  params: DownloadParams,
  commit: string,
  entry: TreeEntry,
  root: string,
): Promise<DownloadedFile> {
  const target = path.join(root, ...entry.path.split("/"));
  const state = path.join(root, ".cache", "hub", "download", ...entry.path.split("/"));
  const metadata = `${state}.metadata`;
  const size = sizeOf(entry);
  const etag = etagOf(entry);
  const known = await readFile(metadata, "utf8").catch(() => "");
  if (known.split("\n")[1] === etag && (await sizeOnDisk(target)) === size) {
    return { path: entry.path, localPath: target, size, cached: true, resumedFrom: 0 };
  }
  await mkdir(path.dirname(state), { recursive: true });
  const incomplete = `${state}.${etag}.incomplete`;
  const resumedFrom = await fetchToFile(params, commit, entry, incomplete);
  await mkdir(path.dirname(target), { recursive: true });
  await rename(incomplete, target);
  await writeFile(metadata, `${commit}\n${etag}\n${Date.now() / 1000}\n`);
  return { path: entry.path, localPath: target, size, cached: false, resumedFrom };
}

/** The hash a file's content must have: SHA-256 for LFS objects, the git blob id otherwise. */
function contentHash(entry: TreeEntry): { hash: Hash; expected: string } {
  if (entry.lfs) return { hash: createHash("sha256"), expected: entry.lfs.oid };
  const hash = createHash("sha1");
  hash.update(`blob ${entry.size}\0`);
  return { hash, expected: entry.oid };
}

/**
 * Fetches a file into `incomplete`, continuing from its current length with a
 * Range request (a 200 answer starts over). Returns the length it resumed from.
 */
async function fetchToFile(params: DownloadParams, commit: string, entry: TreeEntry, incomplete: string) {
  const { connection, repo, signal, onProgress } = params;
  const size = sizeOf(entry);
  let have = (await sizeOnDisk(incomplete)) ?? 0;
  if (have > size) {
    await rm(incomplete, { force: true });
    have = 0;
  }
  params.onFileStart?.({ path: entry.path, size, resumeFrom: have });
  const { api_url } = await discover(connection, signal);
  const url = `${api_url}/${repoUrlPrefix(repo.type)}${repo.name}/resolve/${commit}/${entry.path
    .split("/")
    .map(encodeURIComponent)
    .join("/")}`;
  const response = await bulkTransfer(connection, {
    method: "GET",
    url,
    headers: have > 0 ? { range: `bytes=${have}-` } : {},
    signal,
    accept: [416],
  });
  const { hash, expected } = contentHash(entry);
  let resumedFrom = 0;
  if (response.status === 206 && have > 0) {
    resumedFrom = have;
    for await (const chunk of createReadStream(incomplete, { end: have - 1 }) as AsyncIterable<Buffer>)
      hash.update(chunk);
  } else {
    if (response.status === 416) {
      // The partial file no longer matches what the hub serves: start over.
      await discard(response.body);
      await rm(incomplete, { force: true });
      return fetchToFile(params, commit, entry, incomplete);
    }
    have = 0;
  }
  const handle = await open(incomplete, resumedFrom > 0 ? "a" : "w");
  let written = have;
  try {
    for await (const chunk of response.body) {
      hash.update(chunk);
      await handle.write(chunk);
      written += chunk.length;
      onProgress?.({ phase: "download", path: entry.path, bytes: written, total: size });
    }
  } catch (err) {
    throw err instanceof HubError
      ? err
      : new HubError(
          0,
          `The download of ${entry.path} broke off at ${written} of ${size} bytes; run it again to resume.`,
          {
            code: "download_interrupted",
            url,
            cause: err,
          },
        );
  } finally {
    await handle.close();
  }
  if (written !== size) {
    throw new HubError(
      0,
      `The download of ${entry.path} ended at ${written} of ${size} bytes; run it again to resume.`,
      {
        code: "download_interrupted",
        url,
      },
    );
  }
  const actual = hash.digest("hex");
  if (actual !== expected) {
    await rm(incomplete, { force: true });
    throw new HubError(
      0,
      `${entry.path} arrived corrupted (hash ${actual}, expected ${expected}); run it again.`,
      {
        code: "hash_mismatch",
        url,
      },
    );
  }
  return resumedFrom;
}
