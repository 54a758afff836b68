import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import type { Principal } from "../auth/credential.js";
import { HubError, renderRouterError } from "../errors.js";
import { costNanos, type Attempt, type Route } from "./billing.js";
import {
  Cancellation,
  type ProviderAdapter,
  type UpstreamResponse,
  type Usage,
} from "./providers/provider-adapter.js";
import type { Task } from "./providers-file.js";
import type { RouterDeps } from "./contracts.js";
import { sendRouterError } from "./router-error.js";

/** Headers never relayed from a provider: hop-by-hop (RFC 9110 §7.6.1), framing we redo, and ones that would act on our origin. */
const DROPPED_HEADERS = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "content-length",
  "content-encoding",
  "set-cookie",
  "set-cookie2",
  "alt-svc",
  "strict-transport-security",
  "server",
  "x-powered-by",
  "date",
  "inference-id",
  "x-service-provider",
  "x-service-route",
  "cache-control",
  "x-content-type-options",
]);

function relayedHeaders(headers: UpstreamResponse["headers"]): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || DROPPED_HEADERS.has(name) || name.startsWith("access-control-")) continue;
    out[name] = value;
  }
  return out;
}

/** Why one candidate was given up before any output. */
interface Failure {
  provider: string;
  reason: string;
  retryAfter: string | null;
  rateLimited: boolean;
}

class CandidateFailed extends Error {
  constructor(readonly failure: Failure) {
    super(failure.reason);
  }
}

function describe(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (code === "UND_ERR_HEADERS_TIMEOUT") return "no response headers in time";
  if (code === "UND_ERR_BODY_TIMEOUT") return "no response body in time";
  if (typeof code === "string") return code;
  return err instanceof Error ? err.message : "failed";
}

