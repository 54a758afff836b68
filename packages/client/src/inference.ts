import type { CatalogModel, CatalogModelList } from "@hub/api";
import { routerBaseUrl, send, sendJson, transportError, type Connection } from "./connection.js";
import { HubError, describeErrorBody } from "./errors.js";
import { readServerSentEvents } from "./sse.js";

export interface ListModelsParams {
  connection: Connection;
  /** Only the models of one provider. */
  provider?: string;
  signal?: AbortSignal;
}

/**
 * `GET /api/inference/models`: the Router's catalog, each model with its
 * providers' task, price (USD per million tokens), status and measured speed.
 */
export async function listModels({
  connection,
  provider,
  signal,
}: ListModelsParams): Promise<CatalogModel[]> {
  const path =
    provider === undefined
      ? "/api/inference/models"
      : `/api/inference/providers/${encodeURIComponent(provider)}/models`;
  return (await sendJson<CatalogModelList>(connection, { path, signal })).data;
}

/** A chat message in the OpenAI Chat Completions format. */
export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool" | "developer";
  content: string;
  [field: string]: unknown;
}

/**
 * The body of `POST {inference_url}/v1/chat/completions`. `model` is
 * `<owner>/<model>` with at most one suffix (`:fastest`, `:cheapest`,
 * `:preferred`, `:<provider>`); other OpenAI fields pass through.
 */
export interface ChatCompletionRequest {
  model: string;
  messages: ChatMessage[];
  max_tokens?: number;
  temperature?: number;
  [field: string]: unknown;
}

/** Routing headers the Router understands (spec, Router operations). */
export interface RouterOptions {
  /** `X-Service-Inference-Billing`: `auto` (default), `routed` or `byok`. */
  billing?: "auto" | "routed" | "byok";
  /** `X-Service-Bill-To`: an organization to bill. */
  billTo?: string;
  /** `X-Service-Session-Id`: keeps a conversation on one provider. */
  sessionId?: string;
}

export interface ChatCompletionParams extends RouterOptions {
  connection: Connection;
  body: ChatCompletionRequest;
  signal?: AbortSignal;
}

/** A non-streaming chat completion, as the provider answered it. */
export interface ChatCompletion {
  id: string;
  model: string;
  choices: Array<{
    index: number;
    finish_reason: string | null;
    message: { role: string; content: string | null };
  }>;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  [field: string]: unknown;
}

/** One streamed chunk (`chat.completion.chunk`). */
export interface ChatCompletionChunk {
  id: string;
  model: string;
  choices: Array<{
    index: number;
    delta: { role?: string; content?: string | null };
    finish_reason: string | null;
  }>;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  [field: string]: unknown;
}

function routerHeaders(options: RouterOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  if (options.billing) headers["x-service-inference-billing"] = options.billing;
  if (options.billTo) headers["x-service-bill-to"] = options.billTo;
  if (options.sessionId) headers["x-service-session-id"] = options.sessionId;
  return headers;
}

/** `POST /v1/chat/completions` on the Router, without streaming. Errors carry the `Inference-Id`. */
export async function chatCompletion(
  params: ChatCompletionParams,
): Promise<ChatCompletion & { inferenceId?: string }> {
  const { connection, body, signal } = params;
  const response = await send(connection, {
    method: "POST",
    path: `${await routerBaseUrl(connection, signal)}/chat/completions`,
    json: { ...body, stream: false },
    headers: routerHeaders(params),
    signal,
  });
  const completion = (await response.json()) as ChatCompletion;
  return { ...completion, inferenceId: response.headers.get("inference-id") ?? undefined };
}

/**
 * A streaming chat completion: iterate it for chunks. Stopping early (a
 * `break`, a thrown error, or {@link ChatCompletionStream.abort}) cancels the
 * request, so the Router stops the provider and bills what was streamed.
 */
export class ChatCompletionStream implements AsyncIterable<ChatCompletionChunk> {
  /** The Router's `Inference-Id` for this request. */
  readonly inferenceId: string | undefined;
  /** The provider that serves it (`X-Service-Provider`). */
  readonly provider: string | undefined;
  private consumed = false;

  constructor(
    private readonly response: Response,
    private readonly controller: AbortController,
    private readonly url: string,
  ) {
    this.inferenceId = response.headers.get("inference-id") ?? undefined;
    this.provider = response.headers.get("x-service-provider") ?? undefined;
  }

  /** Cancels the request. */
  abort(): void {
    this.controller.abort();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ChatCompletionChunk> {
    if (this.consumed) throw new Error("A chat stream can be read only once.");
    this.consumed = true;
    const body = this.response.body;
    if (!body) return;
    let finished = false;
    try {
      for await (const event of readServerSentEvents(body)) {
        // After [DONE] only the end of the body remains: read it, so the connection stays reusable.
        if (event.data === "[DONE]") continue;
        const data = JSON.parse(event.data) as unknown;
        if (event.event === "error") {
          const described = describeErrorBody(data);
          throw new StreamError(this.response.status, described.message ?? "The stream was interrupted.", {
            code: described.code ?? "stream_interrupted",
            inferenceId: this.inferenceId,
            url: this.url,
          });
        }
        yield data as ChatCompletionChunk;
      }
      finished = true;
    } catch (err) {
      throw err instanceof HubError ? err : transportError(err, this.url, this.controller.signal);
    } finally {
      if (!finished) this.controller.abort();
    }
  }
}

/** The stream ended with an `event: error` from the Router (e.g. `stream_interrupted`), never a silent end. */
export class StreamError extends HubError {}

/**
 * `POST /v1/chat/completions` with `stream: true`. Resolves once the Router
 * has answered with headers (errors before the first byte are thrown here, with
 * the `Inference-Id`); then iterate the returned stream.
 */
export async function chatCompletionStream(params: ChatCompletionParams): Promise<ChatCompletionStream> {
  const { connection, body, signal } = params;
  const controller = new AbortController();
  const combined = signal ? AbortSignal.any([signal, controller.signal]) : controller.signal;
  const url = `${await routerBaseUrl(connection, signal)}/chat/completions`;
  const response = await send(connection, {
    method: "POST",
    path: url,
    json: { ...body, stream: true },
    headers: { ...routerHeaders(params), accept: "text/event-stream" },
    signal: combined,
  });
  return new ChatCompletionStream(response, controller, url);
}
