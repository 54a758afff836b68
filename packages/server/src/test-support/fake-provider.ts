import { writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

/** How the fake answers its next requests. */
export type Behavior =
  | { kind: "ok"; delayMs?: number; chunks?: number; chunkDelayMs?: number }
  | { kind: "status"; status: number; headers?: Record<string, string>; body?: string }
  /** Accept the request and never answer. */
  | { kind: "hang" }
  /** Close the connection without answering. */
  | { kind: "reset" }
  /** Stream `chunks` chunks, then break the connection. */
  | { kind: "drop-mid-stream"; chunks: number }
  /** Stream `chunks` chunks, then fall silent with the connection open. */
  | { kind: "stall-mid-stream"; chunks: number };

export interface ReceivedRequest {
  path: string;
  authorization: string | undefined;
  body: Record<string, unknown>;
}

const INPUT_TOKENS = 12;

/**
 * A stand-in for a remote OpenAI-compatible inference provider (the only kind
 * of fake the suite allows): it answers chat completions, responses and
 * embeddings in the OpenAI wire format, streams SSE, reports usage, and can be
 * told to fail in the ways real providers do.
 */
export class FakeProvider {
  readonly requests: ReceivedRequest[] = [];
  behavior: Behavior = { kind: "ok" };
  /** When each call answered with "hang" was closed by the caller (performance.now()). */
  readonly hangsClosedAt: number[] = [];
  /** Output tokens each answer reports (one per streamed chunk when streaming). */
  outputTokens = 5;
  private server: http.Server | null = null;
  private readonly sockets = new Set<Socket>();
  url = "";

  constructor(readonly name: string) {}

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.once("close", () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    this.url = `http://127.0.0.1:${port}/v1`;
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown>;
    const path = req.url ?? "";
    this.requests.push({ path, authorization: req.headers.authorization, body });
    const behavior = this.behavior;
    switch (behavior.kind) {
      case "hang":
        res.once("close", () => this.hangsClosedAt.push(performance.now()));
        return;
      case "reset":
        req.socket.destroy();
        return;
      case "status":
        res.writeHead(behavior.status, { "content-type": "application/json", ...behavior.headers });
        res.end(behavior.body ?? JSON.stringify({ error: { message: `fake ${behavior.status}` } }));
        return;
    }
    if (behavior.kind === "ok" && behavior.delayMs) await sleep(behavior.delayMs);
    const model = String(body.model);
    if (path.endsWith("/embeddings")) {
      return json(res, {
        object: "list",
        model,
        data: [{ object: "embedding", index: 0, embedding: embedding(body.encoding_format) }],
        usage: { prompt_tokens: INPUT_TOKENS, total_tokens: INPUT_TOKENS },
      });
    }
    const responses = path.endsWith("/responses");
    if (body.stream === true) return this.stream(res, behavior, model, responses, body);
    const text = `hello from ${this.name}`;
    if (responses) {
      return json(res, {
        id: "resp_fake",
        object: "response",
        status: "completed",
        model,
        output: [
          {
            type: "message",
            id: "msg_fake",
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text, annotations: [] }],
          },
        ],
        usage: {
          input_tokens: INPUT_TOKENS,
          output_tokens: this.outputTokens,
          total_tokens: INPUT_TOKENS + this.outputTokens,
        },
      });
    }
    return json(res, {
      id: "chatcmpl-fake",
      object: "chat.completion",
      created: 1,
      model,
      choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: text } }],
      usage: {
        prompt_tokens: INPUT_TOKENS,
        completion_tokens: this.outputTokens,
        total_tokens: INPUT_TOKENS + this.outputTokens,
      },
    });
  }

  private async stream(
    res: ServerResponse,
    behavior: Behavior,
    model: string,
    responses: boolean,
    body: Record<string, unknown>,
  ): Promise<void> {
    res.writeHead(200, { "content-type": "text/event-stream", "x-fake-provider": this.name });
    const count = "chunks" in behavior && behavior.chunks !== undefined ? behavior.chunks : this.outputTokens;
    const delay = behavior.kind === "ok" ? (behavior.chunkDelayMs ?? 0) : 0;
    for (let i = 0; i < count; i++) {
      const piece = `t${i} `;
      res.write(
        responses
          ? `event: response.output_text.delta\ndata: ${JSON.stringify({ type: "response.output_text.delta", delta: piece, output_index: 0, content_index: 0, item_id: "msg_fake", sequence_number: i })}\n\n`
          : `data: ${JSON.stringify({ id: "chatcmpl-fake", object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })}\n\n`,
      );
      if (delay) await sleep(delay);
    }
    if (behavior.kind === "drop-mid-stream") {
      // Let the chunks reach the Router first, as a provider dying mid-answer would.
      await sleep(100);
      res.socket?.destroy();
      return;
    }
    if (behavior.kind === "stall-mid-stream") return;
    const usage = {
      prompt_tokens: INPUT_TOKENS,
      completion_tokens: count,
      total_tokens: INPUT_TOKENS + count,
    };
    if (responses) {
      res.write(
        `event: response.completed\ndata: ${JSON.stringify({ type: "response.completed", sequence_number: count, response: { id: "resp_fake", object: "response", status: "completed", model, output: [], usage: { input_tokens: INPUT_TOKENS, output_tokens: count, total_tokens: INPUT_TOKENS + count } } })}\n\n`,
      );
    } else {
      const options = body.stream_options as { include_usage?: boolean } | undefined;
      if (options?.include_usage) {
        res.write(
          `data: ${JSON.stringify({ id: "chatcmpl-fake", object: "chat.completion.chunk", created: 1, model, choices: [], usage })}\n\n`,
        );
      }
      res.write("data: [DONE]\n\n");
    }
    res.end();
  }
}

function json(res: ServerResponse, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(200, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    "x-fake-provider": "yes",
  });
  res.end(body);
}

/** The vector [0.1, 0.2, 0.3], as floats or as the base64 float32 bytes the openai client asks for by default. */
function embedding(format: unknown): number[] | string {
  const vector = [0.1, 0.2, 0.3];
  return format === "base64" ? Buffer.from(new Float32Array(vector).buffer).toString("base64") : vector;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes a Router provider file (HUB_PROVIDERS) to a fresh temporary path and returns the path. */
export function writeProvidersFile(label: string, providers: unknown[]): string {
  const file = path.join(
    os.tmpdir(),
    `providers-${label}-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.json`,
  );
  writeFileSync(file, JSON.stringify({ providers }));
  return file;
}
