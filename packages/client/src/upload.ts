import { mkdir, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type {
  CommitResponse,
  LfsAction,
  LfsBatchObject,
  LfsBatchRequest,
  LfsBatchResponse,
  PreuploadResponse,
} from "@hub/api";
import { discover, send, sendJson, type Connection } from "./connection.js";
import { HubError } from "./errors.js";
import { bulkTransfer, discard } from "./bulk-transfer.js";
import { base64File, readHead, sha256File, streamFromGenerator, type OnProgress } from "./file-io.js";
import { repoApiPath, repoUrlPrefix, type RepoRef } from "./repos.js";

const LFS_JSON = "application/vnd.git-lfs+json";
/** The preupload and batch APIs take at most 1,000 entries per call. */
const BATCH = 1000;
/** Regular files travel base64-encoded inside the commit body, which the hub caps at 100 MiB: start a new commit past this. */
const COMMIT_PAYLOAD_LIMIT = 64 * 1024 * 1024;

/** A local file to upload, and its path in the repository. */
export interface UploadFile {
  /** The path in the repository, with `/` separators. */
  path: string;
  /** The file on this machine. */
  localPath: string;
}

export interface UploadFilesParams {
  connection: Connection;
  repo: RepoRef;
  files: UploadFile[];
  /** The branch to commit to; `main` when left out. */
  revision?: string;
  /** The commit's title. */
  message?: string;
  description?: string;
  /**
   * A folder where multipart uploads note the parts already sent, so an
   * interrupted upload resumes part by part. Without it, a rerun still skips
   * every object the hub already has.
   */
  stateDir?: string;
  onProgress?: OnProgress;
  signal?: AbortSignal;
}

/** What an upload did. */
export interface UploadResult {
  /** The commits made (more than one when the regular files' content exceeds one commit body). */
  commits: CommitResponse[];
  /** Files sent inside the commit. */
  regular: string[];
  /** LFS files whose content was sent. */
  lfsUploaded: string[];
  /** LFS files the hub already had: nothing was sent for them. */
  lfsSkipped: string[];
  /** Multipart parts a previous, interrupted run had already sent. */
  partsResumed: number;
}

interface Planned extends UploadFile {
  size: number;
  mode: "lfs" | "regular";
  oid?: string;
}

/**
 * Uploads files in one commit, the way the Hugging Face clients do: preupload
 * asks which files go through Git LFS; those are hashed (SHA-256, streaming),
 * offered to the LFS batch API, which leaves out the objects the hub already
 * has, and sent with the basic or multipart transfer; then an NDJSON commit
 * names them, carrying the regular files inline. Nothing is held in memory
 * whole. See hf-wire.md section 4 and https://github.com/git-lfs/git-lfs/blob/main/docs/api/batch.md.
 */
export async function uploadFiles(params: UploadFilesParams): Promise<UploadResult> {
  const { connection, repo, files, revision = "main", onProgress, signal } = params;
  const result: UploadResult = { commits: [], regular: [], lfsUploaded: [], lfsSkipped: [], partsResumed: 0 };
  if (files.length === 0) throw new TypeError("There is nothing to upload.");
  const planned: Planned[] = [];
  for (let offset = 0; offset < files.length; offset += BATCH) {
    const slice = await Promise.all(
      files.slice(offset, offset + BATCH).map(async (file) => {
        const size = (await stat(file.localPath)).size;
        return { ...file, size, sample: (await readHead(file.localPath, 512)).toString("base64") };
      }),
    );
    const answer = await sendJson<PreuploadResponse>(connection, {
      method: "POST",
      path: `${repoApiPath(repo)}/preupload/${encodeURIComponent(revision)}`,
      json: { files: slice.map(({ path, size, sample }) => ({ path, size, sample })) },
      signal,
    });
    const modes = new Map(answer.files.map((file) => [file.path, file]));
    for (const { sample: _sample, ...file } of slice) {
      const mode = modes.get(file.path);
      if (mode?.shouldIgnore) continue;
      planned.push({ ...file, mode: mode?.uploadMode ?? "regular" });
    }
  }

  const lfs = planned.filter((file) => file.mode === "lfs");
  for (const file of lfs) {
    file.oid = await sha256File(file.localPath, (bytes) =>
      onProgress?.({ phase: "hash", path: file.path, bytes, total: file.size }),
    );
  }
  for (let offset = 0; offset < lfs.length; offset += BATCH) {
    await uploadLfsObjects(params, lfs.slice(offset, offset + BATCH), result);
  }

  const groups = commitGroups(planned);
  const summary =
    params.message ?? `Upload ${planned.length === 1 ? (planned[0]?.path ?? "") : `${planned.length} files`}`;
  for (const [index, group] of groups.entries()) {
    const title = groups.length === 1 ? summary : `${summary} (part ${index + 1})`;
    const commit = await sendJson<CommitResponse>(connection, {
      method: "POST",
      path: `${repoApiPath(repo)}/commit/${encodeURIComponent(revision)}`,
      headers: { "content-type": "application/x-ndjson" },
      body: streamFromGenerator(commitBody(group, title, params.description)),
      signal,
    });
    result.commits.push(commit);
  }
  result.regular = planned.filter((file) => file.mode === "regular").map((file) => file.path);
  return result;
}

/** Splits the files into commits whose inline content stays under the hub's commit body limit. */
function commitGroups(files: Planned[]): Planned[][] {
  const groups: Planned[][] = [];
  let current: Planned[] = [];
  let payload = 0;
  for (const file of files) {
    const weight = file.mode === "regular" ? Math.ceil(file.size / 3) * 4 : 0;
    if (current.length > 0 && payload + weight > COMMIT_PAYLOAD_LIMIT) {
      groups.push(current);
      current = [];
      payload = 0;
    }
    current.push(file);
    payload += weight;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

/** The NDJSON commit body, line by line; regular files are base64-encoded as they are read. */
async function* commitBody(
  files: Planned[],
  summary: string,
  description?: string,
): AsyncGenerator<Uint8Array> {
  const encode = (text: string) => Buffer.from(text, "utf8");
  const header = { summary, ...(description ? { description } : {}) };
  yield encode(`${JSON.stringify({ key: "header", value: header })}\n`);
  for (const file of files) {
    if (file.mode === "lfs") {
      const value = { path: file.path, algo: "sha256", oid: file.oid, size: file.size };
      yield encode(`${JSON.stringify({ key: "lfsFile", value })}\n`);
      continue;
    }
    yield encode(
      `{"key":"file","value":{"path":${JSON.stringify(file.path)},"encoding":"base64","content":"`,
    );
    for await (const piece of base64File(file.localPath)) yield encode(piece);
    yield encode(`"}}\n`);
  }
}

/** Offers the objects to the LFS batch API and sends the ones the hub does not have yet. */
async function uploadLfsObjects(params: UploadFilesParams, files: Planned[], result: UploadResult) {
  const { connection, repo, revision = "main", signal } = params;
  const { api_url } = await discover(connection, signal);
  const unique = new Map<string, Planned>();
  for (const file of files) if (file.oid) unique.set(file.oid, file);
  const request: LfsBatchRequest = {
    operation: "upload",
    transfers: ["basic", "multipart"],
    objects: [...unique.values()].map((file) => ({ oid: file.oid ?? "", size: file.size })),
    ref: { name: `refs/heads/${revision}` },
    hash_algo: "sha256",
  };
  const answer = await sendJson<LfsBatchResponse>(connection, {
    method: "POST",
    path: `${api_url}/${repoUrlPrefix(repo.type)}${repo.name}.git/info/lfs/objects/batch`,
    headers: { accept: LFS_JSON, "content-type": LFS_JSON },
    body: JSON.stringify(request),
    signal,
  });
  const answered = new Map(answer.objects.map((object) => [object.oid, object]));
  for (const file of files) {
    const object = answered.get(file.oid ?? "");
    if (object?.error) {
      throw new HubError(object.error.code, `${file.path}: ${object.error.message}`, {
        code: "lfs_object_refused",
      });
    }
    if (!object?.actions?.upload) {
      result.lfsSkipped.push(file.path);
      continue;
    }
    if (unique.get(file.oid ?? "") !== file) {
      // The same content under a second path: sent once.
      result.lfsSkipped.push(file.path);
      continue;
    }
    await uploadObject(params, file, object, result);
    result.lfsUploaded.push(file.path);
  }
}

/** The parts a multipart upload has sent, kept on disk so a rerun skips them. */
interface PartsState {
  oid: string;
  size: number;
  /** When the signed URLs expire (ms since the epoch). */
  expiresAt: number;
  upload: LfsAction;
  verify?: LfsAction;
  etags: Record<string, string>;
}

async function uploadObject(
  params: UploadFilesParams,
  file: Planned,
  object: LfsBatchObject,
  result: UploadResult,
): Promise<void> {
  const { signal, onProgress, stateDir } = params;
  const connection = params.connection;
  const upload = object.actions?.upload;
  if (!upload) return;
  const progress = (bytes: number) =>
    onProgress?.({ phase: "upload", path: file.path, bytes, total: file.size });
  const chunkSize = Number(upload.header?.chunk_size);
  if (!upload.header?.chunk_size || !Number.isSafeInteger(chunkSize) || chunkSize <= 0) {
    const response = await bulkTransfer(connection, {
      method: "PUT",
      url: upload.href,
      auth: false,
      headers: { "content-type": "application/octet-stream", ...upload.header },
      file: { path: file.localPath, start: 0, end: file.size, onBytes: progress },
      signal,
    });
    await discard(response.body);
  } else {
    const statePath = stateDir ? path.join(stateDir, `${file.oid}.json`) : undefined;
    let state = statePath ? await readState(statePath, file) : undefined;
    if (state) result.partsResumed += Object.keys(state.etags).length;
    state ??= {
      oid: file.oid ?? "",
      size: file.size,
      expiresAt: Date.now() + (upload.expires_in ?? 3600) * 1000,
      upload,
      ...(object.actions?.verify ? { verify: object.actions.verify } : {}),
      etags: {},
    };
    await sendParts(params, file, state, statePath, progress);
    if (statePath) await rm(statePath, { force: true });
    if (state.verify) return verify(connection, state.verify, file, signal);
    return;
  }
  if (object.actions?.verify) await verify(connection, object.actions.verify, file, signal);
}

async function sendParts(
  params: UploadFilesParams,
  file: Planned,
  state: PartsState,
  statePath: string | undefined,
  progress: (bytes: number) => void,
): Promise<void> {
  const { connection, signal } = params;
  const header = state.upload.header ?? {};
  const chunkSize = Number(header.chunk_size);
  const count = Math.ceil(file.size / chunkSize);
  let done = Object.keys(state.etags).reduce(
    (sum, key) => sum + Math.min(chunkSize, file.size - (Number(key) - 1) * chunkSize),
    0,
  );
  progress(done);
  for (let part = 1; part <= count; part++) {
    const key = String(part).padStart(5, "0");
    if (state.etags[key]) continue;
    const href = header[key];
    if (!href)
      throw new HubError(0, `The hub gave no URL for part ${part} of ${file.path}.`, {
        code: "lfs_part_missing",
      });
    const start = (part - 1) * chunkSize;
    const end = Math.min(file.size, start + chunkSize);
    const before = done;
    const response = await bulkTransfer(connection, {
      method: "PUT",
      url: href,
      auth: false,
      file: { path: file.localPath, start, end, onBytes: (sent) => progress(before + sent) },
      signal,
    });
    await discard(response.body);
    state.etags[key] = response.headers.get("etag") ?? "";
    done += end - start;
    if (statePath) await writeState(statePath, state);
  }
  await send(connection, {
    method: "POST",
    path: state.upload.href,
    auth: false,
    headers: { accept: LFS_JSON, "content-type": LFS_JSON },
    body: JSON.stringify({
      oid: file.oid,
      parts: Object.entries(state.etags)
        .sort(([a], [b]) => Number(a) - Number(b))
        .map(([key, etag]) => ({ partNumber: Number(key), etag })),
    }),
    signal,
  });
}

async function verify(connection: Connection, action: LfsAction, file: Planned, signal?: AbortSignal) {
  await send(connection, {
    method: "POST",
    path: action.href,
    auth: false,
    headers: { accept: LFS_JSON, "content-type": LFS_JSON, ...action.header },
    body: JSON.stringify({ oid: file.oid, size: file.size }),
    signal,
  });
}

/** A saved multipart state for this object, if its URLs are still good for a while. */
async function readState(statePath: string, file: Planned): Promise<PartsState | undefined> {
  try {
    const state = JSON.parse(await readFile(statePath, "utf8")) as PartsState;
    if (state.oid === file.oid && state.size === file.size && state.expiresAt > Date.now() + 5 * 60_000)
      return state;
  } catch {
    // No state, or an unreadable one: start over.
  }
  return undefined;
}

async function writeState(statePath: string, state: PartsState): Promise<void> {
  await mkdir(path.dirname(statePath), { recursive: true, mode: 0o700 });
  await writeFile(statePath, JSON.stringify(state), { mode: 0o600 });
}

/**
 * The files under a local path, with their paths in the repository: a file
 * goes to `pathInRepo` (default: its name), a folder's files under `pathInRepo`
 * (default: the root). `.git` folders are left out.
 */
export async function collectFiles(localPath: string, pathInRepo?: string): Promise<UploadFile[]> {
  const info = await stat(localPath);
  const clean = (value: string) => value.replace(/\\/g, "/").replace(/^\/+|\/+$/g, "");
  if (info.isFile()) return [{ localPath, path: clean(pathInRepo || path.basename(localPath)) }];
  const base = clean(pathInRepo ?? "");
  const found: UploadFile[] = [];
  const walk = async (dir: string, prefix: string) => {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      // .git, and the download state `hub download --local-dir` keeps in .cache/hub.
      if (entry.name === ".git" || (prefix === ".cache" && entry.name === "hub")) continue;
      const full = path.join(dir, entry.name);
      const inRepo = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(full, inRepo);
      else if (entry.isFile()) found.push({ localPath: full, path: base ? `${base}/${inRepo}` : inRepo });
    }
  };
  await walk(localPath, "");
  return found;
}
