import { DEVICE_CODE_GRANT_TYPE, type DeviceAuthorizationResponse, type TokenResponse } from "@hub/api";
import { discover, send, type Connection } from "./connection.js";
import { HubError, describeErrorBody, errorFromResponse } from "./errors.js";

/** The client id the `hub` CLI presents to the device flow. */
export const CLI_CLIENT_ID = "hub-cli";

/** RFC 8628 section 3.2: what to show the person, and what to poll with (`@hub/api` schema). */
export type DeviceAuthorization = DeviceAuthorizationResponse;

/** The token the device flow ends with (RFC 6749 section 5.1). */
export type DeviceToken = TokenResponse;

export interface StartDeviceFlowParams {
  connection: Connection;
  /** `write`, `read`, or fine-grained scopes such as `repo:read`; joined with spaces. */
  scopes?: string[];
  clientId?: string;
  signal?: AbortSignal;
}

/** `POST device_authorization_endpoint` (RFC 8628 section 3.1): asks the hub for a user code to approve in a browser. */
export async function startDeviceFlow(params: StartDeviceFlowParams): Promise<DeviceAuthorization> {
  const { connection, signal } = params;
  const { device_authorization_endpoint } = await discover(connection, signal);
  if (!device_authorization_endpoint) {
    throw new HubError(0, "This hub does not offer the device flow; log in with --token instead.", {
      code: "device_flow_unavailable",
      url: connection.endpoint,
    });
  }
  const response = await send(connection, {
    method: "POST",
    path: device_authorization_endpoint,
    auth: false,
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
    body: new URLSearchParams({
      client_id: params.clientId ?? CLI_CLIENT_ID,
      scope: (params.scopes ?? ["write"]).join(" "),
    }).toString(),
    signal,
  });
  return (await response.json()) as DeviceAuthorization;
}

export interface PollDeviceTokenParams {
  connection: Connection;
  authorization: DeviceAuthorization;
  clientId?: string;
  signal?: AbortSignal;
  /** Waits between polls; replaceable in tests. */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Polls the token endpoint (RFC 8628 section 3.4) until the person approves or
 * denies: `authorization_pending` waits the interval, `slow_down` adds five
 * seconds to it, and `access_denied`, `expired_token` or `invalid_grant` throw
 * a {@link HubError} with that code.
 */
export async function pollDeviceToken(params: PollDeviceTokenParams): Promise<DeviceToken> {
  const { connection, authorization, signal } = params;
  const { token_endpoint } = await discover(connection, signal);
  if (!token_endpoint) {
    throw new HubError(0, "This hub does not publish a token endpoint.", { code: "device_flow_unavailable" });
  }
  const sleep = params.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  let interval = Math.max(authorization.interval, 1) * 1000;
  const deadline = Date.now() + authorization.expires_in * 1000;
  for (;;) {
    await sleep(interval);
    signal?.throwIfAborted();
    const response = await send(connection, {
      method: "POST",
      path: token_endpoint,
      auth: false,
      accept: [400, 401],
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams({
        grant_type: DEVICE_CODE_GRANT_TYPE,
        device_code: authorization.device_code,
        client_id: params.clientId ?? CLI_CLIENT_ID,
      }).toString(),
      signal,
    });
    const body = (await response.json().catch(() => undefined)) as unknown;
    if (response.ok) return body as DeviceToken;
    const { code } = describeErrorBody(body);
    if (code === "authorization_pending" && Date.now() < deadline) continue;
    if (code === "slow_down") {
      interval += 5000;
      continue;
    }
    const error = errorFromResponse(response, body, token_endpoint);
    const messages: Record<string, string> = {
      access_denied: "The login was denied in the browser.",
      expired_token: "The login code expired before it was approved; run hub login again.",
      authorization_pending: "The login code expired before it was approved; run hub login again.",
      invalid_grant: "The hub refused this login code; run hub login again.",
    };
    throw new HubError(response.status, messages[error.code] ?? error.message, {
      code: error.code === "authorization_pending" ? "expired_token" : error.code,
      requestId: error.requestId,
      url: token_endpoint,
    });
  }
}
