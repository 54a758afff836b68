import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

  it("announces each committed change once, before the statement's caller goes on", async () => {
    const writes = writeCountOf(raw);
    /** What happened, in order: each announcement, and each statement's caller going on. */
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
      await step("insert", () => db.insertInto("users").values({ id: "u3", fullname: "Cy" }).execute());
      await step("read", () => db.selectFrom("users").selectAll().execute());
      await step("uncached", () => db.insertInto("account_activity").values({ id: "a3" }).execute());
      await step("use note", () =>
        db.updateTable("access_tokens").set({ last_used_at: new Date().toISOString() }).execute(),
      );
      await step("transaction", () =>
        db.transaction().execute(async (tx) => {
          await tx.insertInto("users").values({ id: "u4", fullname: "Di" }).execute();
          await tx.updateTable("users").set({ fullname: "Di B" }).where("id", "=", "u4").execute();
          // Nothing is announced before the commit: the change is not there for anyone else yet.
          events.push("before commit");
        }),
      );
      await step("rolled back", () =>
        db
          .transaction()
          .execute(async (tx) => {
            await tx.insertInto("users").values({ id: "u5", fullname: "Ed" }).execute();
            throw new Error("changed my mind");
          })
          .catch(() => {}),
      );
      await step("failed", () =>
        db
          .insertInto("users")
          .values({ id: "u3", fullname: "again" })
          .execute()
          .catch(() => {}),
      );
      await step("nothing cached", () =>
        db.transaction().execute(async (tx) => {
          await tx.insertInto("account_activity").values({ id: "a4" }).execute();
        }),
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
      "use note",
      "before commit",
      "announced",
      "transaction",
      "rolled back",
      "failed",
      "nothing cached",
      "announced",
      "raw",
    ]);
  });
});
