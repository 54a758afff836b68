import Sqlite from "better-sqlite3";
import pg from "pg";
import type { DatabaseConfig } from "../config.js";
import type { WriteCount } from "./write-counting-driver.js";

/** The PostgreSQL channel the change triggers notify (migration 0023). */
export const CHANGE_CHANNEL = "hub_changes";

/** The listening connection's name in `pg_stat_activity`, for operators (and tests) to find it. */
export const LISTENER_NAME = "hub-change-listener";

/** How often the listening connection must answer, and how long it may take. */
const HEARTBEAT_MS = 2000;

/**
 * A number that moves whenever a noted table changes (migration 0023), from
 * any process. Reads cached under one value stay valid while it holds; null
 * means the source cannot vouch for anything right now, and nothing is cached.
 */
export interface ChangeEpoch {
  current(): number | null;
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
 * PostgreSQL: the triggers notify the channel at commit, and PostgreSQL hands
 * the notification to every listening process at once. This process's own
 * writes count at once, without waiting for their notification to come back.
 * While the listening connection is down (or not yet listening) the epoch is
 * unknown, and each new connection starts a new epoch, so nothing read before
 * a gap survives it. A connection that dies quietly (no reset reaches this
 * process) is found by a heartbeat: one that does not answer within
 * `HEARTBEAT_MS` counts as lost, so a change made while it is dying goes
 * unseen for at most about twice that.
 */
function postgresEpoch(url: string, writes: WriteCount, onError: (error: Error) => void): ChangeEpoch {
  let epoch = 0;
  let listening = false;
  let closed = false;
  let client: pg.Client | null = null;
  let retry: NodeJS.Timeout | null = null;
  let backoffMs = 250;
  const heartbeat = setInterval(() => {
    const asked = listening ? client : null;
    asked?.query("select 1").catch((error: Error) => {
      if (client === asked) lost(error);
    });
  }, HEARTBEAT_MS);
  heartbeat.unref();

  const lost = (error?: Error) => {
    listening = false;
    if (error) onError(error);
    const last = client;
    client = null;
    last?.removeAllListeners();
    last?.on("error", () => {});
    last?.end().catch(() => {});
    if (!closed && !retry) {
      retry = setTimeout(connect, backoffMs);
      retry.unref();
      backoffMs = Math.min(backoffMs * 2, 10_000);
    }
  };
  async function connect() {
    retry = null;
    const next = new pg.Client({
      connectionString: url,
      application_name: LISTENER_NAME,
      keepAlive: true,
      query_timeout: HEARTBEAT_MS,
    });
    client = next;
    next.on("notification", () => {
      epoch += 1;
    });
    next.on("error", lost);
    next.on("end", () => lost());
    try {
      await next.connect();
      await next.query(`LISTEN ${CHANGE_CHANNEL}`);
      if (client !== next) return;
      epoch += 1;
      listening = true;
      backoffMs = 250;
    } catch (error) {
      if (client === next) lost(error as Error);
    }
  }
  void connect();
  return {
    current: () => (listening ? epoch + writes.count : null),
    async close() {
      closed = true;
      clearInterval(heartbeat);
      if (retry) clearTimeout(retry);
      const last = client;
      client = null;
      listening = false;
      last?.removeAllListeners();
      await last?.end().catch(() => {});
    },
  };
}

/**
 * The change epoch of the configured database; open it after migrating, so its
 * table or triggers exist. `writes` counts this process's own writes.
 */
export function openChangeEpoch(
  config: DatabaseConfig,
  writes: WriteCount,
  onError: (error: Error) => void,
): ChangeEpoch {
  return config.dialect === "postgres"
    ? postgresEpoch(config.url, writes, onError)
    : sqliteEpoch(config.file, writes);
}
