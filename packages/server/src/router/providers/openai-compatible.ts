import { StringDecoder } from "node:string_decoder";
import { Pool } from "undici";
import type { Task } from "../providers-file.js";
import type {
  ProviderAdapter,
  UpstreamRequest,
  UpstreamResponse,
  Usage,
  UsageTap,
} from "./provider-adapter.js";

const TASK_PATHS: Record<Task, string> = {
  chat: "/chat/completions",
  responses: "/responses",
  embeddings: "/embeddings",
};

function count(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
}

/** Chat and embeddings report prompt/completion tokens; the Responses API input/output tokens, nested in stream events. */
function usageFrom(json: unknown): Usage | null {
  if (!json || typeof json !== "object") return null;
  const holder = json as { usage?: unknown; response?: { usage?: unknown } };
  const usage = (holder.usage ?? holder.response?.usage) as Record<string, unknown> | null | undefined;
  if (!usage || typeof usage !== "object") return null;
  const input = count(usage.prompt_tokens) ?? count(usage.input_tokens);
  const output = count(usage.completion_tokens) ?? count(usage.output_tokens) ?? 0;
  return input === null ? null : { inputTokens: input, outputTokens: output };
}

/**
 * An upstream speaking the OpenAI API (vLLM, TGI, llama.cpp server, Ollama,
 * hosted providers): https://platform.openai.com/docs/api-reference. Streams
 * of chat completions ask for the final usage chunk (`stream_options.include_usage`)
 * so streamed spend is charged too.
 */
export function createOpenAiCompatibleAdapter(options: { baseUrl: string }): ProviderAdapter {
  const base = new URL(options.baseUrl);
  const prefix = base.pathname.replace(/\/+$/, "");
  const pool = new Pool(base.origin, {
    connections: 256,
    keepAliveTimeout: 30_000,
  });

  return {
    async send(request: UpstreamRequest): Promise<UpstreamResponse> {
      const body: Record<string, unknown> = { ...request.body, model: request.providerModel };
      if (request.stream && request.task === "chat") {
        const streamOptions = body.stream_options;
        body.stream_options = {
          ...(streamOptions && typeof streamOptions === "object" ? streamOptions : {}),
          include_usage: true,
        };
      }
      const response = await pool.request({
        path: `${prefix}${TASK_PATHS[request.task]}`,
        method: "POST",
        headers: {
          authorization: `Bearer ${request.apiKey}`,
          "content-type": "application/json",
          accept: request.stream ? "text/event-stream" : "application/json",
          "accept-encoding": "identity",
        },
        body: JSON.stringify(body),
        signal: request.signal,
        headersTimeout: request.headersTimeoutMs,
        bodyTimeout: request.bodyTimeoutMs,
      });
      return { status: response.statusCode, headers: response.headers, body: response.body };
    },

    usageOf(document: unknown): Usage | null {
      return usageFrom(document);
    },

    usageTap(): UsageTap {
      const decoder = new StringDecoder("utf8");
      let partial = "";
      let usage: Usage | null = null;
      return {
        push(chunk: Buffer) {
          const lines = (partial + decoder.write(chunk)).split("\n");
          partial = lines.pop() ?? "";
          for (const line of lines) {
            if (!line.startsWith("data:") || !line.includes('"usage"')) continue;
            try {
              usage = usageFrom(JSON.parse(line.slice(5))) ?? usage;
            } catch {
              // Not JSON: nothing to learn from this line.
            }
          }
        },
        usage: () => usage,
      };
    },

    close: () => pool.close(),
  };
}