/** Reads a whole body, up to `limit` bytes. */
async function readAll(body: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      throw new Error(`the response is larger than ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** The route header: the policy, the candidates in order with the figure each was ranked by, and the winner. */
function routeHeader(route: Route, attempt: Attempt, attemptNumber: number): string {
  const { decision } = route;
  const figures = new Map(decision.values.map((v) => [v.provider, v.value]));
  const candidates = route.attempts
    .map((a) => {
      const value = figures.get(a.candidate.provider.slug);
      return value === undefined || value === null
        ? a.candidate.provider.slug
        : `${a.candidate.provider.slug}=${Math.round(value * 10) / 10}`;
    })
    .join(", ");
  const parts = [
    `policy=${decision.policy}`,
    `metric=${decision.metric}`,
    `candidates="${candidates}"`,
    `chosen=${attempt.candidate.provider.slug}`,
    `attempt=${attemptNumber}`,
    `billing=${attempt.billing}`,
  ];
  if (decision.affinity) parts.push(`affinity=${decision.affinity}`);
  return parts.join("; ");
}

/** The final SSE event of a stream the provider broke off: an error, never a silent clean end. */
function streamErrorEvent(reason: string): string {
  const error = new HubError(
    502,
    "stream_interrupted",
    `The provider stopped mid-stream (${reason}); the output above is partial. Retry as a new request.`,
  );
  const payload = { type: "error", ...renderRouterError(error) };
  return `event: error\ndata: ${JSON.stringify(payload)}\n\n`;
}

interface Outcome {
  status: number;
  usage: Usage | null;
  ttftMs: number;
  generationMs: number;
}

/** One attempt's shared facts. */
interface AttemptContext {
  deps: RouterDeps;
  res: ServerResponse;
  route: Route;
  attempt: Attempt;
  attemptNumber: number;
  adapter: ProviderAdapter;
  task: Task;
  body: Record<string, unknown>;
  stream: boolean;
  signal: Cancellation;
}

const failed = (provider: string, err: unknown) =>
  new CandidateFailed({ provider, reason: describe(err), retryAfter: null, rateLimited: false });

/** Calls one candidate; throws CandidateFailed while nothing has reached the client yet. */
async function tryCandidate(ctx: AttemptContext): Promise<Outcome> {
  const { config } = ctx.deps;
  const { provider, mapping } = ctx.attempt.candidate;
  const started = performance.now();
  let upstream: UpstreamResponse;
  try {
    upstream = await ctx.adapter.send({
      task: ctx.task,
      providerModel: mapping.providerModel,
      body: ctx.body,
      stream: ctx.stream,
      apiKey: ctx.attempt.apiKey,
      signal: ctx.signal,
      headersTimeoutMs: config.headersTimeoutMs,
      bodyTimeoutMs: ctx.stream ? config.firstByteTimeoutMs : config.bodyTimeoutMs,
    });
  } catch (err) {
    throw failed(provider.slug, err);
  }
  if (upstream.status === 429 || upstream.status >= 500) {
    // Discarded unread: a later abort must not surface as an unhandled stream error.
    upstream.body.on("error", () => {});
    upstream.body.destroy();
    const retryAfter = upstream.headers["retry-after"];
    throw new CandidateFailed({
      provider: provider.slug,
      reason: `HTTP ${upstream.status}`,
      retryAfter: typeof retryAfter === "string" ? retryAfter : null,
      rateLimited: upstream.status === 429,
    });
  }
  const headers: OutgoingHttpHeaders = {
    ...relayedHeaders(upstream.headers),
    "x-service-provider": provider.slug,
    "x-service-route": routeHeader(ctx.route, ctx.attempt, ctx.attemptNumber),
  };
  return ctx.stream && upstream.status < 300
    ? relayStream(ctx, upstream, headers, started)
    : relayWhole(ctx, upstream, headers, started);
}

/**
 * The provider is about to answer the client: a conversation that names a
 * session keeps this provider for its next turns, remembered before the client
 * sees the answer, so the next turn finds it whichever hub process it reaches.
 */
async function answering(ctx: AttemptContext, status: number): Promise<void> {
  if (ctx.route.sessionKey !== null && status < 400)
    await ctx.deps.affinity.remember(ctx.route.sessionKey, ctx.attempt.candidate.provider.slug);
}

/** A body's JSON document when it is an object or array, as every OpenAI answer is; undefined otherwise. */
function jsonDocument(body: Buffer): object | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString("utf8"));
    return typeof parsed === "object" && parsed !== null ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** A whole (non-streaming) body: read it, bounded in size and time, then send it with its usage known. */
async function relayWhole(
  ctx: AttemptContext,
  upstream: UpstreamResponse,
  headers: OutgoingHttpHeaders,
  started: number,
): Promise<Outcome> {
  const { config } = ctx.deps;
  const timer = setTimeout(
    () => upstream.body.destroy(new Error("the body took too long")),
    config.bodyTimeoutMs,
  );
  let body: Buffer;
  try {
    body = await readAll(upstream.body, config.maxBufferedResponseBytes);
  } catch (err) {
    throw failed(ctx.attempt.candidate.provider.slug, err);
  } finally {
    clearTimeout(timer);
  }
  // A success that is not JSON is no OpenAI answer (an HTML error page, a proxy's banner): try the next candidate.
  const document = upstream.status < 300 ? jsonDocument(body) : undefined;
  if (upstream.status < 300 && document === undefined) {
    throw failed(
      ctx.attempt.candidate.provider.slug,
      new Error(`HTTP ${upstream.status} with a body that is not JSON`),
    );
  }
  const ttftMs = performance.now() - started;
  await answering(ctx, upstream.status);
  headers["content-length"] = body.length;
  ctx.res.writeHead(upstream.status, headers);
  ctx.res.end(body);
  return {
    status: upstream.status,
    usage: document === undefined ? null : ctx.adapter.usageOf(document),
    ttftMs,
    generationMs: ttftMs,
  };
}

/**
 * A stream: wait for the first chunk (failover is still possible until it
 * arrives), then relay every chunk untouched as it comes, with backpressure.
 * A provider that breaks off mid-stream gets a final SSE error event.
 */
async function relayStream(
  ctx: AttemptContext,
  upstream: UpstreamResponse,
  headers: OutgoingHttpHeaders,
  started: number,
): Promise<Outcome> {
  const { res } = ctx;
  const chunks = (upstream.body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  let first: IteratorResult<Buffer>;
  try {
    first = await chunks.next();
  } catch (err) {
    throw failed(ctx.attempt.candidate.provider.slug, err);
  }
  if (first.done) throw failed(ctx.attempt.candidate.provider.slug, new Error("empty stream"));
  const firstByteAt = performance.now();
  const tap = ctx.adapter.usageTap();
  await answering(ctx, upstream.status);
  res.writeHead(upstream.status, headers);
  let last: Buffer = first.value;
  tap.push(last);
  let writable = res.write(last);
  let status = upstream.status;
  try {
    for (;;) {
      if (!writable) await drained(res);
      const next = await chunks.next();
      if (next.done) break;
      last = next.value;
      tap.push(last);
      writable = res.write(last);
    }
    res.end();
  } catch (err) {
    // 499: the client went away (nginx's convention); 502: the provider broke off.
    status = ctx.signal.aborted ? 499 : 502;
    if (!ctx.signal.aborted) {
      const boundary = last.subarray(-2).toString() === "\n\n" ? "" : "\n\n";
      res.end(boundary + streamErrorEvent(describe(err)));
    }
  }
  return {
    status,
    usage: tap.usage(),
    ttftMs: firstByteAt - started,
    generationMs: performance.now() - firstByteAt,
  };
}

/** Resolves when the client can take more of a stream; rejects if it goes away instead, so the relay stops. */
function drained(res: ServerResponse): Promise<void> {
  if (res.destroyed) return Promise.reject(new Error("The client went away."));
  return new Promise((resolve, reject) => {
    const onDrain = () => {
      res.off("close", onClose);
      resolve();
    };
    const onClose = () => {
      res.off("drain", onDrain);
      reject(new Error("The client went away."));
    };
    res.once("drain", onDrain);
    res.once("close", onClose);
  });
}

/**
 * Sends the request to the route's candidates in order, failing over on
 * connection errors, timeouts, 429 and 5xx until a provider's first byte
 * reaches the client; after that it never switches. Streams are relayed chunk
 * by chunk as they arrive, untouched. Records the outcome: live stats,
 * affinity, and the usage ledger row that charges routed spend.
 */
export async function dispatch(input: {
  deps: RouterDeps;
  res: ServerResponse;
  inferenceId: string;
  body: Record<string, unknown>;
  task: Task;
  stream: boolean;
  principal: Principal;
  route: Route;
}): Promise<void> {
  const { deps, res, route } = input;
  const cancellation = new Cancellation();
  res.once("close", () => {
    if (!res.writableFinished) cancellation.abort();
  });
  const failures: Failure[] = [];
  const dispatchedAt = performance.now();

  const record = (attempt: Attempt, status: number, usage: Usage | null, ttftMs: number | null) => {
    const { provider, mapping } = attempt.candidate;
    const cost =
      attempt.billing === "routed" && usage
        ? costNanos(mapping.pricing, usage.inputTokens, usage.outputTokens)
        : 0;
    deps.usage.record(
      {
        inference_id: input.inferenceId,
        owner_id: route.owner.id,
        user_id: input.principal.userId,
        provider: provider.slug,
        model: mapping.id,
        task: input.task,
        billing: attempt.billing,
        stream: input.stream ? 1 : 0,
        status,
        input_tokens: usage?.inputTokens ?? 0,
        output_tokens: usage?.outputTokens ?? 0,
        cost_nanousd: cost,
        latency_ms: Math.round(performance.now() - dispatchedAt),
        ttft_ms: ttftMs === null ? null : Math.round(ttftMs),
        created_at: new Date().toISOString(),
      },
      route.owner.type,
    );
  };

  for (const [index, attempt] of route.attempts.entries()) {
    const { provider, mapping } = attempt.candidate;
    const adapter = deps.adapters.get(provider.slug);
    if (!adapter) throw new Error(`No adapter for provider ${provider.slug}.`);
    try {
      const outcome = await tryCandidate({
        deps,
        res,
        route,
        attempt,
        attemptNumber: index + 1,
        adapter,
        task: input.task,
        body: input.body,
        stream: input.stream,
        signal: cancellation,
      });
      await deps.stats.recordSuccess(provider.slug, mapping.id, {
        ttftMs: outcome.ttftMs,
        outputTokens: outcome.usage?.outputTokens ?? null,
        generationMs: outcome.generationMs,
      });
      record(attempt, outcome.status, outcome.usage, outcome.ttftMs);
      return;
    } catch (err) {
      if (!(err instanceof CandidateFailed)) throw err;
      if (cancellation.aborted) return;
      failures.push(err.failure);
      await deps.stats.recordFailure(provider.slug);
    }
  }

  const lastTried = route.attempts[route.attempts.length - 1];
  const summary = failures.map((f) => `${f.provider}: ${f.reason}`).join("; ");
  const allRateLimited = failures.length > 0 && failures.every((f) => f.rateLimited);
  const retryAfter = failures.map((f) => f.retryAfter).find((v) => v !== null) ?? null;
  const error = allRateLimited
    ? new HubError(
        429,
        "rate_limited",
        `Every provider is at capacity (${summary}); back off and retry${retryAfter ? ` after ${retryAfter} seconds` : ""}.`,
        { headers: retryAfter ? { "retry-after": retryAfter } : {} },
      )
    : new HubError(
        502,
        "all_providers_failed",
        `Every candidate failed before answering (${summary}); retry with backoff or pin a healthy provider.`,
      );
  if (lastTried) {
    res.setHeader("x-service-route", routeHeader(route, lastTried, route.attempts.length));
    record(lastTried, error.status, null, null);
  }
  sendRouterError(res, error);
}
