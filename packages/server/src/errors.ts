/**
 * The one error type of the hub. `code` is a stable snake_case key clients can
 * branch on; `message` tells the user what went wrong and what to do.
 */
export class HubError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "HubError";
  }
}

export const badRequest = (code: string, message: string, field?: string) =>
  new HubError(400, code, message, field);

export const notFound = (message: string) => new HubError(404, "not_found", message);

export const unauthenticated = (code: string, message: string) =>
  new HubError(401, code, message, undefined, { "www-authenticate": 'Bearer realm="hub"' });

export const forbidden = (code: string, message: string) => new HubError(403, code, message);

export const conflict = (code: string, message: string, field?: string) =>
  new HubError(409, code, message, field);
