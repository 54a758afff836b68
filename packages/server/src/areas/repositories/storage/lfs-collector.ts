import type { Logger } from "pino";
import type { StorageService } from "./storage.service.js";

/** A collector run right after each LFS pass (the Xet collector), which says what it freed. */
export interface FollowingCollector {
  name: string;
  collect(): Promise<{ freedBytes: number } & Record<string, number>>;
}

/**
 * Runs the LFS collector every `intervalSeconds` (0: never), one pass at a
 * time, then each of `then` (the LFS pass unlinks what they look for), and
 * logs what each freed. `stop()` waits for a running pass.
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

  const pass = () => {
    if (running) return;
    running = storage
      .collect()
      .then(async ({ unlinked, freedBytes }) => {
        if (unlinked > 0) logger.info({ unlinked, freedBytes }, "LFS collector freed unreferenced objects");
        for (const follower of then) {
          const freed = await follower.collect();
          if (Object.values(freed).some((n) => n > 0))
            logger.info(freed, `${follower.name} collector freed unused data`);
        }
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
