import pino, { type Logger } from "pino";
import type { Config, Surface } from "./config.js";
import { CoalescedLines, FdSink, loggerOptions } from "./logger.js";
import { createHub, createRateLimiter } from "./app/create-hub.js";
import { SURFACE_BUILDERS, type Listener } from "./app/surfaces.js";
import { hubVersion } from "./version.js";

/**
 * The hub's log: JSON lines on stdout (or another descriptor), at the
 * configured level, written asynchronously and together under load
 * (`CoalescedLines`); what waits is written when the process exits.
 */
export function createLogger(config: Readonly<Config>, destination: number = 1): Logger {
  const lines = new CoalescedLines(new FdSink(destination));
  return pino(loggerOptions(config.logLevel), lines);
}

/**
 * Everything `serve` runs besides its listeners: the services on the migrated
 * database, the rate limiters and the git hooks. `deps` builds any surface;
 * `startWork` starts the Hub API's background work (the webhook outbox, the
 * LFS collector); `close` stops that work and closes the stores. The tests'
 * in-process hub is built from it too, so it runs the app as `serve` wires it.
 */
export async function prepareServe(config: Readonly<Config>, logger: Logger) {
  const hub = await createHub(config, logger, {
    mfaFailures: createRateLimiter(config, config.mfa.failures, logger, { failClosed: true }),
    cacheReads: true,
  });
  const rateLimiter = createRateLimiter(config, config.rateLimit, logger);
  const downloadRateLimiter = createRateLimiter(config, config.downloadRateLimit, logger);

  await hub.storage.installHooks();

  return {
    deps: { ...hub, config, rateLimiter, downloadRateLimiter, version: hubVersion() },
    startWork(): void {
      hub.deliveries.start();
      hub.lfsCollector.start();
      if (config.discovery.upkeepIntervalSeconds > 0) hub.discoveryUpkeep.start();
    },
    async close(): Promise<void> {
      await hub.deliveries.stop();
      await hub.lfsCollector.stop();
      await hub.discoveryUpkeep.stop();
      await hub.downloads.flush();
      await rateLimiter.close();
      await downloadRateLimiter.close();
      await hub.close();
    },
  };
}

/**
 * Starts the requested surfaces, each on its own listener, and stops them
 * cleanly on SIGTERM or SIGINT: stop accepting, finish in-flight requests,
 * close the stores, exit 0.
 */
export async function serve(config: Readonly<Config>, surfaces: readonly Surface[]): Promise<void> {
  const logger = createLogger(config);
  const prepared = await prepareServe(config, logger);

  const apps: Listener[] = [];
  for (const surface of surfaces) {
    const app = await SURFACE_BUILDERS[surface](prepared.deps);
    const url = await app.listen();
    logger.info({ surface, url }, "listening");
    apps.push(app);
  }

  // The Hub API's processes work the webhook outbox; other surfaces only add to it.
  if (surfaces.includes("hub")) prepared.startWork();

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    await Promise.all(apps.map((app) => app.close()));
    await prepared.close();
    logger.info("stopped");
    logger.flush(() => process.exit(0));
  };
  process.once("SIGTERM", (signal) => void stop(signal));
  process.once("SIGINT", (signal) => void stop(signal));
}
