import { LogController, type FastifyReply, type FastifyRequest } from "fastify";

/**
 * One access-log line per request, written when it completes, instead of
 * Fastify's two. It records method, path, status and time: no query string
 * (signed transfer URLs carry their authorization there), no headers, no
 * bodies, so no credential can reach the log.
 */
export class AccessLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const entry = {
      method: request.method,
      path: request.url.split("?", 1)[0],
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
    };
    if (error) request.log.error({ ...entry, err: error }, "request failed");
    else request.log.info(entry, "request");
  }
}
