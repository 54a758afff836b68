import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import Sqlite from "better-sqlite3";
import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../test-support/databases.js";
import { startInProcessHub, type InProcessHub } from "../test-support/hub-inprocess.js";
import {
  EPOCH_CONNECTION_NAME,
  noteArrival,
  openChangeEpoch,
  openSharedChangeCounter,
  type ChangeEpoch,
} from "./change-epoch.js";
import { migrateToLatest, openDatabase } from "./database.js";

/** The hub's epoch connections, by backend id. */
const epochConnections = async (client: pg.Client) =>
  (
    await client.query<{ pid: number }>(
      "select pid from pg_stat_activity where datname = current_database() and application_name = $1",
      [EPOCH_CONNECTION_NAME],
    )
  ).rows.map((row) => row.pid);

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A new PostgreSQL database with the hub's schema (its change counters and their triggers). */
async function migratedPostgres(): Promise<TestDatabase & { url: string }> {
  const database = await createTestDatabase("postgres");
  const url = database.url ?? "";
  const db = openDatabase({ dialect: "postgres", url });
  await migrateToLatest(db, { dialect: "postgres", url });
  await db.destroy();
  return { ...database, url };
}

/** The epoch in a turn of its own, as a request would read it. */
async function readInTurn(epoch: ChangeEpoch) {
  await new Promise((resolve) => setImmediate(resolve));
  return epoch.current();
}

/**
 * The read cache on PostgreSQL asks the change counters once per turn, so a
 * change another writer committed applies to the very next request, with no
 * notification to wait for; and when its connection is cut, it reads uncached
 * and connects again.
 */
describe("the read cache on PostgreSQL", () => {
  let hub: InProcessHub;
  let sql: pg.Client;

  beforeAll(async () => {
    hub = await startInProcessHub({ dialect: "postgres" });
    sql = new pg.Client({ connectionString: hub.database.url });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await hub?.stop();
  });

  it("applies another writer's change to the next request, and survives its connection being cut", async () => {
    await hub.createUser("ann");
    const token = await hub.createToken("ann", ["--role", "read"]);
    const whoami = async (secret: string) => hub.request("/api/whoami", { token: secret });
    // The first use notes the token's use (a write of this process, which retires its cache); the second is
    // answered from the cache.
    for (let i = 0; i < 2; i++) expect((await whoami(token)).status).toBe(200);

    // Another writer renames the account: the next request shows it, without waiting for anything.
    await sql.query("update users set fullname = 'Ann First' where handle = 'ann'");
    expect(((await (await whoami(token)).json()) as { fullname: string }).fullname).toBe("Ann First");

    const [pid] = await epochConnections(sql);
    expect(pid).toBeDefined();
    await sql.query("select pg_terminate_backend($1)", [pid]);
    // Another writer revokes the token while the hub's epoch connection is gone.
    const revoked = await sql.query("delete from access_tokens where secret_hash = $1", [
      createHash("sha256").update(token).digest("hex"),
    ]);
    expect(revoked.rowCount).toBe(1);
    expect((await whoami(token)).status).toBe(401);

    // The hub connects again, and caches again: another writer's change still applies at once.
    const second = await hub.createToken("ann", ["--role", "read"]);
    await until(async () => {
      expect((await whoami(second)).status).toBe(200);
      const now = await epochConnections(sql);
      return now.length === 1 && now[0] !== pid;
    }, "a new epoch connection");
    await sql.query("update users set fullname = 'Ann Renamed' where handle = 'ann'");
    expect(((await (await whoami(second)).json()) as { fullname: string }).fullname).toBe("Ann Renamed");
  });
});

