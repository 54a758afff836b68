import type { LoggerOptions } from "pino";

/**
 * Structured JSON logs. Credentials can never reach them: the request
 * serializer records no headers, and the redaction list guards any header
 * object that is logged deliberately.
 */
export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: {
      paths: [
        "req.headers.authorization",
        "req.headers.cookie",
        "res.headers['set-cookie']",
        "headers.authorization",
        "headers.cookie",
        "password",
        "token",
      ],
      censor: "[redacted]",
    },
  };
}
