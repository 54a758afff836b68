import { hash, timingSafeEqual } from "node:crypto";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import { noteArrival } from "../db/change-epoch.js";
import type { Authorize } from "../auth/authorizer.js";
import type { Principal } from "../auth/credential.js";
import { HubError, badRequest } from "../errors.js";
import { BILLING_MODES, type RouterDeps } from "./contracts.js";
import { sendRouterError } from "./router-error.js";
import { MAX_JSON_DEPTH, jsonNestingDepth, tooDeep } from "../http/json-body.js";
import { infoLineWriter } from "../logger.js";
import { timeOrderedUuid } from "../db/time-ordered-id.js";
import { catalogMappings, listCatalog } from "./catalog-listing.js";
import { chooseRoute, type BillOwner } from "./billing.js";
import { dispatch } from "./dispatch.js";
import { TASK_ENDPOINTS, type Task } from "./providers-file.js";

const TASK_OF_PATH = new Map<string, Task>(
  Object.entries(TASK_ENDPOINTS).map(([task, endpoint]) => [endpoint, task as Task]),
);

const EXPOSED_HEADERS = "Inference-Id, X-Service-Provider, X-Service-Route, Retry-After";

function invalidApiKey(message: string): HubError {
  return new HubError(401, "invalid_api_key", message, {
    headers: {
      "www-authenticate": 'Bearer realm="router"',
    },
  });
}

function sha256(value: string): Buffer {
  return hash("sha256", value, "buffer");
}

/** The most of a refused body read and dropped, and for how long, before the connection is closed. */
const DRAIN_BYTES = 64 * 1024 * 1024;
const DRAIN_MS = 10_000;

/**
 * Reads a body's bytes while they stream in, stopping at the limit without
 * destroying the request, so the 413 can still be answered on its connection.
 */
function readBody(req: IncomingMessage, limit: number, tooLarge: () => HubError): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        stop();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      stop();
      reject(err);
    };
    req.on("data", onData);
    req.once("end", onEnd);
    req.once("error", onError);
  });
}

/**
 * Drops the rest of a refused body so the client, still sending, reads the
 * answer instead of a reset (a server that closes a connection with unread
 * data makes the kernel reset it); past DRAIN_BYTES or DRAIN_MS the
 * connection is closed anyway. A body that ends in time leaves it reusable.
 */
function drainRefusedBody(req: IncomingMessage): void {
  if (req.complete) return;
  let drained = 0;
  const giveUp = () => req.socket.destroy();
  const timer = setTimeout(giveUp, DRAIN_MS).unref();
  req.on("data", (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_BYTES) {
      clearTimeout(timer);
      giveUp();
    }
  });
  req.once("end", () => clearTimeout(timer));
  req.resume();
}

/**
 * Reads a JSON object body while it streams in, refusing it with 413 as soon
 * as it passes the limit rather than after buffering it.
 */
async function readJsonBody(req: IncomingMessage, limit: number): Promise<Record<string, unknown>> {
  const tooLarge = () =>
    new HubError(413, "request_too_large", `The body is larger than ${limit} bytes; send a smaller request.`);
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(req.headers["content-type"] ?? "")) {
    throw badRequest("invalid_json", "Send a JSON object with Content-Type: application/json.");
  }
  const bytes = await readBody(req, limit, tooLarge);
  const text = bytes.toString("utf8");
  if (jsonNestingDepth(text) > MAX_JSON_DEPTH) throw tooDeep();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw badRequest("invalid_json", "The body is not valid JSON; send a JSON object.");
  }
  if (!body || typeof body !== "object" || Array.isArray(body)) {
    throw badRequest("invalid_json", "The body must be a JSON object.");
  }
  return body as Record<string, unknown>;
}

/**
 * The inference Router: an OpenAI-compatible HTTP surface on its own listener
 * (https://platform.openai.com/docs/api-reference). Built on node:http rather
 * than the Hub's framework because every microsecond here is added to every
 * model call; it shares the Hub's tokens, authorization and stores.
 */