describe("the change counters on PostgreSQL", () => {
  let database: TestDatabase;
  let url: string;

  beforeAll(async () => {
    database = await migratedPostgres();
    url = database.url ?? "";
  });
  afterAll(async () => {
    await database?.drop();
  });

  /** A change made on a connection of its own, which then ends (its backend's counter row stays). */
  const changeOnce = async (fullname: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    // A statement-level trigger: it counts even when no row matches.
    await client.query("update users set fullname = $1 where handle = 'nobody'", [fullname]);
    await client.end();
  };
  const rows = async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows: counters } = await client.query<{ backend: number; value: string }>(
      "select backend, value from change_epoch order by backend",
    );
    await client.end();
    return counters;
  };

  it("moves with every committed change, and folding ended backends' rows keeps the sum", async () => {
    const errors: Error[] = [];
    const epoch = openChangeEpoch({ dialect: "postgres", url }, { count: 0 }, (e) => errors.push(e), {
      foldEveryMs: 0,
    });
    const read = () => readInTurn(epoch);
    try {
      const start = await read();
      expect(start).not.toBeNull();
      await changeOnce("one");
      await changeOnce("two");
      const counters = await rows();
      expect(counters.filter((row) => row.backend !== 0).length).toBeGreaterThanOrEqual(2);
      const afterTwo = await read();
      expect(afterTwo).toBe((start ?? 0) + 2);
      // That read folded the ended backends' rows into row 0; the sum (and so the epoch) is unchanged.
      await until(async () => {
        expect(await read()).toBe(afterTwo);
        return (await rows()).every((row) => row.backend === 0);
      }, "the fold");
      expect(await read()).toBe(afterTwo);
      await changeOnce("three");
      expect(await read()).toBe((afterTwo ?? 0) + 1);
      expect(errors).toEqual([]);
    } finally {
      await epoch.close();
    }
  });

  it("keeps one question on the wire: reads of its turn share it, later reads wait for the next", async () => {
    const epoch = openChangeEpoch({ dialect: "postgres", url }, { count: 0 }, () => {});
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    try {
      await turn();
      const before = await epoch.current();
      // Another writer holds the counters, so the next question waits on the wire until it commits.
      await locker.query("begin");
      await locker.query("lock table change_epoch in access exclusive mode");
      await turn();
      const first = epoch.current();
      expect(epoch.current()).toBe(first);
      await turn();
      // A read in a later turn may not take an answer to a question asked before it began.
      const second = epoch.current();
      expect(second).not.toBe(first);
      expect(epoch.current()).toBe(second);
      // Reads of any later turn wait for that same next question: one answer serves them all.
      await turn();
      expect(epoch.current()).toBe(second);
      await locker.query("update change_epoch set value = value + 1 where backend = 0");
      await locker.query("commit");
      const [asked, askedLater] = await Promise.all([first, second]);
      expect(asked).not.toBeNull();
      expect(askedLater).toBe((before ?? 0) + 1);
    } finally {
      await locker.end();
      await epoch.close();
    }
  });
});

const REDIS = "redis://127.0.0.1:6379";

/**
 * With Redis beside PostgreSQL, the epoch is the deployment's shared counter
 * in Redis, which each process bumps once its change committed, with
 * PostgreSQL's own counters read behind it for changes nobody announced.
 */
