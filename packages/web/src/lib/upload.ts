import type {
  CommitResponse,
  LfsAction,
  LfsBatchRequest,
  LfsBatchResponse,
  PreuploadResponse,
} from "@hub/api";

/**
 * Uploading from the browser, the way the hub's own SDK (packages/client/src/upload.ts) and the Hugging
 * Face clients do: preupload says which files go through Git LFS; those are hashed (SHA-256), offered to
 * the LFS batch API and sent with the basic transfer (then verified); one NDJSON commit names them and
 * carries the other files base64-encoded. Every write carries the session's request-forgery token (the
 * `hub_csrf` cookie's value, as X-CSRF-Token). Runs in the browser only.
 */

const LFS_JSON = "application/vnd.git-lfs+json";
const CSRF_COOKIE = "hub_csrf";

/** Where an upload stands, for a progress bar: bytes done of bytes to do, and the step. */
export interface UploadProgress {
  phase: "checking" | "hashing" | "uploading" | "committing" | "done";
  loaded: number;
  total: number;
  /** The file being worked on, when there is one. */
  path?: string;
}

export interface BrowserUploadParams {
  /** `/api/models/alice/gpt`. */
  api: string;
  /** `/alice/gpt`, `/datasets/alice/data`: the git remote's path without `.git`. */
  repoHref: string;
  /** The branch to commit to. */
  branch: string;
  /**
   * Open a new pull request against `branch` holding the commit instead of moving the branch (`create_pr=1` on
   * preupload and commit, as the clients send it); what a signed-in viewer who may not write can do.
   */
  createPr?: boolean;
  files: Array<{ path: string; file: File }>;
  summary: string;
  description?: string;
  onProgress?: (progress: UploadProgress) => void;
}

/** A refusal from the hub, with its message for the page. */
export class UploadError extends Error {}

/** The session's request-forgery token, from its cookie. */
export function csrfToken(): string {
  for (const part of document.cookie.split(";")) {
    const [name, ...rest] = part.trim().split("=");
    if (name === CSRF_COOKIE) return decodeURIComponent(rest.join("="));
  }
  return "";
}

/** The message of an API error body (`{ error }`) or an LFS one (`{ message }`). */
async function failure(response: Response, what: string): Promise<UploadError> {
  const body = (await response.json().catch(() => null)) as { error?: string; message?: string } | null;
  return new UploadError(`${what}: ${body?.error ?? body?.message ?? `the hub answered ${response.status}`}`);
}

async function post<T>(url: string, body: unknown, what: string, type = "application/json"): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": type, accept: type, "x-csrf-token": csrfToken() },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw await failure(response, what);
  return (await response.json()) as T;
}

/** A transfer URL on this page's origin: the hub signs them with its public URL, which may name another host. */
function onThisOrigin(href: string): string {
  const url = new URL(href, window.location.href);
  if (url.origin === window.location.origin || !url.pathname.startsWith("/lfs/")) return url.href;
  return `${window.location.origin}${url.pathname}${url.search}`;
}

/** Sends a body with XMLHttpRequest, which reports upload progress (fetch does not). */
function send(
  method: string,
  url: string,
  headers: Record<string, string>,
  body: Blob | string,
  onBytes: (sent: number) => void,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, url);
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (event) => onBytes(event.loaded);
    xhr.onload = () => resolve({ status: xhr.status, text: xhr.responseText });
    xhr.onerror = () => reject(new UploadError("The connection to the hub failed; try again."));
    xhr.onabort = () => reject(new UploadError("The upload was stopped."));
    xhr.send(body);
  });
}

/** The message of an error body read as text. */
function messageOf(text: string, status: number): string {
  try {
    const body = JSON.parse(text) as { error?: string; message?: string };
    return body.error ?? body.message ?? `the hub answered ${status}`;
  } catch {
    return `the hub answered ${status}`;
  }
}

/** How much of a file is read and hashed at a time, so a file of any size never sits in memory whole. */
const HASH_CHUNK = 4 * 1024 * 1024;

/**
 * SHA-256 of a file, in hex, read a slice at a time; `onBytes` hears how much is hashed. It uses
 * `@noble/hashes` rather than Web Crypto, which browsers offer only in secure contexts (https, localhost):
 * a hub on a plain-http address must take uploads too, and Web Crypto cannot hash a stream anyway. The
 * module is loaded the first time a large file is hashed, not with the page.
 */
async function sha256(file: File, onBytes: (hashed: number) => void): Promise<string> {
  const { sha256: algorithm } = await import("@noble/hashes/sha2.js");
  const hash = algorithm.create();
  for (let offset = 0; offset < file.size; offset += HASH_CHUNK) {
    const end = Math.min(offset + HASH_CHUNK, file.size);
    hash.update(new Uint8Array(await file.slice(offset, end).arrayBuffer()));
    onBytes(end);
  }
  return [...hash.digest()].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** Base64 of a file's bytes, a slice at a time (String.fromCharCode takes only so many arguments). */
async function base64(file: File): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = "";
  for (let offset = 0; offset < bytes.length; offset += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(offset, offset + 0x8000));
  return btoa(binary);
}

