import { randomUUID } from "node:crypto";
import Sqlite from "better-sqlite3";
import { Redis } from "ioredis";
import pg from "pg";
import type { DatabaseConfig } from "../config.js";
import { closeRedis } from "./redis.js";
import type { WriteCount } from "./write-counting-driver.js";

/** The epoch connection's name in `pg_stat_activity`, for operators (and tests) to find it. */
export const EPOCH_CONNECTION_NAME = "hub-change-epoch";

/** How long the epoch connection may take to answer before it counts as lost. */
const ANSWER_MS = 2000;

/** How often the counters of backends that ended are folded into one row, by default. */
const FOLD_MS = 10 * 60_000;

/** How often PostgreSQL's counters are read beside a shared counter in Redis, by default. */
const POLL_MS = 1000;

/**
 * A number that moves whenever a noted table changes (migrations 0023 and
 * 0027), from any process. Reads cached under one value stay valid while it
 * holds; null means the source cannot vouch for anything right now, and
 * nothing is cached. It is read at most once per turn of the event loop, after
 * the turn's poll for I/O returned, so a request is always checked against the
 * database as it was after the request arrived: a change another process
 * committed before (a revoked token, a removed member) applies to it.
 */
export interface ChangeEpoch {
  current(): number | null | Promise<number | null>;
  close(): Promise<void>;
}

/**
 * The turns of the event loop in which input arrived (a request, an SSH
 * message), counted. Input arrives in the loop's poll phase, and what a turn
 * asked before its poll (a timer's read, a read in the previous turn's check
 * phase) may predate it: an answer is shared only with reads of the same
 * count, so a request never takes an answer to a question asked before it
 * arrived. Every listener calls `noteArrival` as its input comes in.
 */
let arrivals = 0;
let arrivedThisTurn = false;
const arrivalsEnded = () => {
  arrivedThisTurn = false;
};

/** Notes that input arrived in this turn of the event loop; cheap enough for every request. */
export function noteArrival(): void {
  if (arrivedThisTurn) return;
  arrivedThisTurn = true;
  arrivals += 1;
  setImmediate(arrivalsEnded);
}

/**
 * SQLite: the counter the triggers bump, on a connection of its own, plus
 * this process's own writes, which count the moment they complete. Reading
 * the counter takes a lock on the WAL index (a few system calls), so it is
 * read at most once per turn of the event loop: every read of a turn comes
 * after that turn's poll for I/O returned, so a request is always checked
 * against the database as it was after the request arrived, and a change
 * committed by another process before it applies to it.
 */
function sqliteEpoch(file: string, writes: WriteCount): ChangeEpoch {
  const connection = new Sqlite(file, { readonly: true, fileMustExist: true });
  const read = connection.prepare("select value from change_epoch where id = 1").pluck();
  let thisTurn: number | null = null;
  let readAt = 0;
  const forget = () => {
    thisTurn = null;
  };
  return {
    current() {
      if (thisTurn === null || readAt !== arrivals) {
        try {
          thisTurn = read.get() as number;
        } catch {
          return null;
        }
        readAt = arrivals;
        setImmediate(forget);
      }
      return thisTurn + writes.count;
    },
    close: async () => {
      connection.close();
    },
  };
}

/** Asks a counter: its value, or null when it cannot answer now. */
type Ask = () => Promise<number | null>;

/**
 * Keeps one question to `ask` on the wire at a time. A read in the turn that
 * sent it shares it, and a read that comes in a later turn waits for the next
 * question, sent when the one on the wire answers, so every read is checked
 * against the source as it was after the read began. Under load one answer
 * serves every request that came in during a round trip, instead of one
 * question per turn of the event loop.
 */
function oneQuestionOnTheWire(ask: Ask): () => Promise<number | null> {
  /** The question on the wire, whether it was sent in this turn of the event loop, and after which arrivals. */
  let onWire: Promise<number | null> | null = null;
  let sentThisTurn = false;
  let sentAt = 0;
  /** The question to send when the one on the wire answers, shared by the reads that wait for it. */
  let next: Promise<number | null> | null = null;
  const turnEnded = () => {
    sentThisTurn = false;
  };
  const send = (): Promise<number | null> => {
    const asked = ask();
    onWire = asked;
    sentAt = arrivals;
    if (!sentThisTurn) {
      sentThisTurn = true;
      setImmediate(turnEnded);
    }
    void asked.finally(() => {
      if (onWire === asked) onWire = null;
    });
    return asked;
  };
  return () => {
    if (!onWire) return send();
    if (sentThisTurn && sentAt === arrivals) return onWire;
    next ??= onWire.then(() => {
      next = null;
      return send();
    });
    return next;
  };
}

