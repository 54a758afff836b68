/**
 * File reconstruction: which chunk ranges of which xorbs rebuild a file, or a byte range of it, and which byte
 * ranges of the serialized xorbs a client downloads for them. Pure functions over a file's terms (from its shard)
 * and its xorbs' chunk layouts; the CAS reconstruction API adds the URLs.
 * https://huggingface.co/docs/xet/file-reconstruction and https://huggingface.co/docs/xet/download-protocol
 */
import { hashToHex } from "./hashing.js";
import { XetFormatError } from "./xet-format-error.js";

/** A term of a file: chunks `[chunkStart, chunkEnd)` of a xorb (a {@link ShardTerm} fits). */
export interface FileTerm {
  xorbHash: Uint8Array | string;
  chunkStart: number;
  chunkEnd: number;
  unpackedLength: number;
}

/** The layout of a stored xorb's chunk records (a parsed xorb's chunks fit). */
export interface XorbLayout {
  chunks: readonly { offset: number; recordLength: number; uncompressedLength: number }[];
}

/** A term of the answer: chunks `[chunkStart, chunkEnd)` of a xorb, `unpackedLength` bytes once decoded. */
export interface ReconstructionTerm {
  xorbHash: string;
  chunkStart: number;
  chunkEnd: number;
  unpackedLength: number;
}

/** A download: chunks `[chunkStart, chunkEnd)` of a xorb, which are its bytes `[byteStart, byteEnd]` (inclusive). */
export interface ReconstructionFetch {
  xorbHash: string;
  chunkStart: number;
  chunkEnd: number;
  byteStart: number;
  byteEnd: number;
}

/** What a client needs to rebuild bytes `[start, end)` of a file. */
export interface ReconstructionPlan {
  /** Bytes of the first term's decoded output to skip. */
  offsetIntoFirstRange: number;
  terms: ReconstructionTerm[];
  /** Per xorb, its needed chunk ranges with overlapping and adjacent ones merged, in order of first use. */
  fetches: ReconstructionFetch[];
  /** The file's size. */
  fileSize: number;
  start: number;
  end: number;
}

/** A byte range `[start, end)` of a file. */
export interface FileByteRange {
  start: number;
  end: number;
}

function hexOf(hash: Uint8Array | string): string {
  return typeof hash === "string" ? hash : hashToHex(hash);
}

/**
 * The size of a file from its terms.
 */
export function fileSizeOf(terms: readonly FileTerm[]): number {
  return terms.reduce((sum, term) => sum + term.unpackedLength, 0);
}

/**
 * Resolve an HTTP `Range` header (`bytes=a-b`, `bytes=a-`, `bytes=-n`; one range) against a file's size: the
 * byte range `[start, end)` it asks for, or undefined without a header. A start at or past the end of the file
 * (or a malformed header) is unsatisfiable: {@link XetFormatError} of kind "reconstruction" (the API answers 416).
 */
export function resolveRangeHeader(header: string | undefined, fileSize: number): FileByteRange | undefined {
  if (header === undefined) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  const unsatisfiable = (why: string): never => {
    throw new XetFormatError(
      "reconstruction",
      `range "${header}" is not satisfiable for a file of ${fileSize} bytes: ${why}`,
    );
  };
  if (!match || (match[1] === "" && match[2] === "")) return unsatisfiable("expected bytes=start-end");
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0 || fileSize === 0) return unsatisfiable("empty suffix range");
    return { start: Math.max(0, fileSize - suffix), end: fileSize };
  }
  const start = Number(match[1]);
  const end = match[2] === "" ? fileSize : Math.min(fileSize, Number(match[2]) + 1);
  if (start >= fileSize) return unsatisfiable("it starts at or after the end of the file");
  if (end <= start) return unsatisfiable("its end is before its start");
  return { start, end };
}

/**
 * Plan the reconstruction of bytes `[range.start, range.end)` of a file (the whole file without a range): the
 * terms trimmed to the chunks that hold those bytes, the offset into the first one, and the merged chunk and byte
 * ranges to fetch from each xorb. `layoutOf` gives a xorb's chunk layout by its string form; a term outside its
 * xorb, or whose length disagrees with its chunks, is a server-side inconsistency and throws.
 */
