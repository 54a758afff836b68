import type { IncomingHttpHeaders } from "node:http";

const MAX_SESSIONS = 100_000;
/** How long a conversation keeps its provider after its last answered turn. */
export const SESSION_TTL_MS = 60 * 60 * 1000;
const MAX_SESSION_ID = 256;

function text(value: unknown): string | null {
  return typeof value === "string" && value.length > 0 && value.length <= MAX_SESSION_ID ? value : null;
}

/**
 * The conversation a request belongs to: `X-Service-Session-Id`, then the
 * `session_id` and `conversation_id` headers, then the body's session fields
 * (`session_id`, `conversation_id`, the Responses API's `conversation` and
 * `previous_response_id`, `metadata.session_id`).
 */
export function sessionIdOf(headers: IncomingHttpHeaders, body: Record<string, unknown>): string | null {
  for (const name of ["x-service-session-id", "session_id", "conversation_id"]) {
    const value = text(headers[name]);
    if (value) return value;
  }
  const conversation = body.conversation;
  const metadata = body.metadata;
  return (
    text(body.session_id) ??
    text(body.conversation_id) ??
    text(conversation) ??
    (conversation && typeof conversation === "object" ? text((conversation as { id?: unknown }).id) : null) ??
    text(body.previous_response_id) ??
    (metadata && typeof metadata === "object"
      ? text((metadata as { session_id?: unknown }).session_id)
      : null)
  );
}

/**
 * Which provider each recent conversation started on, so its next turns go
 * there while it is healthy. Kept in this process's memory, or in Redis
 * (`redis-session-affinity.ts`) so a conversation keeps its provider whichever
 * hub process its next request reaches.
 */
export interface SessionAffinity {
  providerOf(key: string): Promise<string | null>;
  remember(key: string, provider: string): Promise<void>;
}

/** Affinity in this process's memory, bounded in size and age: the default when no Redis is configured. */
export function createSessionAffinity(clock: () => number): SessionAffinity {
  const sessions = new Map<string, { provider: string; at: number }>();
  return {
    async providerOf(key) {
      const entry = sessions.get(key);
      if (!entry) return null;
      if (clock() - entry.at > SESSION_TTL_MS) {
        sessions.delete(key);
        return null;
      }
      return entry.provider;
    },
    async remember(key, provider) {
      sessions.delete(key);
      sessions.set(key, { provider, at: clock() });
      if (sessions.size > MAX_SESSIONS) {
        const oldest = sessions.keys().next();
        if (!oldest.done) sessions.delete(oldest.value);
      }
    },
  };
}
