/**
 * The playground's browser side: a short-lived Router credential kept in memory only, and a chat
 * completion streamed from the Router as server-sent events
 * (https://platform.openai.com/docs/api-reference/chat-streaming).
 */

/** A turn of the conversation, as the chat completions API takes it. */
export interface ChatMessage {
  role: "user" | "assistant";
  content: string;
}

/** A failure worth showing as is; `signIn` when the browser session has ended. */
export class PlaygroundError extends Error {
  constructor(
    message: string,
    readonly signIn = false,
  ) {
    super(message);
  }
}

/** Renew a credential this long before it expires, so a request never leaves with one about to die. */
const RENEW_MARGIN_MS = 20_000;

function csrfToken(): string {
  const match = /(?:^|;\s*)hub_csrf=([^;]+)/.exec(document.cookie);
  return match?.[1] ? decodeURIComponent(match[1]) : "";
}

/**
 * The session's Router credential (`POST /api/auth/session-inference-token`): held in this closure
 * only (never storage), fetched when first needed and again when it nears its expiry or was refused.
 */
export function sessionCredential() {
  let current: { token: string; expiresAt: number } | null = null;
  return {
    async get(): Promise<string> {
      if (current && current.expiresAt - RENEW_MARGIN_MS > Date.now()) return current.token;
      current = null;
      const response = await fetch("/api/auth/session-inference-token", {
        method: "POST",
        credentials: "same-origin",
        headers: { accept: "application/json", "x-csrf-token": csrfToken() },
      });
      const body = (await response.json().catch(() => null)) as {
        token?: string;
        expiresAt?: string;
        error?: string;
      } | null;
      if (response.status === 401) throw new PlaygroundError("Your session has ended; sign in again.", true);
      if (!response.ok || !body?.token || !body.expiresAt) {
        throw new PlaygroundError(body?.error ?? `The hub answered ${response.status}; try again.`);
      }
      current = { token: body.token, expiresAt: Date.parse(body.expiresAt) };
      return current.token;
    },
    /** Forgets the credential, so the next request gets a fresh one. */
    drop(): void {
      current = null;
    },
  };
}

export type SessionCredential = ReturnType<typeof sessionCredential>;

/** The message of an OpenAI error object (`{error: {message}}`), or a fallback. */
function errorMessage(text: string, fallback: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string } };
    return parsed.error?.message ?? fallback;
  } catch {
    return fallback;
  }
}

/** One server-sent event's type and data, from its lines. */
function parseEvent(block: string): { event: string; data: string } {
  let event = "message";
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  return { event, data: data.join("\n") };
}

/**
 * Streams one chat completion from the Router, calling `onDelta` with each piece of the answer as it
 * arrives; `signal` cancels it. A refused credential is renewed once; an `event: error` the Router
 * sends mid-stream (the provider broke off) is raised, never taken for a clean end.
 */
export async function streamChat(options: {
  routerUrl: string;
  model: string;
  messages: ChatMessage[];
  credential: SessionCredential;
  signal: AbortSignal;
  onDelta: (text: string) => void;
}): Promise<void> {
  const { routerUrl, model, messages, credential, signal, onDelta } = options;
  const send = async () =>
    fetch(`${routerUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${await credential.get()}`, "content-type": "application/json" },
      body: JSON.stringify({ model, messages, stream: true }),
      signal,
    });
  let response = await send();
  if (response.status === 401) {
    credential.drop();
    response = await send();
  }
  if (!response.ok || !response.body) {
    const text = await response.text();
    throw new PlaygroundError(errorMessage(text, `The Router answered ${response.status}.`));
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += value.replace(/\r\n/g, "\n");
    let end: number;
    while ((end = buffered.indexOf("\n\n")) >= 0) {
      const { event, data } = parseEvent(buffered.slice(0, end));
      buffered = buffered.slice(end + 2);
      if (event === "error") throw new PlaygroundError(errorMessage(data, "The answer broke off."));
      if (data === "[DONE]") return;
      if (!data) continue;
      const chunk = JSON.parse(data) as { choices?: { delta?: { content?: string | null } }[] };
      const piece = chunk.choices?.[0]?.delta?.content;
      if (piece) onDelta(piece);
    }
  }
}
