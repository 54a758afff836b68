import type { Logger } from "pino";
import type { StorageService } from "./storage.service.js";

/**
 * Runs the LFS collector every `intervalSeconds` (0: never), one pass at a
 * time, and logs what each pass freed. `stop()` waits for a running pass.
 */
export function createLfsCollector({
  storage,
  intervalSeconds,
  logger,
}: {
  storage: StorageService;
  intervalSeconds: number;
  logger: Logger;
}) {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;

  const pass = () => {
    if (running) return;
    running = storage
      .collect()
      .then(({ unlinked, freedBytes }) => {
        if (unlinked > 0) logger.info({ unlinked, freedBytes }, "LFS collector freed unreferenced objects");
      })
      .catch((err: unknown) => logger.error({ err: (err as Error).message }, "LFS collector pass failed"))
      .finally(() => {
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
      await running;
    },
  };
}
