import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSealer } from "../../../auth/sealed-secret.js";
import { migrateToLatest, openDatabase, type Db } from "../../../db/database.js";
import type { InferenceUsageRow } from "../../../db/schema.js";
import { createCatalog } from "../../../router/candidates.js";
import { createTestDatabase, type TestDatabase } from "../../../test-support/databases.js";
import { createInferenceService } from "./inference.service.js";

const OWNERS = Array.from({ length: 6 }, (_, i) => `owner-${i}`);
const ROUNDS = 30;
const COST = 1_000;

/**
 * Two hub processes writing their ledger batches into one PostgreSQL at once,
 * each batch charging the same owners (SQLite runs one writer at a time, so
 * only PostgreSQL can interleave them). Neither may lose a batch to a
 * deadlock, and every request is written and charged exactly once.
 */
describe("ledger batches of two processes on postgres", () => {
  let database: TestDatabase;
  const dbs: Db[] = [];

  beforeAll(async () => {
    database = await createTestDatabase("postgres");
    const config = { dialect: "postgres" as const, url: database.url ?? "" };
    for (let i = 0; i < 2; i++) dbs.push(openDatabase(config));
    await migrateToLatest(dbs[0] as Db, config);
  });
  afterAll(async () => {
    await Promise.all(dbs.map((db) => db.destroy()));
    await database?.drop();
  });

  const row = (ownerId: string): { usage: InferenceUsageRow; ownerType: string } => ({
    ownerType: "user",
    usage: {
      inference_id: `inf_${randomUUID()}`,
      owner_id: ownerId,
      user_id: ownerId,
      provider: "alpha",
      model: "acme/chat-1",
      task: "chat",
      billing: "routed",
      stream: 0,
      status: 200,
      input_tokens: 1,
      output_tokens: 1,
      cost_nanousd: COST,
      latency_ms: 1,
      ttft_ms: 1,
      created_at: new Date().toISOString(),
    },
  });

  it("never deadlocks two batches that charge the same owners in opposite orders, and counts each row once", async () => {
    const services = dbs.map((db) =>
      createInferenceService({
        db,
        clock: () => new Date(),
        catalog: createCatalog([]),
        sealer: createSealer(randomBytes(32), "provider-keys"),
      }),
    );
    const [one, two] = services;
    if (!one || !two) throw new Error("two services expected");
    for (let round = 0; round < ROUNDS; round++) {
      await Promise.all([one.recordBatch(OWNERS.map(row)), two.recordBatch([...OWNERS].reverse().map(row))]);
    }
    const db = dbs[0] as Db;
    const usage = await db.selectFrom("inference_usage").select(["owner_id"]).execute();
    expect(usage).toHaveLength(2 * ROUNDS * OWNERS.length);
    const owners = await db
      .selectFrom("inference_owners")
      .select(["owner_id", "balance_nanousd", "period_spend_nanousd"])
      .orderBy("owner_id")
      .execute();
    expect(
      owners.map((o) => [o.owner_id, Number(o.balance_nanousd), Number(o.period_spend_nanousd)]),
    ).toEqual(OWNERS.map((id) => [id, -2 * ROUNDS * COST, 2 * ROUNDS * COST]));
  });
});
