import type { Logger } from "pino";
import type { StorageService } from "./storage.service.js";

/** A collector run right after each LFS pass (the Xet collector), which says what it freed. */
export interface FollowingCollector {
  name: string;
  /** `signal` is aborted when the process stops: a long pass gives up between two removals. */
  collect(signal: AbortSignal): Promise<{ freedBytes: number } & Record<string, number>>;
}

/**
 * Runs the LFS collector every `intervalSeconds` (0: never), one pass at a
 * time, then each of `then` (the LFS pass unlinks what they look for), and
 * logs what each freed. One that fails is logged and the next still runs.
 * `stop()` aborts a running pass's followers and waits for it.
 */
export function createLfsCollector({
  storage,
  then = [],
  intervalSeconds,
  logger,
}: {
  storage: StorageService;
  then?: FollowingCollector[];
  intervalSeconds: number;
  logger: Logger;
}) {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  const stopping = new AbortController();

  const pass = () => {
    if (running) return;
    running = (async () => {
      try {
        const { unlinked, freedBytes } = await storage.collect();
        if (unlinked > 0) logger.info({ unlinked, freedBytes }, "LFS collector freed unreferenced objects");
      } catch (err) {
        logger.error({ err: (err as Error).message }, "LFS collector pass failed");
      }
      for (const follower of then) {
        if (stopping.signal.aborted) return;
        try {
          const freed = await follower.collect(stopping.signal);
          if (Object.values(freed).some((n) => n > 0))
            logger.info(freed, `${follower.name} collector freed unused data`);
        } catch (err) {
          if (!stopping.signal.aborted)
            logger.error({ err: (err as Error).message }, `${follower.name} collector pass failed`);
        }
      }
    })().finally(() => {
      running = null;
    });
  };

  return {
    start(): void {
      if (intervalSeconds <= 0 || timer) return;
      timer = setInterval(pass, intervalSeconds * 1000);
      timer.unref();
    },
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = null;
      stopping.abort();
      await running;
    },
  };
}
