import type { TreeEntry } from "../../../git/repo-files.js";
import { GgufTruncated, parseGgufHeader, type GgufFacts } from "./gguf-header.js";

/**
 * Facts the files of a repository's default branch tell about it: its total
 * size, whether it holds GGUF or ONNX weights, the parameters its safetensors
 * files hold by dtype (read from each file's header, never its tensors), what
 * the header of its first GGUF file says, and the architecture its
 * config.json names.
 */

export interface FileFacts {
  totalSize: number;
  gguf: boolean;
  /** The header of the first GGUF file (by path): parameters, architecture, context length, template, tokens. */
  ggufFacts: GgufFacts | null;
  onnx: boolean;
  /** `{parameters: {dtype: count}, total}` as the Hugging Face Hub reports it; null without safetensors files. */
  safetensors: { parameters: Record<string, number>; total: number } | null;
  /** `architectures` and `model_type` of config.json; null without one. */
  config: { architectures?: string[]; model_type?: string } | null;
  /** Tags the files give: `safetensors`, `gguf`, `onnx`. */
  tags: string[];
}

/** Reads up to `length` bytes of a file from its start (an LFS file's object, else its blob). */
export type ReadStart = (entry: TreeEntry, length: number) => Promise<Buffer>;

/** The safetensors files read per repository; a repository sharded wider is counted from these only. */
const MAX_SAFETENSORS_FILES = 200;
/** A header larger than this is not read (the format's own readers cap it at 100 MB). */
const MAX_HEADER_BYTES = 16 * 1024 * 1024;
const MAX_CONFIG_BYTES = 1024 * 1024;
/**
 * How much of a GGUF file is read for its header, tried in turn: most headers fit in the first, one with
 * a large vocabulary (its tokens are in the header) in a later one; a header past the last is not read.
 */
const GGUF_READS = [1024 * 1024, 16 * 1024 * 1024, 64 * 1024 * 1024];

/** The parameters by dtype a safetensors header declares; null when the bytes are not one. */
export function safetensorsParameters(header: Buffer): Record<string, number> | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(header.toString("utf8"));
  } catch {
    return null;
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return null;
  const counts: Record<string, number> = {};
  for (const [name, tensor] of Object.entries(parsed as Record<string, unknown>)) {
    if (name === "__metadata__") continue;
    const { dtype, shape } = (tensor ?? {}) as { dtype?: unknown; shape?: unknown };
    if (typeof dtype !== "string" || !Array.isArray(shape)) return null;
    if (!shape.every((d) => Number.isSafeInteger(d) && (d as number) >= 0)) return null;
    const count = (shape as number[]).reduce((a, b) => a * b, 1);
    counts[dtype] = (counts[dtype] ?? 0) + count;
  }
  return counts;
}

/** Reads a safetensors file's header through `readStart`; null when the file is not a readable safetensors file. */
async function headerOf(entry: TreeEntry, readStart: ReadStart): Promise<Buffer | null> {
  if (entry.size < 8) return null;
  const prefix = await readStart(entry, 8);
  if (prefix.length < 8) return null;
  const length = prefix.readBigUInt64LE(0);
  if (length > BigInt(Math.min(MAX_HEADER_BYTES, entry.size - 8))) return null;
  const bytes = await readStart(entry, 8 + Number(length));
  return bytes.length === 8 + Number(length) ? bytes.subarray(8) : null;
}

export async function fileFacts(entries: TreeEntry[], readStart: ReadStart): Promise<FileFacts> {
  const files = entries.filter((entry) => entry.type === "file");
  const lower = (entry: TreeEntry) => entry.path.toLowerCase();
  const gguf = files.some((entry) => lower(entry).endsWith(".gguf"));
  const onnx = files.some((entry) => lower(entry).endsWith(".onnx"));
  const weights = files
    .filter((entry) => lower(entry).endsWith(".safetensors"))
    .slice(0, MAX_SAFETENSORS_FILES);
  let safetensors: FileFacts["safetensors"] = null;
  for (const entry of weights) {
    const header = await headerOf(entry, readStart).catch(() => null);
    const counts = header ? safetensorsParameters(header) : null;
    if (!counts) continue;
    safetensors ??= { parameters: {}, total: 0 };
    for (const [dtype, count] of Object.entries(counts)) {
      safetensors.parameters[dtype] = (safetensors.parameters[dtype] ?? 0) + count;
      safetensors.total += count;
    }
  }
  const firstGguf = files
    .filter((entry) => lower(entry).endsWith(".gguf"))
    .sort((a, b) => (a.path < b.path ? -1 : 1))[0];
  const ggufFacts = firstGguf ? await ggufHeaderOf(firstGguf, readStart) : null;
  const configEntry = files.find((entry) => entry.path === "config.json" && entry.size <= MAX_CONFIG_BYTES);
  const config = configEntry ? await readConfig(configEntry, readStart) : null;
  return {
    totalSize: files.reduce((sum, entry) => sum + entry.size, 0),
    gguf,
    ggufFacts,
    onnx,
    safetensors,
    config,
    tags: [
      ...(weights.length > 0 ? ["safetensors"] : []),
      ...(gguf ? ["gguf"] : []),
      ...(onnx ? ["onnx"] : []),
    ],
  };
}

/** Reads a GGUF file's header through `readStart`, reading more of it while it runs on; null when it is not one. */
async function ggufHeaderOf(entry: TreeEntry, readStart: ReadStart): Promise<GgufFacts | null> {
  for (const length of GGUF_READS) {
    try {
      return parseGgufHeader(await readStart(entry, Math.min(length, entry.size)));
    } catch (err) {
      if (!(err instanceof GgufTruncated) || length >= entry.size) return null;
    }
  }
  return null;
}

async function readConfig(entry: TreeEntry, readStart: ReadStart): Promise<FileFacts["config"]> {
  try {
    const parsed = JSON.parse((await readStart(entry, entry.size)).toString("utf8")) as Record<
      string,
      unknown
    >;
    const config: NonNullable<FileFacts["config"]> = {};
    if (Array.isArray(parsed.architectures) && parsed.architectures.every((a) => typeof a === "string")) {
      config.architectures = (parsed.architectures as string[]).slice(0, 20);
    }
    if (typeof parsed.model_type === "string") config.model_type = parsed.model_type;
    return Object.keys(config).length > 0 ? config : null;
  } catch {
    return null;
  }
}