/** Uploads the files in one commit on `branch` (or in a new pull request against it) and answers the commit. */
export async function uploadFiles(params: BrowserUploadParams): Promise<CommitResponse> {
  const { api, repoHref, branch, files, onProgress } = params;
  const branchPath = encodeURIComponent(branch);
  const query = params.createPr ? "?create_pr=1" : "";
  const total = files.reduce((sum, { file }) => sum + file.size, 0);
  let loaded = 0;
  const report = (phase: UploadProgress["phase"], done: number, path?: string, of = total) =>
    onProgress?.({ phase, loaded: done, total: of, ...(path ? { path } : {}) });
  report("checking", 0);

  const samples = await Promise.all(
    files.map(async ({ path, file }) => ({
      path,
      size: file.size,
      sample: await base64(new File([file.slice(0, 512)], "sample")),
    })),
  );
  const modes = await post<PreuploadResponse>(
    `${api}/preupload/${branchPath}${query}`,
    { files: samples },
    "Checking the files",
  );
  const lfsPaths = new Set(modes.files.filter((f) => f.uploadMode === "lfs").map((f) => f.path));
  const ignored = new Set(modes.files.filter((f) => f.shouldIgnore).map((f) => f.path));
  const kept = files.filter(({ path }) => !ignored.has(path));
  const lfs: Array<{ path: string; file: File; oid: string }> = [];
  const toHash = kept.filter(({ path }) => lfsPaths.has(path));
  // Hashing reads every large file once before anything is sent: its progress is its own, over their bytes.
  const hashTotal = toHash.reduce((sum, { file }) => sum + file.size, 0);
  let hashed = 0;
  for (const { path, file } of toHash) {
    report("hashing", hashed, path, hashTotal);
    const oid = await sha256(file, (bytes) => report("hashing", hashed + bytes, path, hashTotal));
    hashed += file.size;
    lfs.push({ path, file, oid });
  }

  if (lfs.length > 0) {
    const unique = new Map(lfs.map((entry) => [entry.oid, entry]));
    const request: LfsBatchRequest = {
      operation: "upload",
      transfers: ["basic"],
      objects: [...unique.values()].map(({ oid, file }) => ({ oid, size: file.size })),
      // A pull request's ref does not exist until its commit does: its objects are sent without one.
      ...(params.createPr ? {} : { ref: { name: `refs/heads/${branch}` } }),
      hash_algo: "sha256",
    };
    const answer = await post<LfsBatchResponse>(
      `${repoHref}.git/info/lfs/objects/batch`,
      request,
      "Preparing the large files",
      LFS_JSON,
    );
    for (const object of answer.objects) {
      const entry = unique.get(object.oid);
      if (!entry) continue;
      if (object.error) throw new UploadError(`${entry.path}: ${object.error.message}`);
      const upload = object.actions?.upload;
      if (upload) {
        const before = loaded;
        const sent = await send(
          "PUT",
          onThisOrigin(upload.href),
          { "content-type": "application/octet-stream", ...upload.header },
          entry.file,
          (bytes) => report("uploading", before + bytes, entry.path),
        );
        if (sent.status < 200 || sent.status >= 300)
          throw new UploadError(`Sending ${entry.path}: ${messageOf(sent.text, sent.status)}`);
        const verify: LfsAction | undefined = object.actions?.verify;
        if (verify) {
          const response = await fetch(onThisOrigin(verify.href), {
            method: "POST",
            headers: { "content-type": LFS_JSON, accept: LFS_JSON, ...verify.header },
            body: JSON.stringify({ oid: entry.oid, size: entry.file.size }),
          });
          if (!response.ok) throw await failure(response, `Checking ${entry.path}`);
        }
      }
      loaded += entry.file.size;
      report("uploading", loaded, entry.path);
    }
    // The same content under a second path was sent once.
    for (const entry of lfs) if (unique.get(entry.oid) !== entry) loaded += entry.file.size;
  }

  report("committing", loaded);
  const header = {
    summary: params.summary,
    ...(params.description ? { description: params.description } : {}),
  };
  const lines = [JSON.stringify({ key: "header", value: header })];
  for (const { path, file } of kept) {
    const entry = lfs.find((candidate) => candidate.path === path);
    lines.push(
      entry
        ? JSON.stringify({ key: "lfsFile", value: { path, algo: "sha256", oid: entry.oid, size: file.size } })
        : JSON.stringify({ key: "file", value: { path, content: await base64(file), encoding: "base64" } }),
    );
  }
  const body = new Blob([lines.join("\n") + "\n"], { type: "application/x-ndjson" });
  const before = loaded;
  const regularBytes = total - loaded;
  const committed = await send(
    "POST",
    `${api}/commit/${branchPath}${query}`,
    { "content-type": "application/x-ndjson", accept: "application/json", "x-csrf-token": csrfToken() },
    body,
    (bytes) => report("committing", before + Math.min(regularBytes, (bytes / body.size) * regularBytes)),
  );
  if (committed.status !== 200)
    throw new UploadError(`Committing: ${messageOf(committed.text, committed.status)}`);
  report("done", total);
  return JSON.parse(committed.text) as CommitResponse;
}
