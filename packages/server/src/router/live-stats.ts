/** How much a new sample moves an exponentially weighted average. */
export const EWMA_WEIGHT = 0.2;

/** Measured speed of one provider serving one model, from real traffic. */
export interface MappingStats {
  /** Time to first byte of the response body, in milliseconds. */
  ttftMs: number | null;
  /** Output tokens per second after the first byte (streams and whole bodies alike). */
  tokensPerSecond: number | null;
  samples: number;
}

/** One successful response's figures. */
export interface SpeedSample {
  ttftMs: number;
  outputTokens: number | null;
  generationMs: number;
}

/** The live figures as they stood when read: what ranking and the catalog listing look at. */
export interface LiveView {
  isCooling(provider: string): boolean;
  stats(provider: string, model: string): MappingStats;
}

/** A provider serving a model, as the live figures name it. */
export interface LiveMapping {
  provider: string;
  model: string;
}

/**
 * The Router's live view of its providers: consecutive failures put a
 * provider in cooldown for a while, and every successful response updates the
 * exponentially weighted speed of its mapping, which `:fastest` ranks by. Kept
 * in this process's memory, or in Redis (`redis-live-stats.ts`) so every hub
 * process sees the same cooldowns and speeds.
 */
export interface LiveStats {
  /** The figures of these mappings (and their providers' cooldowns) as they stand now. */
  view(mappings: readonly LiveMapping[]): Promise<LiveView>;
  recordFailure(provider: string): Promise<void>;
  recordSuccess(provider: string, model: string, sample: SpeedSample): Promise<void>;
}

export const UNMEASURED: MappingStats = Object.freeze({ ttftMs: null, tokensPerSecond: null, samples: 0 });

/** Output tokens per second of a sample, or null when it names no output. */
export function speedOf(sample: SpeedSample): number | null {
  return sample.outputTokens && sample.outputTokens > 0
    ? (sample.outputTokens * 1000) / Math.max(sample.generationMs, 1)
    : null;
}

function ewma(previous: number | null, sample: number): number {
  return previous === null ? sample : previous + EWMA_WEIGHT * (sample - previous);
}

/** Live figures in this process's memory: the default when no Redis is configured. */
export function createLiveStats({
  clock,
  failuresBeforeCooldown,
  cooldownMs,
}: {
  clock: () => number;
  failuresBeforeCooldown: number;
  cooldownMs: number;
}): LiveStats {
  const failures = new Map<string, number>();
  const coolingUntil = new Map<string, number>();
  const stats = new Map<string, MappingStats>();
  const key = (provider: string, model: string) => `${provider}\u0000${model}`;
  const view: LiveView = {
    isCooling(provider) {
      const until = coolingUntil.get(provider);
      return until !== undefined && until > clock();
    },
    stats: (provider, model) => stats.get(key(provider, model)) ?? UNMEASURED,
  };

  return {
    view: async () => view,
    async recordFailure(provider) {
      const count = (failures.get(provider) ?? 0) + 1;
      failures.set(provider, count);
      if (count >= failuresBeforeCooldown) {
        coolingUntil.set(provider, clock() + cooldownMs);
        failures.set(provider, 0);
      }
    },
    async recordSuccess(provider, model, sample) {
      failures.delete(provider);
      coolingUntil.delete(provider);
      const previous = stats.get(key(provider, model)) ?? UNMEASURED;
      const speed = speedOf(sample);
      stats.set(key(provider, model), {
        ttftMs: ewma(previous.ttftMs, sample.ttftMs),
        tokensPerSecond: speed === null ? previous.tokensPerSecond : ewma(previous.tokensPerSecond, speed),
        samples: previous.samples + 1,
      });
    },
  };
}