export function createRouterServer(deps: RouterDeps) {
  const { config, logger, catalog } = deps;
  const providerKeyDigests = config.providers.map((p) => sha256(p.apiKey));

  async function authenticate(req: IncomingMessage): Promise<Principal> {
    const header = req.headers.authorization ?? "";
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) {
      throw invalidApiKey(
        "Send a hub access token with the inference:run scope as Authorization: Bearer <token>.",
      );
    }
    const secret = match[1];
    const principal = await deps.tokens.resolve(secret);
    if (!principal) {
      // Only a secret that is no token is compared with the providers' keys, to say what was sent.
      const digest = sha256(secret);
      if (providerKeyDigests.some((known) => timingSafeEqual(known, digest))) {
        throw invalidApiKey("That is a provider credential, not a hub token; send your hub access token.");
      }
      throw invalidApiKey(
        "The token is invalid, revoked or expired; create a token with the inference:run scope.",
      );
    }
    return principal;
  }

  /** The account or organization the request bills, checked through the one authorization function. */
  async function billOwnerOf(req: IncomingMessage, principal: Principal): Promise<BillOwner> {
    const header = req.headers["x-service-bill-to"];
    const credential = principal.credential;
    const boundary = credential.type === "access_token" ? credential.organizationId : null;
    if (header === undefined && boundary === null) {
      await authorizeInference(principal, { type: "account", userId: principal.userId });
      return { type: "user", id: principal.userId, handle: principal.handle };
    }
    const org =
      header !== undefined
        ? await deps.inference.organization({ handle: String(header).trim().toLowerCase() })
        : await deps.inference.organization({ id: boundary ?? "" });
    if (!org) {
      throw badRequest(
        "invalid_bill_to",
        `X-Service-Bill-To names no organization ("${String(header)}"); use an organization handle.`,
      );
    }
    await authorizeInference(principal, { type: "organization", id: org.id, handle: org.handle });
    if (org.plan !== "team" && org.plan !== "enterprise") {
      throw new HubError(
        403,
        "bill_to_not_allowed",
        `${org.handle} is on the ${org.plan} plan; only team and enterprise organizations can be billed for inference.`,
      );
    }
    return { type: "org", id: org.id, handle: org.handle };
  }

  async function authorizeInference(principal: Principal, resource: Parameters<Authorize>[2]): Promise<void> {
    try {
      await deps.authorize(principal, "inference:run", resource);
    } catch (err) {
      if (err instanceof HubError && err.code === "insufficient_scope") {
        throw invalidApiKey("This token lacks the inference:run scope; create a token that has it.");
      }
      throw err;
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse, inferenceId: string): Promise<void> {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (req.method === "GET" && path === "/health") {
      res.writeHead(204).end();
      return;
    }
    if (req.method === "GET" && path === "/v1/models") {
      const principal = await authenticate(req);
      await billOwnerOf(req, principal);
      const body = JSON.stringify(
        listCatalog(catalog, await deps.stats.view(catalogMappings(catalog)), deps.startedAt),
      );
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    const task = req.method === "POST" ? TASK_OF_PATH.get(path) : undefined;
    if (!task) {
      throw new HubError(
        404,
        "unknown_url",
        `${req.method} ${path} is not a Router operation; use POST /v1/chat/completions, /v1/responses or /v1/embeddings, or GET /v1/models.`,
      );
    }
    const principal = await authenticate(req);
    const body = await readJsonBody(req, config.bodyLimitBytes);
    const modeHeader = String(req.headers["x-service-inference-billing"] ?? "auto").toLowerCase();
    const mode = BILLING_MODES.find((m) => m === modeHeader);
    if (!mode) {
      throw badRequest("invalid_billing_mode", "X-Service-Inference-Billing must be auto, routed or byok.");
    }
    const stream = body.stream === true;
    if (body.stream !== undefined && typeof body.stream !== "boolean") {
      throw badRequest("invalid_request", "`stream` must be true or false.", "stream");
    }
    if (stream && task === "embeddings") {
      throw badRequest("invalid_request", "Embeddings never stream; drop `stream`.", "stream");
    }
    const route = await chooseRoute({
      deps,
      req,
      body,
      task,
      mode,
      principal,
      owner: await billOwnerOf(req, principal),
    });
    await dispatch({ deps, res, inferenceId, body, task, stream, principal, route });
  }

  /** The Router's line per request, built as pino would write it (`infoLineWriter`). */
  const line = infoLineWriter(logger);
  function logRequest(req: IncomingMessage, res: ServerResponse, inferenceId: string, started: number): void {
    const path = (req.url ?? "").split("?")[0];
    const provider = res.getHeader("x-service-provider");
    const ms = Math.round((performance.now() - started) * 10) / 10;
    if (!line) {
      logger.info(
        { inferenceId, method: req.method, path, status: res.statusCode, provider, ms },
        "router request",
      );
      return;
    }
    line(
      `"inferenceId":${JSON.stringify(inferenceId)},"method":${JSON.stringify(req.method)},"path":${JSON.stringify(path)},"status":${res.statusCode},${provider === undefined ? "" : `"provider":${JSON.stringify(provider)},`}"ms":${ms},`,
      "router request",
    );
  }

  // While draining, every answer still to be written says Connection: close, so keep-alive clients (nginx's
  // upstream connections, SDKs) let go instead of keeping the process alive with request after request.
  let closing = false;
  const unanswered = new Set<ServerResponse>();

  const server = http.createServer((req, res) => {
    noteArrival();
    if (closing) res.shouldKeepAlive = false;
    unanswered.add(res);
    // Time-ordered: the usage ledger's key, appended at the end of its index (`timeOrderedUuid`).
    const inferenceId = `inf_${timeOrderedUuid()}`;
    const started = performance.now();
    res.setHeader("inference-id", inferenceId);
    res.setHeader("cache-control", "no-store");
    res.setHeader("x-content-type-options", "nosniff");
    res.setHeader("access-control-allow-origin", "*");
    res.setHeader("access-control-expose-headers", EXPOSED_HEADERS);
    if (req.method === "OPTIONS") {
      res.writeHead(204, {
        "access-control-allow-methods": "GET, POST, OPTIONS",
        "access-control-allow-headers":
          req.headers["access-control-request-headers"] ?? "authorization, content-type",
        "access-control-max-age": "600",
      });
      res.end();
      settled(res);
      logRequest(req, res, inferenceId, started);
      return;
    }
    // Logged once the answer is complete (handled, or refused), from the promise rather than a
    // listener on the response: a "finish" listener per request cost the Router about 5% of its time.
    handle(req, res, inferenceId)
      .catch((err: unknown) => {
        const error =
          err instanceof HubError
            ? err
            : new HubError(
                502,
                "router_error",
                "The Router failed to handle this request; retry with backoff.",
              );
        if (!(err instanceof HubError)) logger.error({ err, inferenceId }, "router request failed");
        // Whatever of the body was not read is dropped, so the client reads this answer, not a reset.
        if (!req.complete) drainRefusedBody(req);
        sendRouterError(res, error);
      })
      .finally(() => {
        settled(res);
        logRequest(req, res, inferenceId, started);
      });
  });
  /**
   * A request answered. While draining, a connection whose answer went out as keep-alive (begun before the
   * drain, a stream say) is closed once that answer is out, unless the client sent another request meanwhile.
   */
  function settled(res: ServerResponse): void {
    unanswered.delete(res);
    if (!closing) return;
    if (res.writableFinished) server.closeIdleConnections();
    else res.once("finish", () => server.closeIdleConnections());
  }
  server.keepAliveTimeout = 65_000;

  return {
    async listen(host: string, port: number): Promise<string> {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => resolve());
      });
      const address = server.address();
      const bound = typeof address === "object" && address ? address.port : port;
      return `http://${host.includes(":") ? `[${host}]` : host}:${bound}`;
    },
    async close(): Promise<void> {
      closing = true;
      for (const res of unanswered) if (!res.headersSent) res.shouldKeepAlive = false;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
      await deps.usage.close();
      await Promise.all([...deps.adapters.values()].map((adapter) => adapter.close()));
    },
  };
}
