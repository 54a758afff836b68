import { Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";

/** Something that can be sent whole or in part. */
export interface RangedBody {
  size: number;
  /** Opens the content, or the inclusive byte range of it. */
  open(range?: { start: number; end: number }): Readable;
  /** Where a front nginx can send the same bytes from itself (`ObjectStore.internalRedirect`). */
  internalRedirect?: string;
}

/**
 * The request header by which a front proxy says it sends the file an `X-Accel-Redirect` answer names (the
 * convention of Rack::Sendfile); nginx sets it for the hub with `proxy_set_header`. A request that came
 * straight to the hub has none, so it gets the bytes from the hub whatever the configuration.
 */
const SENDFILE_TYPE = "x-sendfile-type";

/** One byte range: `bytes=a-b`, `bytes=a-` or `bytes=-n` (RFC 9110 §14.1.2). */
const SINGLE_RANGE = /^bytes=(\d*)-(\d*)$/;

/** Request headers with which nginx would answer otherwise than the hub: it honours them, the hub does not. */
const CONDITIONAL = ["if-range", "if-match", "if-none-match", "if-modified-since", "if-unmodified-since"];

/**
 * Whether a front nginx, handed the request's file, sends exactly what the hub would: the request came
 * through it (X-Sendfile-Type), asks for GET, names the range the hub would send (a Xet fetch without one is
 * sent its signed window by the hub) and at most one, and has no conditional header. nginx ignores a Range
 * whose If-Range does not match and sends the whole file, which for a xorb is more than the signed window.
 */
function nginxSendsTheSame(request: FastifyRequest, rangeHeader: string | undefined): boolean {
  const { headers } = request;
  return (
    request.method === "GET" &&
    headers[SENDFILE_TYPE] === "X-Accel-Redirect" &&
    rangeHeader === headers.range &&
    (rangeHeader === undefined || SINGLE_RANGE.test(rangeHeader)) &&
    CONDITIONAL.every((name) => headers[name] === undefined)
  );
}

/**
 * Sends a body whole, or the single range a `Range: bytes=a-b`, `bytes=a-` or
 * `bytes=-n` header asks for (RFC 9110 §14), with 416 for one it cannot satisfy.
 */
export function sendRanged(
  reply: FastifyReply,
  body: RangedBody,
  rangeHeader: string | undefined,
): FastifyReply {
  const { size } = body;
  if (body.internalRedirect !== undefined && nginxSendsTheSame(reply.request, rangeHeader)) {
    // nginx answers from the file with sendfile, applying the request's own Range; the headers set so far
    // reach the client through the internal location's add_header lines (docs/deployment.md).
    return reply.header("x-accel-redirect", body.internalRedirect).send();
  }
  // HEAD reads nothing: an empty stream keeps the Content-Length that says how much GET would send.
  const open = (range?: { start: number; end: number }) =>
    reply.request.method === "HEAD" ? Readable.from([]) : body.open(range);
  reply.header("accept-ranges", "bytes");
  const match = rangeHeader ? SINGLE_RANGE.exec(rangeHeader.trim()) : null;
  if (!match || (match[1] === "" && match[2] === "")) {
    return reply.header("content-length", String(size)).send(open());
  }
  const [start, end] =
    match[1] === ""
      ? [Math.max(0, size - Number(match[2])), size - 1]
      : [Number(match[1]), match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1)];
  if (start > end || start >= size) {
    return reply.status(416).header("content-range", `bytes */${size}`).send();
  }
  return reply
    .status(206)
    .header("content-range", `bytes ${start}-${end}/${size}`)
    .header("content-length", String(end - start + 1))
    .send(open({ start, end }));
}
