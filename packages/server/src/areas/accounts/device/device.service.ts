import { randomUUID } from "node:crypto";
import {
  DEVICE_CODE_GRANT_TYPE,
  DEVICE_ROLES,
  SCOPES,
  type Scope,
  type TokenRequest,
  type TokenResponse,
} from "@hub/api";
import { digestsEqual, hashSecret, randomBase62, randomString } from "../../../auth/secrets.js";
import type { DeviceFlowConfig } from "../../../config.js";
import type { Db } from "../../../db/database.js";
import type { DeviceCodeRow } from "../../../db/schema.js";
import { HubError, badRequest, conflict } from "../../../errors.js";
import type { TokensService } from "../tokens/tokens.service.js";
import { deviceRepository } from "./device.repository.js";

/** No vowels (no words) and no look-alikes such as 0/O or 1/I (RFC 8628 §6.1): 20^8 codes. */
const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
const USER_CODE_LENGTH = 8;
/** 43 base62 characters carry 256 bits. */
const DEVICE_CODE_LENGTH = 43;
/** Expired codes are kept a day, so a late poll still hears `expired_token` rather than `invalid_grant`. */
const KEEP_EXPIRED_MS = 86_400_000;

/** What a device sign-in asks for: a role token, or a fine-grained token with these scopes. */
export type DeviceGrant = { role: (typeof DEVICE_ROLES)[number] } | { scopes: Scope[] };

/** A pending sign-in, as the approval page shows it. */
export interface DeviceRequest {
  userCode: string;
  clientId: string;
  grant: DeviceGrant;
  expiresAt: string;
}

const isRole = (value: string): value is (typeof DEVICE_ROLES)[number] =>
  DEVICE_ROLES.some((role) => role === value);
const isScope = (value: string): value is Scope => SCOPES.some((scope) => scope === value);

/**
 * Reads a `scope` parameter: one role alone, or distinct spec scopes separated
 * by spaces. Absent means the `write` role, what an interactive CLI needs.
 */
function parseScope(scope: string | undefined): DeviceGrant {
  if (scope === undefined) return { role: "write" };
  const values = scope.split(" ").filter(Boolean);
  const [only] = values;
  if (values.length === 1 && only !== undefined && isRole(only)) return { role: only };
  const scopes = values.filter(isScope);
  if (values.length === 0 || scopes.length !== values.length || new Set(scopes).size !== scopes.length) {
    throw badRequest(
      "invalid_scope",
      `Ask for "read" or "write" alone, or for distinct scopes separated by spaces from: ${SCOPES.join(" ")}.`,
      "scope",
    );
  }
  return { scopes };
}

/** The grant as the `scope` value of the token response. */
function grantScope(grant: DeviceGrant): string {
  return "role" in grant ? grant.role : grant.scopes.join(" ");
}

/** Upper case, dash and spaces removed: how a code is stored and looked up, however it was typed. */
function normalizeUserCode(typed: string): string {
  return typed.toUpperCase().replace(/[\s-]/g, "");
}

/** `ABCD-EFGH`, as people read and type it. */
function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

function grantOf(row: DeviceCodeRow): DeviceGrant {
  if (row.scopes === null) return { role: row.role === "read" ? "read" : "write" };
  return { scopes: JSON.parse(row.scopes) as Scope[] };
}

function toDeviceRequest(row: DeviceCodeRow): DeviceRequest {
  return {
    userCode: formatUserCode(row.user_code),
    clientId: row.client_id,
    grant: grantOf(row),
    expiresAt: row.expires_at,
  };
}

const codeUsed = () =>
  conflict(
    "user_code_used",
    "This code was already approved or denied; start the sign-in in your terminal again if you need a new one.",
    "user_code",
  );
const missing = (field: string) =>
  badRequest("invalid_request", `The body field "${field}" is required.`, field);
const invalidGrant = () =>
  badRequest(
    "invalid_grant",
    "The device code is unknown, was already used, or belongs to another client_id; start a new sign-in.",
  );

export interface DeviceServiceDeps {
  db: Db;
  clock: () => Date;
  tokens: TokensService;
  config: DeviceFlowConfig;
}

/**
 * The OAuth 2.0 device authorization grant (RFC 8628): a client gets a device
 * code and a user code, the person approves the user code in a browser, and
 * the client's polling exchanges the device code for an access token once.
 */
