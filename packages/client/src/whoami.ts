import type { Whoami } from "@hub/api";
import { sendJson, type Connection } from "./connection.js";

export interface WhoamiParams {
  connection: Connection;
  signal?: AbortSignal;
}

/** `GET /api/whoami`: who the token belongs to, its organizations, and the token's role and scopes. */
export function whoami({ connection, signal }: WhoamiParams): Promise<Whoami> {
  return sendJson<Whoami>(connection, { path: "/api/whoami", signal });
}