/**
 * PostgreSQL's change counters: the sum of the per-backend counters the
 * triggers bump (migration 0027), asked on a connection of its own with a
 * prepared statement. A connection that fails or does not answer within
 * `ANSWER_MS` makes the answer unknown (null) until a new one answers; after a
 * failure it is tried again with a growing pause, answering null meanwhile.
 */
function postgresCounters(
  url: string,
  onError: (error: Error) => void,
  foldEveryMs: number,
): { ask: Ask; close(): Promise<void> } {
  let closed = false;
  let client: Promise<pg.Client> | null = null;
  let lastFold = 0;
  let retryAt = 0;
  let backoffMs = 250;

  const lost = (lostClient: Promise<pg.Client>, error: Error) => {
    if (client !== lostClient) return;
    client = null;
    retryAt = Date.now() + backoffMs;
    backoffMs = Math.min(backoffMs * 2, 10_000);
    onError(error);
    void lostClient.then(
      (c) => c.end().catch(() => {}),
      () => {},
    );
  };
  const connection = (): Promise<pg.Client> => {
    if (client) return client;
    const next = new pg.Client({
      connectionString: url,
      application_name: EPOCH_CONNECTION_NAME,
      keepAlive: true,
      query_timeout: ANSWER_MS,
      connectionTimeoutMillis: ANSWER_MS,
    });
    const connected = next.connect().then(() => next);
    client = connected;
    next.on("error", (error) => lost(connected, error));
    next.on("end", () => lost(connected, new Error("the change epoch connection ended")));
    connected.catch((error: Error) => lost(connected, error));
    return connected;
  };
  /** Folds the counters of backends that ended into row 0, in one statement, so the sum holds. */
  const fold = async (c: pg.Client) => {
    lastFold = Date.now();
    await c
      .query(
        `with ended as (
         delete from change_epoch
          where backend <> 0 and backend not in (select pid from pg_stat_activity where pid is not null)
          returning value)
       update change_epoch set value = value + (select coalesce(sum(value), 0) from ended) where backend = 0`,
      )
      .catch(() => {});
  };
  return {
    async ask() {
      if (closed || (!client && Date.now() < retryAt)) return null;
      const asked = connection();
      try {
        const c = await asked;
        const { rows } = await c.query<{ sum: string }>({
          name: "hub-change-epoch",
          text: "select sum(value)::text as sum from change_epoch",
        });
        backoffMs = 250;
        if (Date.now() - lastFold >= foldEveryMs) await fold(c);
        return Number(rows[0]?.sum ?? 0);
      } catch (error) {
        lost(asked, error as Error);
        return null;
      }
    },
    async close() {
      closed = true;
      const last = client;
      client = null;
      await last?.then((c) => c.end()).catch(() => {});
    },
  };
}

/**
 * PostgreSQL alone: the change counters, asked with one question on the wire
 * (`oneQuestionOnTheWire`). This process's own writes count the moment they
 * complete.
 */
function postgresEpoch(
  url: string,
  writes: WriteCount,
  onError: (error: Error) => void,
  foldEveryMs: number,
): ChangeEpoch {
  const counters = postgresCounters(url, onError, foldEveryMs);
  const current = oneQuestionOnTheWire(async () => {
    const sum = await counters.ask();
    return sum === null ? null : sum + writes.count;
  });
  return { current, close: () => counters.close() };
}

/**
 * PostgreSQL with Redis (several processes): the counter in Redis that every
 * process bumps once each change it made has committed, before it answers
 * (`WriteCount.announce`), asked with one question on the wire. A Redis
 * question costs the hub less than a PostgreSQL one, and the questions of many
 * processes no longer load the database. PostgreSQL's own counters are still
 * read every `pollEveryMs` of the counter, and move the epoch too: a change
 * whose process died between its commit and its announcement, or one made
 * with `psql`, applies within that interval. A counter that Redis lost (a
 * restart, an eviction, a new run id) or a connection that broke never brings
 * back an epoch seen before: the epoch continues above the last one.
 */
