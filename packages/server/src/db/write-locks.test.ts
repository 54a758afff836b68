import path from "node:path";
import os from "node:os";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../test-support/databases.js";
import { createWriteLocks, WRITE_LOCK_CONNECTION_NAME, type WriteLocks } from "./write-locks.js";

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `count` holders of the keys through the lock sets in turn; answers how many held each key at once, at most. */
async function overlap(sets: WriteLocks[], keys: string[], count: number) {
  const inside = new Map<string, number>();
  const most = new Map<string, number>();
  let together = 0;
  let mostTogether = 0;
  await Promise.all(
    Array.from({ length: count }, (_, i) => {
      const key = keys[i % keys.length] ?? "";
      const locks = sets[Math.floor(i / keys.length) % sets.length];
      return locks?.withLock(key, async () => {
        inside.set(key, (inside.get(key) ?? 0) + 1);
        together++;
        most.set(key, Math.max(most.get(key) ?? 0, inside.get(key) ?? 0));
        mostTogether = Math.max(mostTogether, together);
        await pause(3);
        inside.set(key, (inside.get(key) ?? 0) - 1);
        together--;
      });
    }),
  );
  return { most, mostTogether };
}

describe("write locks on PostgreSQL, shared by two processes' lock sets", () => {
  let database: TestDatabase;
  let one: WriteLocks;
  let two: WriteLocks;

  beforeAll(async () => {
    database = await createTestDatabase("postgres");
    const url = database.url ?? "";
    one = createWriteLocks({ dialect: "postgres", url });
    two = createWriteLocks({ dialect: "postgres", url });
  });
  afterAll(async () => {
    await one.close();
    await two.close();
    await database.drop();
  });

  it("let one holder of a key in at a time across both, and holders of other keys alongside", async () => {
    const { most, mostTogether } = await overlap([one, two], ["repo-a", "repo-b"], 60);
    expect(most.get("repo-a")).toBe(1);
    expect(most.get("repo-b")).toBe(1);
    expect(mostTogether).toBe(2);
  });

  it("release a key when the work fails, and answer the failure", async () => {
    await expect(
      one.withLock("repo-a", async () => {
        throw new Error("work failed");
      }),
    ).rejects.toThrow("work failed");
    expect(await two.withLock("repo-a", async () => "next")).toBe("next");
  });

  it("release a key held by a process whose connection died", async () => {
    let entered!: () => void;
    const holding = new Promise<void>((resolve) => (entered = resolve));
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    // The holder's work does not end while the other waits: only its connection's end frees the key.
    const held = one.withLock("repo-c", async () => {
      entered();
      await finished;
    });
    await holding;
    let secondIn = false;
    const waiting = two.withLock("repo-c", async () => {
      secondIn = true;
    });
    await pause(200);
    expect(secondIn).toBe(false);
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    // The holder's session: the lock connection of this database holding an advisory lock.
    const { rowCount } = await admin.query(
      `select pg_terminate_backend(a.pid) from pg_stat_activity a join pg_locks l on l.pid = a.pid
        where a.datname = current_database() and a.application_name = $1 and l.locktype = 'advisory' and l.granted`,
      [WRITE_LOCK_CONNECTION_NAME],
    );
    await admin.end();
    expect(rowCount).toBe(1);
    await waiting;
    expect(secondIn).toBe(true);
    finish();
    await held;
  });
});

describe("write locks on SQLite (one process)", () => {
  it("let one holder of a key in at a time, and holders of other keys alongside", async () => {
    const locks = createWriteLocks({ dialect: "sqlite", file: path.join(os.tmpdir(), "unused.db") });
    const { most, mostTogether } = await overlap([locks], ["repo-a", "repo-b"], 40);
    expect(most.get("repo-a")).toBe(1);
    expect(most.get("repo-b")).toBe(1);
    expect(mostTogether).toBe(2);
    await locks.close();
  });
});
