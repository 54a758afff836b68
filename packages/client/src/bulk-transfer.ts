import { createReadStream } from "node:fs";
import http from "node:http";
import https from "node:https";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { requestHeaders, send, transportError, type Connection } from "./connection.js";
import { errorFromResponse } from "./errors.js";
import { fileRangeStream } from "./file-io.js";

/** An answer whose body is read as a stream of bytes. */
export interface BulkResponse {
  status: number;
  headers: Headers;
  body: AsyncIterable<Uint8Array>;
}

export interface BulkRequest {
  method: "GET" | "PUT";
  url: string;
  headers?: Record<string, string>;
  /** Send the connection's token (default true; signed LFS URLs carry their own authorization). */
  auth?: boolean;
  /** For a PUT: bytes `start` to `end` (exclusive) of a file, and a report of how many were sent. */
  file?: { path: string; start: number; end: number; onBytes?: (sent: number) => void };
  /** Statuses that are answers rather than errors. */
  accept?: number[];
  signal?: AbortSignal | undefined;
  /** Redirects followed so far. */
  redirects?: number;
}

const EMPTY: AsyncIterable<Uint8Array> = { async *[Symbol.asyncIterator]() {} };

/**
 * Moves file bytes to or from the hub with constant memory. With an injected
 * `fetch` on the connection, it goes through that fetch (so every request stays
 * observable); otherwise through `node:http`, whose streams apply backpressure
 * end to end (undici's fetch reads a streamed request body ahead of the socket
 * and would hold much of a large upload in memory).
 */
export async function bulkTransfer(connection: Connection, request: BulkRequest): Promise<BulkResponse> {
  if (connection.fetch) {
    const response = await send(connection, {
      method: request.method,
      path: request.url,
      ...(request.headers ? { headers: request.headers } : {}),
      ...(request.auth === false ? { auth: false } : {}),
      ...(request.accept ? { accept: request.accept } : {}),
      signal: request.signal,
      ...(request.file
        ? {
            body: fileRangeStream(
              request.file.path,
              request.file.start,
              request.file.end,
              request.file.onBytes,
            ),
          }
        : {}),
    });
    return {
      status: response.status,
      headers: response.headers,
      body: (response.body as AsyncIterable<Uint8Array> | null) ?? EMPTY,
    };
  }
  const headers = await requestHeaders(connection, request.url, request);
  if (request.file) headers.set("content-length", String(request.file.end - request.file.start));
  const url = new URL(request.url);
  const agent = url.protocol === "https:" ? https : http;
  let answer: http.IncomingMessage;
  try {
    answer = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const outgoing = agent.request(url, {
        method: request.method,
        headers: Object.fromEntries(headers),
        ...(request.signal ? { signal: request.signal } : {}),
      });
      outgoing.once("response", resolve);
      outgoing.once("error", reject);
      const file = request.file;
      if (!file) {
        outgoing.end();
        return;
      }
      let sent = 0;
      const count = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          sent += chunk.length;
          file.onBytes?.(sent);
          done(null, chunk);
        },
      });
      const source = createReadStream(file.path, {
        start: file.start,
        end: Math.max(file.start, file.end - 1),
        highWaterMark: 256 * 1024,
      });
      if (file.end === file.start) {
        source.destroy();
        outgoing.end();
        return;
      }
      pipeline(source, count, outgoing).catch(reject);
    });
  } catch (err) {
    throw transportError(err, request.url, request.signal);
  }
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  const status = answer.statusCode ?? 0;
  const location = answer.headers.location;
  if (request.method === "GET" && [301, 302, 303, 307, 308].includes(status) && location) {
    // A renamed repository answers with a redirect; follow it as fetch would (the token goes along only
    // to the hub's own addresses).
    answer.resume();
    if ((request.redirects ?? 0) >= 5) {
      throw errorFromResponse(new Response(null, { status }), undefined, request.url);
    }
    return bulkTransfer(connection, {
      ...request,
      url: new URL(location, request.url).href,
      redirects: (request.redirects ?? 0) + 1,
    });
  }
  if ((status >= 200 && status < 300) || request.accept?.includes(status)) {
    return { status, headers: responseHeaders, body: answer };
  }
  let text = "";
  for await (const chunk of answer as AsyncIterable<Buffer>) text += chunk.toString("utf8");
  let body: unknown;
  try {
    body = text ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    body = undefined;
  }
  throw errorFromResponse(
    new Response(null, { status, statusText: answer.statusMessage ?? "", headers: responseHeaders }),
    body,
    request.url,
  );
}

/** Reads and drops the rest of a body. */
export async function discard(body: AsyncIterable<Uint8Array>): Promise<void> {
  for await (const _chunk of body) {
    // dropped
  }
}