export function createDeviceService({ db, clock, tokens, config }: DeviceServiceDeps) {
  /** The pending, unexpired sign-in a typed user code names; throws what the page should say otherwise. */
  async function pending(typed: string): Promise<DeviceCodeRow> {
    const row = await deviceRepository.findByUserCode(db, normalizeUserCode(typed));
    if (!row) {
      throw new HubError(
        404,
        "unknown_user_code",
        "No sign-in has this code; check it against the code your terminal shows.",
        { field: "user_code" },
      );
    }
    if (Date.parse(row.expires_at) <= clock().getTime()) {
      throw badRequest(
        "expired_user_code",
        "This code has expired; start the sign-in in your terminal again for a new one.",
        "user_code",
      );
    }
    if (row.status !== "pending") throw codeUsed();
    return row;
  }

  async function record(
    row: DeviceCodeRow,
    decision: Pick<DeviceCodeRow, "status" | "user_id" | "granted_scopes">,
  ): Promise<DeviceRequest> {
    if (!(await deviceRepository.decide(db, row.id, clock().toISOString(), decision))) {
      // Decided or expired since it was read: say which.
      await pending(row.user_code);
      throw codeUsed();
    }
    return toDeviceRequest(row);
  }

  return {
    /** Starts a sign-in (RFC 8628 §3.2); the device code leaves the hub only in this answer. */
    async issue(clientId: string, scope: string | undefined) {
      const grant = parseScope(scope);
      const now = clock();
      await deviceRepository.deleteExpired(db, new Date(now.getTime() - KEEP_EXPIRED_MS).toISOString());
      const deviceCode = randomBase62(DEVICE_CODE_LENGTH);
      for (let attempt = 1; ; attempt++) {
        const userCode = randomString(USER_CODE_ALPHABET, USER_CODE_LENGTH);
        try {
          await deviceRepository.insert(db, {
            id: randomUUID(),
            device_code_hash: hashSecret(deviceCode),
            user_code: userCode,
            client_id: clientId,
            role: "role" in grant ? grant.role : null,
            scopes: "scopes" in grant ? JSON.stringify(grant.scopes) : null,
            status: "pending",
            user_id: null,
            granted_scopes: null,
            interval_seconds: config.pollIntervalSeconds,
            last_polled_at: null,
            created_at: now.toISOString(),
            expires_at: new Date(now.getTime() + config.codeTtlSeconds * 1000).toISOString(),
          });
          return {
            deviceCode,
            userCode: formatUserCode(userCode),
            expiresIn: config.codeTtlSeconds,
            interval: config.pollIntervalSeconds,
          };
        } catch (err) {
          // A user code still held by another sign-in (one chance in billions): draw again.
          if (attempt >= 3 || !(await deviceRepository.findByUserCode(db, userCode))) throw err;
        }
      }
    },

    /** What the approval page shows for a typed user code. */
    async find(userCode: string): Promise<DeviceRequest> {
      return toDeviceRequest(await pending(userCode));
    },

    /**
     * Approves for the account; a fine-grained request may be narrowed to some
     * of its scopes (at least one), a role request is approved as asked.
     */
    async approve(userId: string, userCode: string, chosen: readonly string[]): Promise<DeviceRequest> {
      const row = await pending(userCode);
      const grant = grantOf(row);
      let granted: Scope[] | null = null;
      if ("scopes" in grant) {
        const requested: readonly string[] = grant.scopes;
        if (chosen.length === 0 || chosen.some((scope) => !requested.includes(scope))) {
          throw badRequest(
            "invalid_scope",
            "Keep at least one of the requested scopes checked, and only those.",
            "scope",
          );
        }
        granted = grant.scopes.filter((scope) => chosen.includes(scope));
      }
      return record(row, {
        status: "approved",
        user_id: userId,
        granted_scopes: granted && JSON.stringify(granted),
      });
    },

    async deny(userId: string, userCode: string): Promise<DeviceRequest> {
      return record(await pending(userCode), { status: "denied", user_id: userId, granted_scopes: null });
    },

    /** One poll of the token endpoint (RFC 8628 §3.4, §3.5). */
    async exchange(request: TokenRequest): Promise<TokenResponse> {
      if (request.grant_type !== DEVICE_CODE_GRANT_TYPE) {
        throw badRequest(
          "unsupported_grant_type",
          `Only grant_type=${DEVICE_CODE_GRANT_TYPE} is supported here.`,
        );
      }
      const { device_code: deviceCode, client_id: clientId } = request;
      if (deviceCode === undefined) throw missing("device_code");
      if (clientId === undefined) throw missing("client_id");
      const now = clock();
      const digest = hashSecret(deviceCode);
      const row = await deviceRepository.findByDeviceCodeHash(db, digest);
      if (
        !row ||
        !digestsEqual(row.device_code_hash, digest) ||
        row.client_id !== clientId ||
        row.status === "consumed"
      ) {
        throw invalidGrant();
      }
      if (Date.parse(row.expires_at) <= now.getTime()) {
        throw badRequest("expired_token", "The sign-in expired before it was approved; start a new one.");
      }
      if (row.status === "denied") {
        throw badRequest("access_denied", "The sign-in was denied in the browser.");
      }
      if (row.status === "pending") {
        const earliest = new Date(now.getTime() - row.interval_seconds * 1000).toISOString();
        if (await deviceRepository.notePoll(db, row.id, now.toISOString(), earliest)) {
          throw badRequest(
            "authorization_pending",
            "Waiting for the sign-in to be approved in the browser; poll again after the interval.",
          );
        }
        await deviceRepository.slowDown(db, row.id, now.toISOString());
        throw badRequest(
          "slow_down",
          `Polled too soon; wait ${row.interval_seconds + 5} seconds between polls from now on.`,
        );
      }
      const userId = row.user_id;
      if (userId === null || !(await deviceRepository.consume(db, row.id))) throw invalidGrant();
      const grant: DeviceGrant =
        row.granted_scopes === null ? grantOf(row) : { scopes: JSON.parse(row.granted_scopes) as Scope[] };
      const lifetimeSeconds = config.tokenTtlDays * 86_400;
      const token = await tokens.create(userId, {
        name: `${row.client_id} device login (${now.toISOString().slice(0, 10)})`,
        expiresAt: new Date(now.getTime() + lifetimeSeconds * 1000).toISOString(),
        ...grant,
      });
      return {
        access_token: token.token,
        token_type: "bearer",
        scope: grantScope(grant),
        expires_in: lifetimeSeconds,
      };
    },
  };
}

export type DeviceService = ReturnType<typeof createDeviceService>;
