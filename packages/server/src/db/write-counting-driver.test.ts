import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, DIALECTS, type TestDatabase } from "../test-support/databases.js";
import { openDatabase, writeCountOf, type Db } from "./database.js";

interface Tables {
  users: { id: string; fullname: string };
  access_tokens: { id: string; name: string; last_used_at: string | null };
  account_activity: { id: string };
}

/**
 * Which of this process's writes retire its cached reads: every write that
 * may change what a cached read returns (and the commit of a transaction that
 * made one), but not the frequent writes nothing cached depends on.
 */
describe("the count of this process's writes", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "hub-writes-"));
  let raw: Db;
  let db: Kysely<Tables>;
  const count = () => writeCountOf(raw).count;
  const counted = async (write: () => Promise<unknown>) => {
    const before = count();
    await write();
    return count() - before;
  };

  beforeAll(async () => {
    raw = openDatabase({ dialect: "sqlite", file: path.join(dir, "hub.db") });
    db = raw as unknown as Kysely<Tables>;
    await sql`create table users (id text primary key, fullname text not null)`.execute(db);
    await sql`create table access_tokens (id text primary key, name text not null, last_used_at text)`.execute(
      db,
    );
    await sql`create table account_activity (id text primary key)`.execute(db);
  });
  afterAll(async () => {
    await raw?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it("counts writes to what the cache reads, and not reads", async () => {
    expect(await counted(() => db.insertInto("users").values({ id: "u1", fullname: "Ann" }).execute())).toBe(
      1,
    );
    expect(await counted(() => db.updateTable("users").set({ fullname: "Ann B" }).execute())).toBe(1);
    expect(await counted(() => db.selectFrom("users").selectAll().execute())).toBe(0);
    expect(await counted(() => sql`select 1`.execute(db))).toBe(0);
    expect(await counted(() => sql`delete from users where id = 'nobody'`.execute(db))).toBe(1);
  });

  it("does not count a token's use note, unless something else changes with it", async () => {
    await db.insertInto("access_tokens").values({ id: "t1", name: "laptop", last_used_at: null }).execute();
    const at = new Date().toISOString();
    expect(await counted(() => db.updateTable("access_tokens").set({ last_used_at: at }).execute())).toBe(0);
    expect(
      await counted(() => db.updateTable("access_tokens").set({ last_used_at: at, name: "desk" }).execute()),
    ).toBe(1);
    expect(await counted(() => db.deleteFrom("access_tokens").where("id", "=", "t1").execute())).toBe(1);
  });

  it("does not count writes to tables nothing cached reads", async () => {
    expect(await counted(() => db.insertInto("account_activity").values({ id: "a1" }).execute())).toBe(0);
  });

  it("counts a transaction's writes and its commit, and nothing for one that wrote nothing cached", async () => {
    expect(
      await counted(() =>
        db.transaction().execute(async (tx) => {
          await tx.insertInto("users").values({ id: "u2", fullname: "Bob" }).execute();
        }),
      ),
    ).toBe(2);
    expect(
      await counted(() =>
        db.transaction().execute(async (tx) => {
          await tx.insertInto("account_activity").values({ id: "a2" }).execute();
          await tx.selectFrom("users").selectAll().execute();
        }),
      ),
    ).toBe(0);
  });
});

interface Family {
  users: { id: string; fullname: string };
  account_activity: { id: string };
  parents: { id: string };
  children: { id: string; parent_id: string };
}

/**
 * What the other processes are told (`WriteCount.announce`, through Redis in
 * a deployment): each change that committed, once, after its commit and
 * before the caller of the statement or transaction goes on; nothing for a
 * read, an uncached table, a rolled-back or failed transaction.
 */
