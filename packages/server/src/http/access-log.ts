import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from "fastify";
import type { Bindings, ChildLoggerOptions } from "pino";
import { infoLineWriter } from "../logger.js";

/**
 * One access-log line per request, written when it completes, instead of
 * Fastify's two. It records method, path, status and time: no query string
 * (signed transfer URLs carry their authorization there), no headers, no
 * bodies, so no credential can reach the log.
 *
 * The line of a request that succeeded is what pino would write for
 * `request.log.info({method, path, status, ms}, "request")`, built here
 * directly (`infoLineWriter`): on a hot path pino's generic serialization and
 * the per-request child logger cost more than the request's own work. A failure goes through pino, which
 * serializes the error.
 */
export class AccessLog extends LogController {
  private readonly line: ReturnType<typeof infoLineWriter>;
  /** The request id's label, as JSON. */
  private readonly label: string;

  constructor(logger: FastifyBaseLogger) {
    super();
    this.line = infoLineWriter(logger);
    this.label = JSON.stringify(this.requestIdLogLabel);
  }

  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const path = request.url.split("?", 1)[0] ?? "";
    const ms = Math.round(reply.elapsedTime * 10) / 10;
    // A download handed to nginx (X-Accel-Redirect) says so: its 200 carried no bytes from the hub.
    const sentBy = reply.getHeader("x-accel-redirect") === undefined ? undefined : "nginx";
    if (error) {
      request.log.error(
        { method: request.method, path, status: reply.statusCode, ms, err: error },
        "request failed",
      );
    } else if (this.line) {
      this.line(
        `${this.label}:${JSON.stringify(request.id)},"method":${JSON.stringify(request.method)},"path":${JSON.stringify(path)},"status":${reply.statusCode},"ms":${ms},${sentBy ? '"sentBy":"nginx",' : ""}`,
        "request",
      );
    } else {
      request.log.info({ method: request.method, path, status: reply.statusCode, ms, sentBy }, "request");
    }
  }
}

type LogArgs = Parameters<FastifyBaseLogger["info"]>;

/**
 * A request's logger, made only when something logs through it: most requests
 * log nothing but their access line, and a pino child costs a few
 * microseconds to make.
 */
class LazyChildLogger {
  private made: FastifyBaseLogger | null = null;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get logger(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.logger.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  fatal(...args: LogArgs): void {
    Reflect.apply(this.logger.fatal, this.logger, args);
  }

  error(...args: LogArgs): void {
    Reflect.apply(this.logger.error, this.logger, args);
  }

  warn(...args: LogArgs): void {
    Reflect.apply(this.logger.warn, this.logger, args);
  }

  info(...args: LogArgs): void {
    Reflect.apply(this.logger.info, this.logger, args);
  }

  debug(...args: LogArgs): void {
    Reflect.apply(this.logger.debug, this.logger, args);
  }

  trace(...args: LogArgs): void {
    Reflect.apply(this.logger.trace, this.logger, args);
  }

  silent(...args: LogArgs): void {
    Reflect.apply(this.logger.silent, this.logger, args);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

/** Fastify's request loggers, made lazily (`LazyChildLogger`). */
export function lazyChildLoggers(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return new LazyChildLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
}
