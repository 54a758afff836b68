import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { AttemptOutcome } from "@hub/api";
import { sql } from "kysely";
import type { Logger } from "pino";
import { Agent, request } from "undici";
import type { Sealer } from "../../../auth/sealed-secret.js";
import type { WebhooksConfig } from "../../../config.js";
import type { Db } from "../../../db/database.js";
import type { WebhookDeliveryRow, WebhookRow } from "../../../db/schema.js";
import { signatureHeaders } from "./signing.js";
import { checkTargetUrl, guardedLookup, isTimeout, refusalIn } from "./target-guard.js";
import { webhooksRepository } from "./webhooks.repository.js";

/** How much of a receiver's answer a receipt keeps. */
const EXCERPT_BYTES = 1024;
/** How often other processes' new deliveries are looked for when nothing is due sooner. */
const POLL_MS = 1000;
/** How long in-flight attempts may finish when the hub stops, before they are cut off. */
const DRAIN_MS = 5000;
/** How often finished deliveries past their retention are removed (and once at start). */
const PRUNE_EVERY_MS = 600_000;

interface AttemptResult {
  outcome: AttemptOutcome;
  statusCode: number | null;
  excerpt: string | null;
  error: string | null;
  retryAfterMs: number | null;
}

/** The first bytes of a body, then the rest is dropped. */
async function excerptOf(body: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= EXCERPT_BYTES) break;
  }
  return Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString("utf8");
}

function retryAfterMs(value: string | string[] | undefined): number | null {
  const seconds = Number(Array.isArray(value) ? value[0] : value);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : null;
}

/**
 * Works the outbox: claims due deliveries with a lease (so several hub
 * processes share it without sending one delivery twice at once), POSTs each
 * signed, records every attempt, retries failures with exponential backoff
 * and jitter (honouring a receiver's Retry-After), and switches off a route
 * that keeps failing. Nothing is lost on a restart: an unfinished delivery
 * stays pending in the database and the next process picks it up.
 */