function redisEpoch(
  counter: SharedChangeCounter,
  postgres: { ask: Ask; close(): Promise<void> },
  writes: WriteCount,
): ChangeEpoch {
  let postgresSum: number | null = null;
  let polling = false;
  const poll = async () => {
    if (polling) return;
    polling = true;
    postgresSum = await postgres.ask();
    polling = false;
  };
  void poll();
  const timer = setInterval(() => void poll(), counter.pollEveryMs);
  timer.unref();

  /** The run and count of the Redis counter last seen, and the offset that keeps the epoch rising across runs. */
  let run: string | null = null;
  let count = 0;
  let base = 0;
  let broken = false;
  const broke = () => {
    broken = true;
  };
  counter.redis.on("close", broke);
  const current = oneQuestionOnTheWire(async () => {
    const answer = await counter.read();
    if (answer === null || postgresSum === null) return null;
    // A new run, a connection made anew, or a count that went back (a replica behind): start above the last.
    if (broken || answer.run !== run || answer.count < count) {
      base += count + 1 - answer.count;
      run = answer.run;
      broken = false;
    }
    count = answer.count;
    return base + count + postgresSum + writes.count;
  });
  return {
    current,
    async close() {
      clearInterval(timer);
      counter.redis.off("close", broke);
      await postgres.close();
    },
  };
}

/**
 * The counter of committed changes the hub processes of one deployment share
 * in Redis: a hash holding the count and the id of its run, so a counter Redis
 * lost is known as a new one.
 */
export interface SharedChangeCounter {
  readonly redis: Redis;
  /** How often the epochs that ask this counter read PostgreSQL's counters behind it. */
  readonly pollEveryMs: number;
  /**
   * Tells every process that a change committed; resolves once a question
   * asked after it would see it. When Redis cannot take it, it logs and
   * resolves only once every process's next read of PostgreSQL's counters
   * must have seen the change, so the change still applies to whatever
   * request its writer's answer leads to.
   */
  announce(): Promise<void>;
  /** The count and its run, or null when Redis cannot answer now (nothing waits for it to come back). */
  read(): Promise<{ run: string; count: number } | null>;
  close(): Promise<void>;
}

/**
 * Opens the shared counter under `key`, on a connection of its own, connected
 * at its first use. A command Redis does not answer within `ANSWER_MS` fails,
 * and the connection is made anew (a socket that stays open while Redis
 * answers nothing would hold every question).
 */
export function openSharedChangeCounter(
  url: string,
  key: string,
  onError: (error: Error) => void,
  { pollEveryMs = POLL_MS }: { pollEveryMs?: number } = {},
): SharedChangeCounter {
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    commandTimeout: ANSWER_MS,
    connectionName: EPOCH_CONNECTION_NAME,
  });
  redis.on("error", () => {});
  /** Set from a timeout until the new connection is ready: the old one still says "ready" for a moment. */
  let dropped = false;
  redis.on("ready", () => {
    dropped = false;
  });
  const failed = (error: unknown) => {
    if ((error as Error).message.includes("timed out") && !dropped) {
      dropped = true;
      redis.disconnect(true);
    }
    return error as Error;
  };
  /** Past a poll that was on the wire at the commit, the next interval, and that interval's poll. */
  const holdMs = pollEveryMs + 2 * ANSWER_MS;
  return {
    redis,
    pollEveryMs,
    async announce() {
      try {
        if (redis.status === "end") throw new Error("Redis is closed");
        await redis.hincrby(key, "count", 1);
      } catch (error) {
        onError(
          new Error(
            `a change could not be announced to the other processes (${failed(error).message}); holding its answer ${holdMs} ms, until their reads of PostgreSQL see it`,
          ),
        );
        await new Promise((resolve) => setTimeout(resolve, holdMs));
      }
    },
    async read() {
      if (redis.status === "wait") void redis.connect().catch(() => {});
      if (redis.status !== "ready" || dropped) return null;
      try {
        const [run, count] = await redis.hmget(key, "run", "count");
        if (run) return { run, count: Number(count ?? 0) };
        // A counter with no run (new, or lost and bumped since): give it one; the next read counts.
        await redis.hsetnx(key, "run", randomUUID());
        return null;
      } catch (error) {
        failed(error);
        return null;
      }
    },
    close: () => closeRedis(redis),
  };
}

/**
 * The change epoch of the configured database; open it after migrating, so its
 * table or triggers exist. `writes` counts this process's own writes;
 * `shared` is the deployment's counter in Redis (PostgreSQL only), which the
 * epoch then asks instead of the database; `foldEveryMs` is how often
 * PostgreSQL's ended backends' counters are folded.
 */
export function openChangeEpoch(
  config: DatabaseConfig,
  writes: WriteCount,
  onError: (error: Error) => void,
  { foldEveryMs = FOLD_MS, shared }: { foldEveryMs?: number; shared?: SharedChangeCounter } = {},
): ChangeEpoch {
  if (config.dialect !== "postgres") return sqliteEpoch(config.file, writes);
  if (!shared) return postgresEpoch(config.url, writes, onError, foldEveryMs);
  return redisEpoch(shared, postgresCounters(config.url, onError, foldEveryMs), writes);
}
