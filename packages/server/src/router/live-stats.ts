/** How much a new sample moves an exponentially weighted average. */
const EWMA_WEIGHT = 0.2;

/** Measured speed of one provider serving one model, from real traffic. */
export interface MappingStats {
  /** Time to first byte of the response body, in milliseconds. */
  ttftMs: number | null;
  /** Output tokens per second after the first byte (streams and whole bodies alike). */
  tokensPerSecond: number | null;
  samples: number;
}

function ewma(previous: number | null, sample: number): number {
  return previous === null ? sample : previous + EWMA_WEIGHT * (sample - previous);
}

/**
 * The Router's live view of its providers in this process: consecutive
 * failures put a provider in cooldown for a while, and every successful
 * response updates the exponentially weighted speed of its mapping, which
 * `:fastest` ranks by.
 */
export function createLiveStats({
  clock,
  failuresBeforeCooldown,
  cooldownMs,
}: {
  clock: () => number;
  failuresBeforeCooldown: number;
  cooldownMs: number;
}) {
  const failures = new Map<string, number>();
  const coolingUntil = new Map<string, number>();
  const stats = new Map<string, MappingStats>();
  const key = (provider: string, model: string) => `${provider}\u0000${model}`;

  return {
    isCooling(provider: string): boolean {
      const until = coolingUntil.get(provider);
      return until !== undefined && until > clock();
    },
    recordFailure(provider: string): void {
      const count = (failures.get(provider) ?? 0) + 1;
      failures.set(provider, count);
      if (count >= failuresBeforeCooldown) {
        coolingUntil.set(provider, clock() + cooldownMs);
        failures.set(provider, 0);
      }
    },
    recordSuccess(
      provider: string,
      model: string,
      sample: { ttftMs: number; outputTokens: number | null; generationMs: number },
    ): void {
      failures.delete(provider);
      coolingUntil.delete(provider);
      const previous = stats.get(key(provider, model)) ?? { ttftMs: null, tokensPerSecond: null, samples: 0 };
      const speed =
        sample.outputTokens && sample.outputTokens > 0
          ? (sample.outputTokens * 1000) / Math.max(sample.generationMs, 1)
          : null;
      stats.set(key(provider, model), {
        ttftMs: ewma(previous.ttftMs, sample.ttftMs),
        tokensPerSecond: speed === null ? previous.tokensPerSecond : ewma(previous.tokensPerSecond, speed),
        samples: previous.samples + 1,
      });
    },
    stats(provider: string, model: string): MappingStats {
      return stats.get(key(provider, model)) ?? { ttftMs: null, tokensPerSecond: null, samples: 0 };
    },
  };
}

export type LiveStats = ReturnType<typeof createLiveStats>;