export function createDeliveryWorker(deps: {
  db: Db;
  clock: () => Date;
  sealer: Sealer;
  config: WebhooksConfig;
  userAgent: string;
  logger: Logger;
}) {
  const { db, clock, config, logger } = deps;
  const agent = new Agent({
    connect: { lookup: guardedLookup(config.allowPrivate), timeout: config.timeoutMs },
    keepAliveTimeout: 4000,
  });
  const inFlight = new Map<string, { abort: AbortController; done: Promise<void> }>();
  let running = false;
  let stopping = false;
  let loopDone: Promise<void> = Promise.resolve();
  let wake: (() => void) | null = null;
  /** Set by a notification that came while the loop was busy, so its next sleep is skipped. */
  let woken = false;

  function notify(): void {
    woken = true;
    wake?.();
  }

  function sleep(ms: number): Promise<void> {
    if (woken) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    });
  }

  function backoffMs(attemptNumber: number, receiverAsked: number | null): number {
    const exponential = Math.min(config.retryMaxMs, config.retryBaseMs * 2 ** (attemptNumber - 1));
    const jittered = exponential * (0.8 + Math.random() * 0.4);
    return Math.min(config.retryMaxMs, Math.max(jittered, receiverAsked ?? 0));
  }

  async function send(
    route: WebhookRow,
    delivery: WebhookDeliveryRow,
    signal: AbortSignal,
  ): Promise<AttemptResult> {
    const timestamp = Math.floor(clock().getTime() / 1000);
    const headers = {
      "content-type": "application/json",
      "user-agent": deps.userAgent,
      ...signatureHeaders(deps.sealer.open(route.sealed_secret), delivery.id, timestamp, delivery.payload),
    };
    try {
      checkTargetUrl(route.url, config.allowPrivate);
      const response = await request(route.url, {
        method: "POST",
        headers,
        body: delivery.payload,
        dispatcher: agent,
        signal: AbortSignal.any([signal, AbortSignal.timeout(config.timeoutMs)]),
        headersTimeout: config.timeoutMs,
        bodyTimeout: config.timeoutMs,
      });
      const excerpt = await excerptOf(response.body);
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return {
        outcome: ok ? "success" : "http_error",
        statusCode: response.statusCode,
        excerpt,
        error: ok ? null : `The receiver answered HTTP ${response.statusCode}.`,
        retryAfterMs: retryAfterMs(response.headers["retry-after"]),
      };
    } catch (err) {
      const refusal = refusalIn(err);
      const cause = (err as { cause?: Error }).cause;
      const outcome: AttemptOutcome = refusal ? "refused" : isTimeout(err) ? "timeout" : "network_error";
      const messages: Record<string, string> = {
        refused: refusal?.message ?? "",
        timeout: `No answer within ${config.timeoutMs} ms.`,
        network_error: `${(err as Error).message}${cause ? ` (${cause.message})` : ""}`,
      };
      return {
        outcome,
        statusCode: null,
        excerpt: null,
        error: messages[outcome] ?? null,
        retryAfterMs: null,
      };
    }
  }

  /** Records one attempt and what follows from it, in one transaction. */
  async function record(
    route: WebhookRow,
    delivery: WebhookDeliveryRow,
    result: AttemptResult,
    attemptedAt: Date,
    durationMs: number,
  ): Promise<void> {
    const now = clock();
    const nowIso = now.toISOString();
    const success = result.outcome === "success";
    const attemptsLeft = delivery.attempts_left - 1;
    // The route's row is locked first, as deleting a route does (its deliveries cascade after it), so the
    // two never wait on each other in opposite orders.
    await db.transaction().execute(async (tx) => {
      const counted = await tx
        .updateTable("webhooks")
        .set(
          success
            ? { consecutive_failures: 0, failing_since: null }
            : {
                // Increments in SQL: parallel attempts at one route must not lose each other's counts.
                consecutive_failures: sql`consecutive_failures + 1`,
                failing_since: sql`coalesce(failing_since, ${nowIso})`,
              },
        )
        .where("id", "=", route.id)
        .executeTakeFirst();
      if (Number(counted.numUpdatedRows) === 0) return; // The route was deleted meanwhile, with its deliveries.
      await webhooksRepository.insertAttempt(tx, {
        id: randomUUID(),
        delivery_id: delivery.id,
        attempted_at: attemptedAt.toISOString(),
        duration_ms: Math.round(durationMs),
        outcome: result.outcome,
        status_code: result.statusCode,
        response_excerpt: result.excerpt,
        error: result.error,
        redelivery: delivery.redelivery,
      });
      await webhooksRepository.updateDelivery(tx, delivery.id, {
        attempts: delivery.attempts + 1,
        attempts_left: Math.max(0, attemptsLeft),
        lease_until: null,
        redelivery: 0,
        ...(success
          ? { status: "delivered", delivered_at: nowIso, next_attempt_at: null }
          : attemptsLeft <= 0
            ? { status: "failed", next_attempt_at: null }
            : {
                next_attempt_at: new Date(
                  now.getTime() + backoffMs(delivery.attempts + 1, result.retryAfterMs),
                ).toISOString(),
              }),
      });
      if (success) return;
      const current = await webhooksRepository.findById(tx, route.id);
      if (!current || current.disabled === 1 || !current.failing_since) return;
      const failingFor = now.getTime() - Date.parse(current.failing_since);
      if (
        current.consecutive_failures >= config.disableAfterFailures &&
        failingFor >= config.disableAfterSeconds * 1000
      ) {
        await webhooksRepository.update(tx, route.id, {
          disabled: 1,
          disabled_at: nowIso,
          disabled_reason: `Switched off after ${current.consecutive_failures} failed attempts in a row since ${current.failing_since}; the last: ${result.error ?? result.outcome}. Fix the receiver, then enable the webhook again; pending deliveries resume.`,
          updated_at: nowIso,
        });
        logger.warn({ webhook: route.id, failures: current.consecutive_failures }, "webhook disabled");
      }
    });
  }

  async function attempt(id: string, abort: AbortController): Promise<void> {
    const delivery = await webhooksRepository.delivery(db, id);
    const route = delivery ? await webhooksRepository.findById(db, delivery.webhook_id) : undefined;
    if (!delivery || !route || route.disabled === 1 || delivery.status !== "pending") {
      await webhooksRepository.releaseLeases(db, [id]);
      return;
    }
    const attemptedAt = clock();
    const started = performance.now();
    const result = await send(route, delivery, abort.signal);
    if (abort.signal.aborted && stopping) {
      // Cut off by shutdown: not the receiver's failure. The next process sends it again, same id.
      await webhooksRepository.releaseLeases(db, [id]);
      return;
    }
    await record(route, delivery, result, attemptedAt, performance.now() - started);
  }

  function start(id: string): void {
    const abort = new AbortController();
    const done = attempt(id, abort)
      .catch((err: Error) => logger.error({ err: err.message, delivery: id }, "webhook attempt not recorded"))
      .finally(() => {
        inFlight.delete(id);
        notify();
      });
    inFlight.set(id, { abort, done });
  }

  /** Claims what is due, as many as there are free slots; true when it started any. */
  async function claimDue(): Promise<boolean> {
    const free = config.concurrency - inFlight.size;
    if (free <= 0) return false;
    const now = clock();
    const nowIso = now.toISOString();
    const leaseUntil = new Date(now.getTime() + config.timeoutMs + 30_000).toISOString();
    let started = false;
    for (const { id } of await webhooksRepository.due(db, nowIso, free)) {
      if (inFlight.size >= config.concurrency || stopping) break;
      if (inFlight.has(id) || !(await webhooksRepository.claim(db, id, nowIso, leaseUntil))) continue;
      start(id);
      started = true;
    }
    return started;
  }

  async function untilNextDue(): Promise<number> {
    const next = await webhooksRepository.nextDue(db);
    if (!next) return POLL_MS;
    return Math.max(0, Math.min(POLL_MS, Date.parse(next) - clock().getTime()));
  }

  let prunedAt = -Infinity;

  /** Drops delivered and failed deliveries (with their receipts) older than the retention; pending ones stay. */
  async function pruneIfDue(): Promise<void> {
    const now = clock().getTime();
    if (now - prunedAt < PRUNE_EVERY_MS) return;
    prunedAt = now;
    const cutoff = new Date(now - config.retentionDays * 86_400_000).toISOString();
    const removed = await webhooksRepository.pruneFinished(db, cutoff);
    if (removed > 0) logger.info({ removed, cutoff }, "old webhook deliveries removed");
  }

  async function loop(): Promise<void> {
    while (running) {
      woken = false;
      try {
        await pruneIfDue();
        if (await claimDue()) continue;
        await sleep(inFlight.size >= config.concurrency ? POLL_MS : Math.max(10, await untilNextDue()));
      } catch (err) {
        logger.error({ err: (err as Error).message }, "webhook outbox unavailable");
        await sleep(POLL_MS);
      }
    }
  }

  return {
    notify,
    start(): void {
      if (running) return;
      running = true;
      loopDone = loop();
    },
    /** Stops claiming, lets in-flight attempts finish for a moment, then cuts them off. */
    async stop(): Promise<void> {
      running = false;
      notify();
      await loopDone;
      const pending = [...inFlight.values()];
      const drained = Promise.all(pending.map((p) => p.done));
      const timer = setTimeout(() => {
        stopping = true;
        for (const p of pending) p.abort.abort();
      }, DRAIN_MS);
      await drained;
      clearTimeout(timer);
      await agent.close();
    },
  };
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;
