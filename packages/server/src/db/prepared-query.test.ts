import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, DIALECTS, type TestDatabase } from "../test-support/databases.js";
import type { DatabaseConfig } from "../config.js";
import { migrateToLatest, openDatabase, type Db } from "./database.js";
import { preparedQuery } from "./prepared-query.js";

describe.each(DIALECTS)("preparedQuery on %s", (dialect) => {
  let database: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    const config: DatabaseConfig = database.url
      ? { dialect: "postgres", url: database.url }
      : {
          dialect: "sqlite",
          file: path.join(mkdtempSync(path.join(os.tmpdir(), "hub-prepared-")), "hub.db"),
        };
    db = openDatabase(config);
    await migrateToLatest(db, config);
    const plans: Array<[string, string]> = [
      ["o1", "team"],
      ["o2", "free"],
      ["o3", "team"],
    ];
    for (const [id, plan] of plans) {
      await db
        .insertInto("organizations")
        .values({
          id,
          handle: `h-${id}`,
          fullname: `Org ${id}`,
          plan,
          created_at: "2026-01-01T00:00:00.000Z",
        })
        .execute();
    }
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it("runs with each call's arguments in their places, around constants the builder fixed", async () => {
    const byPlanOrId = preparedQuery(
      (q, plan: string, id: string) =>
        q
          .selectFrom("organizations")
          .select("id")
          .where((eb) => eb.or([eb("plan", "=", plan), eb("id", "=", id)]))
          .where("fullname", "!=", "constant")
          .orderBy("id"),
      2,
    );
    expect((await byPlanOrId(db, "team", "none")).map((row) => row.id)).toEqual(["o1", "o3"]);
    expect((await byPlanOrId(db, "free", "o3")).map((row) => row.id)).toEqual(["o2", "o3"]);
    expect(await byPlanOrId(db, "enterprise", "none")).toEqual([]);
  });

  it("accepts the same argument in several places", async () => {
    const handleOrFullname = preparedQuery(
      (q, text: string) =>
        q
          .selectFrom("organizations")
          .select("id")
          .where((eb) => eb.or([eb("handle", "=", text), eb("fullname", "=", text)])),
      1,
    );
    expect((await handleOrFullname(db, "h-o2")).map((row) => row.id)).toEqual(["o2"]);
    expect((await handleOrFullname(db, "Org o1")).map((row) => row.id)).toEqual(["o1"]);
  });
});
