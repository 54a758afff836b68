// The upstream of the Router benchmark: an OpenAI-compatible chat completions endpoint that answers at once.
// Non-streaming requests get one fixed JSON completion; `"stream": true` gets `--chunks` SSE chunks (the
// last with usage) then `data: [DONE]`. The first chunk goes at once, then `--pause-ms` pass (so the time to
// the first byte is measured on its own, not behind the CPU this process spends pushing out the other
// chunks on the same cores), then the rest follow, each its own write: one per event-loop turn, as fast as
// a stream goes, or `--gap-ms` apart.
import http from "node:http";
import { serveUntilTerminated } from "./child-server.mjs";
import { setImmediate as nextTurn, setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    chunks: { type: "string", default: "200" },
    "pause-ms": { type: "string", default: "5" },
    "gap-ms": { type: "string", default: "0" },
  },
});
const CHUNKS = Number(values.chunks);
const PAUSE_MS = Number(values["pause-ms"]);
const GAP_MS = Number(values["gap-ms"]);

const usage = { prompt_tokens: 12, completion_tokens: CHUNKS, total_tokens: 12 + CHUNKS };
/** The whole answer; its id is what the benchmark checks every path relays. */
const COMPLETION = Buffer.from(
  JSON.stringify({
    id: "chatcmpl-bench",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "m",
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: "Hello! How can I help you today?" },
        finish_reason: "stop",
      },
    ],
    usage,
  }),
);

const chunk = (i) => {
  const last = i === CHUNKS - 1;
  const event = {
    id: "chatcmpl-bench",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "m",
    choices: [{ index: 0, delta: { content: `tok${i} ` }, finish_reason: last ? "stop" : null }],
    ...(last ? { usage } : {}),
  };
  return Buffer.from(`data: ${JSON.stringify(event)}\n\n`);
};
const STREAM = [...Array.from({ length: CHUNKS }, (_, i) => chunk(i)), Buffer.from("data: [DONE]\n\n")];

async function stream(res) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const [index, piece] of STREAM.entries()) {
    if (!res.write(piece)) await new Promise((resolve) => res.once("drain", resolve));
    // Node corks a response's writes until the next tick: written in one turn, the stream is one packet.
    if (index === 0 && PAUSE_MS > 0) await sleep(PAUSE_MS);
    else await (GAP_MS > 0 ? sleep(GAP_MS) : nextTurn());
    if (res.destroyed) return;
  }
  res.end();
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (data) => chunks.push(data));
  req.on("end", () => {
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end('{"error":{"message":"not found"}}');
      return;
    }
    let streaming = false;
    try {
      streaming = JSON.parse(Buffer.concat(chunks).toString()).stream === true;
    } catch {
      res.writeHead(400, { "content-type": "application/json" });
      res.end('{"error":{"message":"invalid JSON"}}');
      return;
    }
    if (streaming) {
      stream(res).catch(() => res.destroy());
      return;
    }
    res.writeHead(200, { "content-type": "application/json", "content-length": COMPLETION.length });
    res.end(COMPLETION);
  });
});
serveUntilTerminated(server);
