import type { ServerResponse } from "node:http";
import { renderRouterError, type HubError } from "../errors.js";

/** Writes a Router-generated failure as the OpenAI error object, with the headers every response carries. */
export function sendRouterError(res: ServerResponse, error: HubError): void {
  if (res.headersSent) return;
  const body = JSON.stringify(renderRouterError(error));
  res.writeHead(error.status, {
    ...error.headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}
