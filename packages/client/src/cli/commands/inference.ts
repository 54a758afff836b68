import readline from "node:readline";
import { chatCompletionStream, listModels, type ChatMessage } from "../../inference.js";
import { HubError } from "../../errors.js";
import { stringOption, type Command } from "../command.js";
import type { CliContext } from "../context.js";
import { table } from "../output.js";
import { UsageError } from "../usage-error.js";

const price = (usd: number) => `$${usd.toFixed(usd < 1 ? 3 : 2)}`;

export const models: Command = {
  name: "models",
  summary:
    "The Router's catalog: each model's providers with prices (USD per million tokens) and measured speed.",
  options: { provider: { type: "string" } },
  async run(ctx, values) {
    const provider = stringOption(values, "provider");
    const catalog = await listModels({
      connection: ctx.connection({ requireToken: false }),
      ...(provider ? { provider } : {}),
    });
    if (ctx.json) return ctx.printJson(catalog);
    const rows = catalog.flatMap((model) =>
      model.providers.map((p) => [
        model.id,
        p.provider,
        p.task,
        price(p.pricing.input),
        price(p.pricing.output),
        p.status,
        p.throughput === null ? null : `${p.throughput.toFixed(1)} tok/s`,
        p.first_token_latency_ms === null ? null : `${Math.round(p.first_token_latency_ms)} ms`,
      ]),
    );
    ctx.out(
      table(["MODEL", "PROVIDER", "TASK", "INPUT/M", "OUTPUT/M", "STATUS", "SPEED", "FIRST TOKEN"], rows),
    );
  },
};

/** Streams one answer to stdout; a Ctrl-C (the signal) cancels the request. Returns the answer's text. */
async function streamAnswer(
  ctx: CliContext,
  model: string,
  messages: ChatMessage[],
  options: { maxTokens?: number; signal?: AbortSignal },
): Promise<string> {
  const stream = await chatCompletionStream({
    connection: ctx.connection(),
    body: { model, messages, ...(options.maxTokens ? { max_tokens: options.maxTokens } : {}) },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  let answer = "";
  const chunks = [];
  for await (const chunk of stream) {
    const piece = chunk.choices[0]?.delta.content ?? "";
    answer += piece;
    if (ctx.json) chunks.push(chunk);
    else if (piece) ctx.io.stdout.write(piece);
  }
  if (ctx.json)
    ctx.printJson({ inference_id: stream.inferenceId, provider: stream.provider, content: answer, chunks });
  else ctx.io.stdout.write("\n");
  return answer;
}

export const chat: Command = {
  name: "chat",
  summary:
    "Chat with a model through the Router, streaming the answer; without a message, reads stdin or talks on the terminal.",
  args: "MODEL [MESSAGE...]",
  positionals: { min: 1 },
  options: { system: { type: "string" }, "max-tokens": { type: "string" } },
  async run(ctx, values, [model = "", ...words]) {
    const maxText = stringOption(values, "max-tokens");
    const maxTokens = maxText === undefined ? undefined : Number(maxText);
    if (maxTokens !== undefined && (!Number.isSafeInteger(maxTokens) || maxTokens < 1)) {
      throw new UsageError("--max-tokens is a whole number.");
    }
    const system = stringOption(values, "system");
    const messages: ChatMessage[] = system ? [{ role: "system", content: system }] : [];
    const options = maxTokens ? { maxTokens } : {};
    if (words.length > 0 || !ctx.io.stdin.isTTY) {
      let content = words.join(" ");
      if (!content)
        for await (const chunk of ctx.io.stdin as AsyncIterable<Buffer>) content += chunk.toString();
      if (!content.trim()) throw new UsageError("Give a message, on the command line or on stdin.");
      messages.push({ role: "user", content: content.trim() });
      await streamAnswer(ctx, model, messages, options);
      return;
    }
    // A conversation on the terminal: Ctrl-C stops the answer being streamed, Ctrl-D ends.
    const rl = readline.createInterface({ input: ctx.io.stdin, output: ctx.io.stderr, prompt: "> " });
    ctx.note(`Chatting with ${model}; Ctrl-C stops an answer, Ctrl-D ends.`);
    let current: AbortController | undefined;
    rl.on("SIGINT", () => (current ? current.abort() : rl.close()));
    rl.prompt();
    for await (const line of rl) {
      if (!line.trim()) {
        rl.prompt();
        continue;
      }
      messages.push({ role: "user", content: line });
      current = new AbortController();
      try {
        messages.push({
          role: "assistant",
          content: await streamAnswer(ctx, model, messages, { ...options, signal: current.signal }),
        });
      } catch (err) {
        if (!(err instanceof HubError) || err.code !== "aborted") throw err;
        ctx.io.stdout.write("\n");
        messages.pop();
      } finally {
        current = undefined;
      }
      rl.prompt();
    }
  },
};
