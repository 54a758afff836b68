import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Migrator, sql, type Kysely, type Migration } from "kysely";
import { generateKey, readKey } from "openpgp";
import { describe, expect, it } from "vitest";
import { createTestDatabase, DIALECTS } from "../test-support/databases.js";
import { runHubd } from "../test-support/hub-process.js";
import type { DatabaseConfig } from "../config.js";
import { migrateToLatest, openDatabase } from "./database.js";
import { migrationProvider } from "./migrations/index.js";

describe.each(DIALECTS)("migrations on %s", (dialect) => {
  /** A new empty database of the dialect, opened; `close` closes and drops it. */
  async function freshDatabase() {
    const database = await createTestDatabase(dialect);
    const dir = mkdtempSync(path.join(os.tmpdir(), "hub-migrate-"));
    const config: DatabaseConfig = database.url
      ? { dialect: "postgres", url: database.url }
      : { dialect: "sqlite", file: path.join(dir, "hub.db") };
    const db = openDatabase(config);
    const close = async () => {
      await db.destroy();
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    };
    return { db, config, close };
  }

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
        "0008-gpg-key-ids",
        "0009-webhooks",
        "0010-device-codes",
        "0011-user-profiles",
        "0012-handle-reservations",
        "0013-social-identities",
        "0014-user-hardware",
        "0015-content-preferences",
        "0016-repo-gating",
        "0017-billing-accounts",
        "0018-mfa",
        "0019-organization-sso",
        "0020-papers",
        "0021-deleted-handle-reservations",
        "0022-follows-and-space-sdk",
        "0023-change-notes",
        "0024-session-inference-tokens",
        "0025-discussions",
        "0026-xet",
        "0027-change-counters",
        "0028-discovery",
        "0029-likes-and-collections",
        "0030-listing-indexes",
        "0031-name-search",
        "0032-gguf-facts",
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
          "session_inference_tokens",
          "user_profiles",
          "handle_reservations",
          "social_identities",
          "user_hardware",
          "content_preferences",
          "account_activity",
          "recommendation_suppressions",
          "repo_access_requests",
          "user_mfa",
          "user_mfa_recovery_codes",
          "organization_sso",
          "sso_authorizations",
          "sso_logins",
          "papers",
          "paper_submissions",
          "paper_claims",
          "paper_citations",
          "billing_accounts",
          "payment_methods",
          "user_follows",
          "organization_follows",
          "discussions",
          "discussion_events",
          "discussion_reactions",
          "notifications",
          "repo_watches",
          "xet_xorbs",
          "xet_xorb_links",
          "xet_files",
          "xet_dedup_chunks",
        ]),
      );
    } finally {
      await db.destroy();
      await database.drop();
    }
  });

  it("run a migration merged after higher-numbered ones already ran (numbers may leave gaps)", async () => {
    const { db, config, close } = await freshDatabase();
    try {
      await migrateToLatest(db, config);
      const ours = await migrationProvider.getMigrations();
      const late: Migration = {
        up: (tx: Kysely<unknown>) =>
          tx.schema
            .createTable("late_table")
            .addColumn("id", "text", (c) => c.primaryKey())
            .execute(),
      };
      await migrateToLatest(db, config, { getMigrations: async () => ({ ...ours, "0009-late": late }) });
      const applied = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
      expect(applied.rows.map((row) => row.name)).toContain("0009-late");
      const tables = await db.introspection.getTables();
      expect(tables.map((table) => table.name)).toContain("late_table");
    } finally {
      await close();
    }
  });

  it("let repositories made before Xet take Xet uploads (xetEnabled true)", async () => {
    const { db, config, close } = await freshDatabase();
    try {
      await new Migrator({ db, provider: migrationProvider }).migrateTo("0025-discussions");
      const at = new Date().toISOString();
      await sql`insert into users (id, handle, email, fullname, created_at) values ('u1', 'alice', 'alice@example.com', 'Alice', ${at})`.execute(
        db,
      );
      await sql`insert into repositories (id, owner_id, owner_type, type, name, private, default_branch, created_at, updated_at) values ('r1', 'u1', 'user', 'model', 'm', 0, 'main', ${at}, ${at})`.execute(
        db,
      );
      await migrateToLatest(db, config);
      const row = await db.selectFrom("repositories").select("xet_enabled").executeTakeFirstOrThrow();
      expect(row.xet_enabled).toBe(1);
    } finally {
      await close();
    }
  });

  it("give GPG keys registered before signature checks the ids of their primary key and subkeys", async () => {
    const { db, config, close } = await freshDatabase();
    try {
      await new Migrator({ db, provider: migrationProvider }).migrateTo("0006-account-keys");
      const { publicKey } = await generateKey({
        userIDs: [{ email: "alice@example.com" }],
        subkeys: [{}, { sign: true }],
        format: "armored",
      });
      const at = new Date().toISOString();
      await sql`insert into users (id, handle, email, fullname, created_at) values ('u1', 'alice', 'alice@example.com', 'Alice', ${at})`.execute(
        db,
      );
      await sql`insert into account_keys (id, user_id, title, type, algorithm, fingerprint, public_key, created_at) values ('k1', 'u1', 'laptop', 'gpg', 'eddsa', 'F', ${publicKey}, ${at})`.execute(
        db,
      );
      await migrateToLatest(db, config);
      const ids = await db.selectFrom("gpg_key_ids").selectAll().orderBy("key_id").execute();
      const expected = (await readKey({ armoredKey: publicKey }))
        .getKeyIDs()
        .map((id) => id.toHex().toUpperCase());
      expect(expected).toHaveLength(3);
      expect(ids).toEqual(expected.sort().map((keyId) => ({ key_id: keyId, account_key_id: "k1" })));
    } finally {
      await close();
    }
  });

  it("keep handle reservations when they outlive accounts, and clear the account of a deleted one", async () => {
    const { db, config, close } = await freshDatabase();
    try {
      await new Migrator({ db, provider: migrationProvider }).migrateTo("0015-content-preferences");
      const at = new Date().toISOString();
      await sql`insert into users (id, handle, email, fullname, created_at) values ('u1', 'alicia', 'a@example.com', 'A', ${at})`.execute(
        db,
      );
      await sql`insert into handle_reservations (handle, user_id, reserved_until, created_at) values ('alice', 'u1', '2100-01-01T00:00:00.000Z', ${at})`.execute(
        db,
      );
      await migrateToLatest(db, config);
      const kept = await db.selectFrom("handle_reservations").selectAll().execute();
      expect(kept).toEqual([
        { handle: "alice", user_id: "u1", reserved_until: "2100-01-01T00:00:00.000Z", created_at: at },
      ]);
      await db.deleteFrom("users").where("id", "=", "u1").execute();
      const orphaned = await db.selectFrom("handle_reservations").select(["handle", "user_id"]).execute();
      expect(orphaned).toEqual([{ handle: "alice", user_id: null }]);
    } finally {
      await close();
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
