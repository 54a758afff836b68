import Sqlite from "better-sqlite3";
import pg from "pg";
import type { DatabaseConfig } from "../config.js";
import type { WriteCount } from "./write-counting-driver.js";

/** The epoch connection's name in `pg_stat_activity`, for operators (and tests) to find it. */
export const EPOCH_CONNECTION_NAME = "hub-change-epoch";

/** How long the epoch connection may take to answer before it counts as lost. */
const ANSWER_MS = 2000;

/** How often the counters of backends that ended are folded into one row, by default. */
const FOLD_MS = 10 * 60_000;

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
  const forget = () => {
    thisTurn = null;
  };
  return {
    current() {
      if (thisTurn === null) {
        try {
          thisTurn = read.get() as number;
        } catch {
          return null;
        }
        setImmediate(forget);
      }
      return thisTurn + writes.count;
    },
    close: async () => {
      connection.close();
    },
  };
}

/**
 * PostgreSQL: the sum of the per-backend counters the triggers bump (migration
 * 0027), asked on a connection of its own with a prepared statement. One
 * question is on the wire at a time: a read in the turn that sent it shares
 * it, and a read that comes in a later turn waits for the next question, sent
 * when the one on the wire answers, so every read is checked against the
 * database as it was after the read began. Under load one answer serves every
 * request that came in during a round trip, instead of one question per
 * turn of the event loop per process. This process's own writes count the
 * moment they complete. A connection that fails or does not answer within
 * `ANSWER_MS` makes the epoch unknown (reads go to the database) until a new
 * one answers.
 */
function postgresEpoch(
  url: string,
  writes: WriteCount,
  onError: (error: Error) => void,
  foldEveryMs: number,
): ChangeEpoch {
  let closed = false;
  let client: Promise<pg.Client> | null = null;
  /** The question on the wire, and whether it was sent in this turn of the event loop. */
  let onWire: Promise<number | null> | null = null;
  let sentThisTurn = false;
  /** The question to send when the one on the wire answers, shared by the reads that wait for it. */
  let next: Promise<number | null> | null = null;
  let lastFold = 0;
  let retryAt = 0;
  let backoffMs = 250;
  const turnEnded = () => {
    sentThisTurn = false;
  };

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
  const ask = async (): Promise<number | null> => {
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
      return Number(rows[0]?.sum ?? 0) + writes.count;
    } catch (error) {
      lost(asked, error as Error);
      return null;
    }
  };
  const send = (): Promise<number | null> => {
    const asked = ask();
    onWire = asked;
    if (!sentThisTurn) {
      sentThisTurn = true;
      setImmediate(turnEnded);
    }
    void asked.finally(() => {
      if (onWire === asked) onWire = null;
    });
    return asked;
  };
  return {
    current() {
      if (!onWire) return send();
      if (sentThisTurn) return onWire;
      next ??= onWire.then(() => {
        next = null;
        return send();
      });
      return next;
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
 * The change epoch of the configured database; open it after migrating, so its
 * table or triggers exist. `writes` counts this process's own writes;
 * `foldEveryMs` is how often PostgreSQL's ended backends' counters are folded.
 */
export function openChangeEpoch(
  config: DatabaseConfig,
  writes: WriteCount,
  onError: (error: Error) => void,
  { foldEveryMs = FOLD_MS }: { foldEveryMs?: number } = {},
): ChangeEpoch {
  return config.dialect === "postgres"
    ? postgresEpoch(config.url, writes, onError, foldEveryMs)
    : sqliteEpoch(config.file, writes);
}
