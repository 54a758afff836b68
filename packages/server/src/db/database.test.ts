import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { createTestDatabase, DIALECTS } from "../test-support/databases.js";
import { runHubd } from "../test-support/hub-process.js";
import type { DatabaseConfig } from "../config.js";
import { migrateToLatest, openDatabase } from "./database.js";

describe.each(DIALECTS)("migrations on %s", (dialect) => {
  it("bring a fresh database to the newest schema, and running them again changes nothing", async () => {
    const database = await createTestDatabase(dialect);
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "hub-migrate-")), "hub.db");
    const config: DatabaseConfig = database.url
      ? { dialect: "postgres", url: database.url }
      : { dialect: "sqlite", file };
    const db = openDatabase(config);
    try {
      await migrateToLatest(db, config);
      await migrateToLatest(db, config);
      const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(
        db,
      );
      expect(applied.rows.map((row) => row.name)).toEqual([
        "0001-foundation",
        "0002-repositories",
        "0003-lfs",
        "0004-repo-redirects",
        "0005-lfs-locks",
        "0006-account-keys",
        "0007-inference",
      ]);
      const tables = await db.introspection.getTables();
      expect(tables.map((table) => table.name)).toEqual(
        expect.arrayContaining([
          "users",
          "organizations",
          "memberships",
          "repositories",
          "access_tokens",
          "sessions",
        ]),
      );
    } finally {
      await db.destroy();
      await database.drop();
    }
  });

  it("let two processes migrate one fresh database at the same time", async () => {
    const database = await createTestDatabase(dialect);
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "hub-migrate-"));
    const env = {
      PATH: process.env.PATH,
      HUB_DATA_DIR: dataDir,
      ...(database.url ? { HUB_DATABASE_URL: database.url } : {}),
    };
    const create = (handle: string) =>
      runHubd(
        ["user", "create", handle, "--email", `${handle}@example.com`, "--password-stdin"],
        env,
        "password-123\n",
      );
    try {
      const results = await Promise.all([create("one"), create("two"), create("three")]);
      expect(results.map((result) => result.code)).toEqual([0, 0, 0]);
      const duplicate = await create("one");
      expect(duplicate.code).toBe(1);
    } finally {
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