describe.each(DIALECTS)("the announcements of committed changes, on %s", (dialect) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "hub-announce-"));
  let database: TestDatabase;
  let raw: Db;
  let db: Kysely<Family>;

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    raw = openDatabase(
      dialect === "postgres"
        ? { dialect, url: database.url ?? "" }
        : { dialect, file: path.join(dir, "hub.db") },
    );
    db = raw as unknown as Kysely<Family>;
    await sql`create table users (id text primary key, fullname text not null)`.execute(db);
    await sql`create table account_activity (id text primary key)`.execute(db);
    await sql`create table parents (id text primary key)`.execute(db);
    // Checked at the commit: a transaction that breaks it fails there.
    await sql`create table children (id text primary key, parent_id text not null
      references parents (id) deferrable initially deferred)`.execute(db);
  });
  afterAll(async () => {
    await raw?.destroy();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("announces each committed change once, after its commit, before its caller goes on", async () => {
    const writes = writeCountOf(raw);
    /** What happened, in order: each announcement, and each caller going on. */
    const events: string[] = [];
    writes.announce = async () => {
      // An announcement takes a round trip; the caller must not go on before it ends.
      await new Promise((resolve) => setTimeout(resolve, 5));
      events.push("announced");
    };
    const step = async (name: string, run: () => Promise<unknown>) => {
      await run();
      events.push(name);
    };
    try {
      await step("insert", () => db.insertInto("users").values({ id: "u1", fullname: "Ann" }).execute());
      await step("read", () => db.selectFrom("users").selectAll().execute());
      await step("uncached", () => db.insertInto("account_activity").values({ id: "a1" }).execute());
      await step("transaction", () =>
        db.transaction().execute(async (tx) => {
          await tx.insertInto("users").values({ id: "u2", fullname: "Bob" }).execute();
          await tx.updateTable("users").set({ fullname: "Bob B" }).where("id", "=", "u2").execute();
          // Nothing is announced before the commit: the change is not there for anyone else yet.
          events.push("before commit");
        }),
      );
      let beforeCommit = 0;
      await step("savepoints", () =>
        db.transaction().execute(async (tx) => {
          await tx.insertInto("users").values({ id: "u3", fullname: "Cy" }).execute();
          await sql`savepoint before_di`.execute(tx);
          await tx.insertInto("users").values({ id: "u4", fullname: "Di" }).execute();
          // Rolling back to a savepoint ends nothing: the transaction goes on, and its commit is announced.
          await sql`rollback to savepoint before_di`.execute(tx);
          await tx.insertInto("users").values({ id: "u5", fullname: "Ed" }).execute();
          events.push("before commit");
          beforeCommit = writes.count;
        }),
      );
      // The commit counts too: what this process cached while the transaction ran is retired.
      expect(writes.count).toBeGreaterThan(beforeCommit);
      await step("isolation level", () =>
        db
          .transaction()
          .setIsolationLevel("serializable")
          .execute(async (tx) => {
            await tx.insertInto("users").values({ id: "u6", fullname: "Flo" }).execute();
            events.push("before commit");
          }),
      );
      await step("rolled back", () =>
        db
          .transaction()
          .execute(async (tx) => {
            await tx.insertInto("users").values({ id: "u7", fullname: "Gus" }).execute();
            throw new Error("changed my mind");
          })
          .catch(() => {}),
      );
      await step("failed commit", async () => {
        const failed = await db
          .transaction()
          .execute(async (tx) => {
            await tx.insertInto("children").values({ id: "c1", parent_id: "nobody" }).execute();
          })
          .then(
            () => null,
            (error: Error) => error,
          );
        expect(failed).toBeInstanceOf(Error);
      });
      await step("failed statement", () =>
        db
          .insertInto("users")
          .values({ id: "u1", fullname: "again" })
          .execute()
          .catch(() => {}),
      );
      await step("raw", () => sql`delete from users where id = 'nobody'`.execute(db));
    } finally {
      delete writes.announce;
    }
    expect(events).toEqual([
      "announced",
      "insert",
      "read",
      "uncached",
      "before commit",
      "announced",
      "transaction",
      "before commit",
      "announced",
      "savepoints",
      "before commit",
      "announced",
      "isolation level",
      "rolled back",
      "failed commit",
      "failed statement",
      "announced",
      "raw",
    ]);
    expect((await db.selectFrom("users").select("id").orderBy("id").execute()).map((row) => row.id)).toEqual([
      "u1",
      "u2",
      "u3",
      "u5",
      "u6",
    ]);
  });
});