export function planReconstruction(
  terms: readonly FileTerm[],
  layoutOf: (xorbHashHex: string) => XorbLayout | undefined,
  range?: FileByteRange,
): ReconstructionPlan {
  const fileSize = fileSizeOf(terms);
  const start = range?.start ?? 0;
  const end = range?.end ?? fileSize;
  if (!(
    Number.isInteger(start) &&
    Number.isInteger(end) &&
    start >= 0 &&
    end <= fileSize &&
    (start < end || fileSize === 0)
  )) {
    throw new XetFormatError(
      "reconstruction",
      `byte range [${start}, ${end}) is not within the file's ${fileSize} bytes`,
    );
  }
  const plan: ReconstructionPlan = { offsetIntoFirstRange: 0, terms: [], fetches: [], fileSize, start, end };
  const wanted = new Map<string, { start: number; end: number }[]>();
  let termStart = 0;
  for (const [index, term] of terms.entries()) {
    const termEnd = termStart + term.unpackedLength;
    if (termEnd <= start || termStart >= end) {
      termStart = termEnd;
      continue;
    }
    const xorbHash = hexOf(term.xorbHash);
    const layout = layoutOf(xorbHash);
    if (!layout)
      throw new XetFormatError("reconstruction", `term ${index} names xorb ${xorbHash}, which is not stored`);
    if (term.chunkStart >= term.chunkEnd || term.chunkEnd > layout.chunks.length) {
      throw new XetFormatError(
        "reconstruction",
        `term ${index}: chunk range [${term.chunkStart}, ${term.chunkEnd}) is outside xorb ${xorbHash}'s ${layout.chunks.length} chunks`,
      );
    }
    let first = -1;
    let last = -1;
    let firstAt = 0;
    let kept = 0;
    let at = termStart;
    for (let c = term.chunkStart; c < term.chunkEnd; c++) {
      const length = layout.chunks[c]?.uncompressedLength ?? 0;
      if (at + length > start && at < end) {
        if (first < 0) {
          first = c;
          firstAt = at;
        }
        last = c;
        kept += length;
      }
      at += length;
    }
    if (at !== termEnd) {
      throw new XetFormatError(
        "reconstruction",
        `term ${index} announces ${term.unpackedLength} bytes, but chunks [${term.chunkStart}, ${term.chunkEnd}) of xorb ${xorbHash} hold ${at - termStart}`,
      );
    }
    if (plan.terms.length === 0) plan.offsetIntoFirstRange = start - firstAt;
    plan.terms.push({ xorbHash, chunkStart: first, chunkEnd: last + 1, unpackedLength: kept });
    const ranges = wanted.get(xorbHash) ?? [];
    ranges.push({ start: first, end: last + 1 });
    wanted.set(xorbHash, ranges);
    termStart = termEnd;
  }
  for (const [xorbHash, ranges] of wanted) {
    const layout = layoutOf(xorbHash) as XorbLayout;
    ranges.sort((a, b) => a.start - b.start);
    const merged: { start: number; end: number }[] = [];
    for (const r of ranges) {
      const previous = merged[merged.length - 1];
      if (previous && r.start <= previous.end) previous.end = Math.max(previous.end, r.end);
      else merged.push({ ...r });
    }
    for (const r of merged) {
      const firstChunk = layout.chunks[r.start];
      const lastChunk = layout.chunks[r.end - 1];
      if (!firstChunk || !lastChunk) continue;
      plan.fetches.push({
        xorbHash,
        chunkStart: r.start,
        chunkEnd: r.end,
        byteStart: firstChunk.offset,
        byteEnd: lastChunk.offset + lastChunk.recordLength - 1,
      });
    }
  }
  return plan;
}

/** A chunk or byte range in the API's JSON: `{ start, end }`. */
export interface ApiRange {
  start: number;
  end: number;
}

/** The body of `GET /v1/reconstructions/{file_id}` (QueryReconstructionResponse). */
export interface QueryReconstructionResponse {
  offset_into_first_range: number;
  terms: { hash: string; unpacked_length: number; range: ApiRange }[];
  fetch_info: Record<string, { range: ApiRange; url: string; url_range: ApiRange }[]>;
}

/** The body of `GET /v2/reconstructions/{file_id}` (QueryReconstructionResponseV2). */
export interface QueryReconstructionResponseV2 {
  offset_into_first_range: number;
  terms: { hash: string; unpacked_length: number; range: ApiRange }[];
  xorbs: Record<string, { url: string; ranges: { chunks: ApiRange; bytes: ApiRange }[] }[]>;
}

function apiTerms(plan: ReconstructionPlan): QueryReconstructionResponse["terms"] {
  return plan.terms.map((t) => ({
    hash: t.xorbHash,
    unpacked_length: t.unpackedLength,
    range: { start: t.chunkStart, end: t.chunkEnd },
  }));
}

/**
 * The V1 reconstruction answer for a plan: chunk ranges end-exclusive, `url_range` end-inclusive (the `Range`
 * header the client sends to `urlFor(fetch)`).
 */
export function reconstructionResponse(
  plan: ReconstructionPlan,
  urlFor: (fetch: ReconstructionFetch) => string,
): QueryReconstructionResponse {
  const fetchInfo: QueryReconstructionResponse["fetch_info"] = {};
  for (const fetch of plan.fetches) {
    (fetchInfo[fetch.xorbHash] ??= []).push({
      range: { start: fetch.chunkStart, end: fetch.chunkEnd },
      url: urlFor(fetch),
      url_range: { start: fetch.byteStart, end: fetch.byteEnd },
    });
  }
  return { offset_into_first_range: plan.offsetIntoFirstRange, terms: apiTerms(plan), fetch_info: fetchInfo };
}

/** The V2 reconstruction answer for a plan: per xorb, one URL with all its ranges. */
export function reconstructionResponseV2(
  plan: ReconstructionPlan,
  urlFor: (xorbHashHex: string) => string,
): QueryReconstructionResponseV2 {
  const xorbs: QueryReconstructionResponseV2["xorbs"] = {};
  for (const fetch of plan.fetches) {
    const entry = (xorbs[fetch.xorbHash] ??= [{ url: urlFor(fetch.xorbHash), ranges: [] }])[0];
    entry?.ranges.push({
      chunks: { start: fetch.chunkStart, end: fetch.chunkEnd },
      bytes: { start: fetch.byteStart, end: fetch.byteEnd },
    });
  }
  return { offset_into_first_range: plan.offsetIntoFirstRange, terms: apiTerms(plan), xorbs };
}