describe("the change epoch on PostgreSQL with Redis", () => {
  let database: TestDatabase;
  let url: string;
  let redis: Redis;
  const key = `hub-test-${randomBytes(4).toString("hex")}:change-epoch`;

  beforeAll(async () => {
    database = await migratedPostgres();
    url = database.url ?? "";
    redis = new Redis(REDIS);
  });
  afterAll(async () => {
    await redis?.del(key);
    await redis?.quit();
    await database?.drop();
  });

  const read = readInTurn;
  /** The first epoch known (the first reads are null while the counters are first asked). */
  const known = async (epoch: ChangeEpoch) => {
    let value: number | null = null;
    await until(async () => (value = await read(epoch)) !== null, "a known epoch");
    return value as unknown as number;
  };
  const open = (onError: (error: Error) => void = () => {}, pollEveryMs = 100) => {
    const counter = openSharedChangeCounter(REDIS, key, onError, { pollEveryMs });
    const epoch = openChangeEpoch({ dialect: "postgres", url }, { count: 0 }, onError, { shared: counter });
    return {
      counter,
      epoch,
      close: async () => {
        await epoch.close();
        await counter.close();
      },
    };
  };

  it("moves on an announced change at once, and within its poll on a change nobody announced", async () => {
    const errors: Error[] = [];
    const reader = open((error) => errors.push(error), 200);
    // Another process's counter: its announcement is what the reader's next question sees.
    const writer = openSharedChangeCounter(REDIS, key, (error) => errors.push(error));
    try {
      const start = await known(reader.epoch);
      expect(await read(reader.epoch)).toBe(start);
      await writer.announce();
      expect(await read(reader.epoch)).toBe(start + 1);
      await writer.announce();
      await writer.announce();
      expect(await read(reader.epoch)).toBe(start + 3);

      // A change made with psql is announced by nobody: PostgreSQL's counters, read behind, still move it.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query("update users set fullname = 'x' where handle = 'nobody'");
      await client.end();
      await until(async () => (await read(reader.epoch)) === start + 4, "the poll to see the change");
      expect(errors).toEqual([]);
    } finally {
      await writer.close();
      await reader.close();
    }
  });

  it("never comes back to an epoch it answered when Redis loses the counter or the connection breaks", async () => {
    const { counter, epoch, close } = open();
    try {
      const seen: number[] = [await known(epoch)];
      const rising = async (what: string) => {
        const value = await known(epoch);
        expect(value, what).toBeGreaterThan(Math.max(...seen));
        seen.push(value);
      };
      // Redis lost the counter (a restart without persistence, an eviction), and writers bumped it since.
      await redis.del(key);
      await counter.announce();
      await rising("after the counter was lost");

      // Redis came back from an older snapshot: the same run, a smaller count, seen through a new connection.
      const count = Number(await redis.hget(key, "count"));
      const id = Number(await counter.redis.client("ID"));
      await redis.call("CLIENT", "KILL", "ID", String(id));
      await redis.hset(key, "count", String(count - 1));
      await rising("after the connection broke and the count went back");

      // A count that went back on the same connection (a replica behind a proxy took over).
      await counter.announce();
      await rising("after another announcement");
      await redis.hincrby(key, "count", -2);
      await rising("after the count went back on an open connection");

      // Unchanged, it holds.
      expect(await read(epoch)).toBe(Math.max(...seen));
    } finally {
      await close();
    }
  });

  it("drops a connection Redis stopped answering on, reads uncached meanwhile, and holds a write it could not announce", async () => {
    // A proxy in front of Redis that can stop passing anything on while keeping its sockets open.
    let frozen = false;
    const sockets = new Set<Socket>();
    const proxy = createServer((client) => {
      const upstream = connect(6379, "127.0.0.1");
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on("error", () => {});
        socket.on("close", () => sockets.delete(socket));
      }
      const startedFrozen = frozen;
      client.on("data", (chunk) => !frozen && !startedFrozen && upstream.write(chunk));
      upstream.on("data", (chunk) => !frozen && !startedFrozen && client.write(chunk));
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const port = (proxy.address() as { port: number }).port;
    const errors: Error[] = [];
    const counter = openSharedChangeCounter(`redis://127.0.0.1:${port}`, key, (error) => errors.push(error), {
      pollEveryMs: 100,
    });
    const epoch = openChangeEpoch({ dialect: "postgres", url }, { count: 0 }, () => {}, { shared: counter });
    const timed = async <T>(run: () => Promise<T>) => {
      const started = Date.now();
      const value = await run();
      return { value, ms: Date.now() - started };
    };
    try {
      const before = await known(epoch);
      frozen = true;
      // The question on the wire gets no answer: it fails after 2 s and the connection is made anew.
      const stuck = await timed(() => read(epoch));
      expect(stuck.value).toBeNull();
      expect(stuck.ms).toBeLessThan(3000);
      // Meanwhile nothing waits: reads go uncached at once.
      for (let i = 0; i < 3; i++) {
        const next = await timed(() => read(epoch));
        expect(next.value).toBeNull();
        expect(next.ms).toBeLessThan(200);
      }
      // A write that cannot be announced is held until every process's poll of PostgreSQL must have seen it.
      const held = await timed(() => counter.announce());
      expect(held.ms).toBeGreaterThanOrEqual(4100);
      expect(errors.map((error) => error.message).join("\n")).toMatch(/could not be announced.*holding/);

      frozen = false;
      for (const socket of sockets) socket.destroy();
      const after = await known(epoch);
      expect(after).toBeGreaterThan(before);
    } finally {
      await epoch.close();
      await counter.close();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it("reads uncached at once while Redis is away, and a write goes on, logged", async () => {
    // A port nothing listens on.
    const free = createServer();
    await new Promise<void>((resolve) => free.listen(0, "127.0.0.1", resolve));
    const port = (free.address() as { port: number }).port;
    await new Promise((resolve) => free.close(resolve));
    const errors: Error[] = [];
    const counter = openSharedChangeCounter(`redis://127.0.0.1:${port}`, key, (error) => errors.push(error));
    const epoch = openChangeEpoch({ dialect: "postgres", url }, { count: 0 }, () => {}, { shared: counter });
    try {
      for (let i = 0; i < 5; i++) {
        const started = Date.now();
        expect(await read(epoch)).toBeNull();
        expect(Date.now() - started).toBeLessThan(500);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const started = Date.now();
      await counter.announce();
      expect(Date.now() - started).toBeLessThan(2500 + 5000);
      expect(errors.map((error) => error.message).join("\n")).toMatch(/could not be announced/);
    } finally {
      await epoch.close();
      await counter.close();
    }
  });
});

/**
 * Runs `before` in a timer, then `after` in the callback of input that was
 * already waiting when the timer fired: the same turn of the event loop, the
 * input delivered in its poll phase, after the timer's read.
 */
async function timerThenInput<T>(before: () => T, after: (fromTimer: T) => void): Promise<void> {
  let fromTimer: T | undefined;
  let delivered: (() => void) | undefined;
  const done = new Promise<void>((resolve) => (delivered = resolve));
  const server = createServer({ pauseOnConnect: true }, (socket) => {
    socket.once("data", () => {
      noteArrival();
      after(fromTimer as T);
      socket.destroy();
      delivered?.();
    });
    // The input waits in the socket until the timer has read.
    setTimeout(() => {
      fromTimer = before();
      socket.resume();
    }, 50);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const client = connect((server.address() as { port: number }).port, "127.0.0.1", () => client.write("x"));
  client.on("error", () => {});
  await done;
  client.destroy();
  await new Promise((resolve) => server.close(resolve));
}

/**
 * A read a timer makes comes before the turn's input, which may have arrived
 * after it asked: that input's reads ask again, on both databases.
 */
describe("reads of input that arrived after a timer's read", () => {
  it("ask SQLite again", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "hub-epoch-"));
    const file = path.join(dir, "hub.db");
    const db = openDatabase({ dialect: "sqlite", file });
    await migrateToLatest(db, { dialect: "sqlite", file });
    const epoch = openChangeEpoch({ dialect: "sqlite", file }, { count: 0 }, () => {});
    const writer = new Sqlite(file);
    try {
      let seen: { timer: unknown; input: unknown } = { timer: null, input: null };
      await timerThenInput(
        () => {
          const read = epoch.current();
          // Another process changes something after the timer's read, before the input's.
          writer.prepare("update change_epoch set value = value + 1 where id = 1").run();
          return read;
        },
        (timer) => {
          seen = { timer, input: epoch.current() };
        },
      );
      expect(seen.timer).not.toBeNull();
      expect(seen.input).toBe((seen.timer as number) + 1);
    } finally {
      writer.close();
      await epoch.close();
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("do not share the timer's question to PostgreSQL", async () => {
    const database = await migratedPostgres();
    const url = database.url;
    const epoch = openChangeEpoch({ dialect: "postgres", url }, { count: 0 }, () => {});
    try {
      await epoch.current();
      let seen: { timer?: unknown; input?: unknown } = {};
      await timerThenInput(
        () => epoch.current(),
        (timer) => {
          seen = { timer, input: epoch.current() };
        },
      );
      expect(seen.timer).toBeInstanceOf(Promise);
      expect(seen.input).not.toBe(seen.timer);
      await Promise.all([seen.timer, seen.input]);
    } finally {
      await epoch.close();
      await database.drop();
    }
  });
});
