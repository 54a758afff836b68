import type { RateLimitConfig } from "../../config.js";

/** The state of one bucket after counting a request against it. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window resets (at least 1). */
  resetSeconds: number;
  allowed: boolean;
}

/**
 * Counts requests per bucket in fixed windows aligned to the clock, so every
 * hub process sharing a store agrees on where a window starts.
 */
export interface RateLimiter {
  hit(bucket: string): Promise<RateLimitState>;
  /**
   * Takes back one count of the current window: limits that count only
   * failures count every attempt first (so concurrent attempts cannot all
   * slip under the limit) and forgive the ones that succeeded.
   */
  forgive(bucket: string): Promise<void>;
  close(): Promise<void>;
}

/** The window a moment falls in and the seconds left of it. */
export function windowAt(config: RateLimitConfig, nowMs: number) {
  const windowMs = config.windowSeconds * 1000;
  const index = Math.floor(nowMs / windowMs);
  const resetSeconds = Math.max(1, Math.ceil(((index + 1) * windowMs - nowMs) / 1000));
  return { index, resetSeconds };
}

export function stateOf(config: RateLimitConfig, count: number, resetSeconds: number): RateLimitState {
  return {
    limit: config.limit,
    remaining: Math.max(0, config.limit - count),
    resetSeconds,
    allowed: count <= config.limit,
  };
}

/**
 * Headers in the form of the IETF httpapi RateLimit fields draft:
 * `RateLimit-Policy: "hub";q=1000;w=300` and `RateLimit: "hub";r=997;t=42`.
 */
export function rateLimitHeaders(config: RateLimitConfig, state: RateLimitState): Record<string, string> {
  const headers: Record<string, string> = {
    "ratelimit-policy": `"hub";q=${config.limit};w=${config.windowSeconds}`,
    ratelimit: `"hub";r=${state.remaining};t=${state.resetSeconds}`,
  };
  if (!state.allowed) headers["retry-after"] = String(state.resetSeconds);
  return headers;
}
