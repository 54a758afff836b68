import { createHash } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startInProcessHub, type InProcessHub } from "../test-support/hub-inprocess.js";
import { LISTENER_NAME } from "./change-epoch.js";

/** The hub's listening connections, by name: their last query is the heartbeat's as often as the LISTEN. */
const listeners = async (client: pg.Client) =>
  (
    await client.query<{ pid: number }>(
      "select pid from pg_stat_activity where datname = current_database() and application_name = $1",
      [LISTENER_NAME],
    )
  ).rows.map((row) => row.pid);

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * The PostgreSQL change notifications, when the listening connection dies:
 * nothing cached before the gap is trusted after it, writes made by another
 * writer meanwhile apply, and the hub listens again on its own.
 */
describe("the read cache on PostgreSQL, when its listening connection is cut", () => {
  let hub: InProcessHub;
  let sql: pg.Client;

  beforeAll(async () => {
    hub = await startInProcessHub({ dialect: "postgres" });
    sql = new pg.Client({ connectionString: hub.database.url });
    await sql.connect();
    await until(async () => (await listeners(sql)).length === 1, "the hub to listen");
  });
  afterAll(async () => {
    await sql?.end();
    await hub?.stop();
  });

  it("serves what the database holds after the cut, and listens again", async () => {
    await hub.createUser("ann");
    const token = await hub.createToken("ann", ["--role", "read"]);
    // The first use notes the token's use (a write of this process, which retires its cache); the second is
    // answered from the cache.
    for (let i = 0; i < 2; i++) expect((await hub.request("/api/whoami", { token })).status).toBe(200);

    const [pid] = await listeners(sql);
    await sql.query("select pg_terminate_backend($1)", [pid]);
    // Another writer revokes the token while nobody listens: no notification reaches the hub.
    const revoked = await sql.query("delete from access_tokens where secret_hash = $1", [
      createHash("sha256").update(token).digest("hex"),
    ]);
    expect(revoked.rowCount).toBe(1);
    await until(
      async () => (await hub.request("/api/whoami", { token })).status === 401,
      "the revocation to apply",
    );

    // The hub listens again, and a change notified from then on applies.
    await until(async () => {
      const now = await listeners(sql);
      return now.length === 1 && now[0] !== pid;
    }, "a new listening connection");
    const second = await hub.createToken("ann", ["--role", "read"]);
    expect((await hub.request("/api/whoami", { token: second })).status).toBe(200);
    // Its notification reaches this process a moment after the commit (another process's request would
    // come later still), so the test asks until it shows; a hub no longer listening never would.
    await sql.query("update users set fullname = 'Ann Renamed' where handle = 'ann'");
    await until(async () => {
      const after = await hub.request("/api/whoami", { token: second });
      return ((await after.json()) as { fullname: string }).fullname === "Ann Renamed";
    }, "the rename to show");
  });
});
