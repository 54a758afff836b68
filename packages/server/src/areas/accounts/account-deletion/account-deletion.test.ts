import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type {
  AccountDeletion,
  AccountDeletionPreview,
  ApiError,
  CreatedWebhook,
  InferenceOverview,
  OrgMember,
} from "@hub/api";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseConfig } from "../../../config.js";
import { openDatabase, type Db } from "../../../db/database.js";
import { foreignKeysTo } from "../../../db/foreign-keys.js";
import { DIALECTS } from "../../../test-support/databases.js";
import { FakeProvider, writeProvidersFile } from "../../../test-support/fake-provider.js";
import { git, lfsGitConfig, sshCommand, withToken } from "../../../test-support/git-client.js";
import { readJson, startHub, type TestHub } from "../../../test-support/hub-process.js";
import { WebhookReceiver } from "../../../test-support/webhook-receiver.js";

/** A small GIF: avatars are checked by their bytes. */
const AVATAR = Buffer.concat([Buffer.from("GIF89a"), Buffer.from([1, 0, 1, 0, 0, 0, 0, 0x2c, 0x3b])]);

describe.each(DIALECTS)("deleting an account on %s", (dialect) => {
  const provider = new FakeProvider("solo");
  const receiver = new WebhookReceiver();
  let hub: TestHub;
  let db: Db;
  let work: string;
  let keyFile: string;
  let alice: { handle: string; password: string };
  let aliceId: string;
  let soloOrgId: string;
  const tokens: Record<string, string> = {};
  let session: string;
  /** LFS objects: one only alice's repository holds, one bob's repository holds too. */
  const lfs = { own: Buffer.alloc(150_000, 1), shared: Buffer.alloc(150_000, 2) };
  const oid = (content: Buffer) => createHash("sha256").update(content).digest("hex");
  const objectFile = (content: Buffer) => {
    const id = oid(content);
    return path.join(hub.dataDir, "lfs", "objects", id.slice(0, 2), id.slice(2, 4), id);
  };
  const repoDir = (id: string) => path.join(hub.dataDir, "repositories", id.slice(0, 2), `${id}.git`);
  const avatarFile = () => {
    const sha = createHash("sha256").update(AVATAR).digest("hex");
    return path.join(hub.dataDir, "avatars", sha.slice(0, 2), sha);
  };

  const preview = (token = tokens.write) => hub.request("/api/me/account-deletion", { token });
  const remove = (json: unknown, token = tokens.write, headers: Record<string, string> = {}) =>
    hub.request("/api/me/account", { method: "DELETE", token, json, headers });
  const ssh = (args: string[], cwd = work) =>
    git(args, cwd, {
      GIT_SSH_COMMAND: sshCommand(keyFile),
    });
  const withLfs = (args: string[], cwd = work) =>
    git(args, cwd, { GIT_CONFIG_GLOBAL: lfsGitConfig(work, false) });

  /** Creates a repository and pushes one LFS file to it over HTTPS. */
  async function pushLfs(token: string, repoId: string, content: Buffer): Promise<void> {
    const dir = path.join(work, repoId.replace("/", "-"));
    expect((await withLfs(["clone", "-q", withToken(`${hub.gitUrl}/${repoId}`, token), dir])).code).toBe(0);
    writeFileSync(path.join(dir, "weights.safetensors"), content);
    await withLfs(["add", "weights.safetensors"], dir);
    await withLfs(["commit", "-q", "-m", "weights"], dir);
    const push = await withLfs(["push", "-q", "origin", "main"], dir);
    expect(push.code, push.stderr).toBe(0);
  }
  async function createRepo(token: string, repoId: string, type = "model", isPrivate = false) {
    const response = await hub.request("/api/repos", {
      method: "POST",
      token,
      json: { repo_id: repoId, repo_type: type, private: isPrivate },
    });
    expect(response.status, await response.clone().text()).toBe(201);
    return ((await response.json()) as { _id: string })._id;
  }
  const cli = async (args: string[]) => {
    const result = await hub.cli(args);
    expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(0);
  };

  /** Every table and text column of the live schema that holds one of the ids, as `table.column`. */
  async function columnsHolding(ids: string[]): Promise<string[]> {
    const found: string[] = [];
    for (const table of await db.introspection.getTables()) {
      if (table.name.startsWith("kysely_")) continue;
      for (const column of table.columns) {
        if (!/char|text/i.test(column.dataType)) continue;
        const rows = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table.name)}
          where ${sql.ref(column.name)} in (${sql.join(ids)})`.execute(db);
        if (Number(rows.rows[0]?.n ?? 0) > 0) found.push(`${table.name}.${column.name}`);
      }
    }
    return found.sort();
  }

  beforeAll(async () => {
    await provider.start();
    await receiver.start();
    const providers = writeProvidersFile("deletion", [
      {
        slug: "solo",
        baseUrl: provider.url,
        apiKey: "sk-solo-deletion-key",
        models: [
          { id: "acme/chat-1", providerModel: "m", task: "chat", pricing: { input: 1000, output: 1000 } },
        ],
      },
    ]);
    hub = await startHub({
      dialect,
      env: { HUB_PROVIDERS: providers, HUB_WEBHOOKS_ALLOW_PRIVATE: "1", HUB_RATE_LIMIT: "1000000" },
    });
    hub.secrets.add("sk-solo-deletion-key");
    const config: DatabaseConfig = hub.database.url
      ? { dialect: "postgres", url: hub.database.url }
      : { dialect: "sqlite", file: path.join(hub.dataDir, "hub.db") };
    db = openDatabase(config);
    work = mkdtempSync(path.join(os.tmpdir(), "hub-deletion-"));

    alice = await hub.createUser("alice");
    await hub.createUser("bob");
    await hub.createUser("carol");
    tokens.write = await hub.createToken("alice", ["--role", "write"]);
    tokens.read = await hub.createToken("alice", ["--role", "read"]);
    tokens.fine = await hub.createToken("alice", ["--scopes", "repo:read,repo:write,inference:run"]);
    tokens.bob = await hub.createToken("bob", ["--role", "write"]);
    tokens.carol = await hub.createToken("carol", ["--role", "write"]);
    session = await hub.signIn("alice", alice.password);
    aliceId = (
      await db.selectFrom("users").select("id").where("handle", "=", "alice").executeTakeFirstOrThrow()
    ).id;

    // Organizations: one only alice is in (deleted with her), one she leaves, one she is the only admin of.
    await cli(["org", "create", "alice-lab", "--owner", "alice"]);
    await cli(["org", "create", "teamco", "--owner", "bob", "--plan", "team"]);
    await cli(["org", "add-member", "teamco", "alice", "--role", "write"]);
    await cli(["org", "create", "acme", "--owner", "alice"]);
    await cli(["org", "add-member", "acme", "carol", "--role", "read"]);
    soloOrgId = (
      await db
        .selectFrom("organizations")
        .select("id")
        .where("handle", "=", "alice-lab")
        .executeTakeFirstOrThrow()
    ).id;
    tokens.bounded = await hub.createToken("alice", ["--role", "write", "--org", "teamco"]);

    // Repositories with git data and LFS objects, one object shared with bob's repository.
    await createRepo(tokens.write, "alice/model");
    await createRepo(tokens.write, "alice/notes", "dataset", true);
    await createRepo(tokens.write, "alice-lab/tool");
    await createRepo(tokens.bob, "bob/mirror");
    await createRepo(tokens.write, "teamco/shared");
    await pushLfs(tokens.write, "alice/model", lfs.own);
    await pushLfs(tokens.write, "alice-lab/tool", lfs.shared);
    await pushLfs(tokens.bob, "bob/mirror", lfs.shared);

    // Keys, profile, avatar, settings, identities, billing, inference.
    keyFile = path.join(work, "alice_key");
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", keyFile]);
    const key = await hub.request("/api/me/keys", {
      method: "POST",
      token: tokens.write,
      json: { key: readFileSync(`${keyFile}.pub`, "utf8") },
    });
    expect(key.status).toBe(201);
    const writes: Array<[string, string, unknown]> = [
      ["PUT", "/api/me/profile", { fullname: "Alice", bio: "Looking glasses." }],
      ["PUT", "/api/me/hardware", { accelerators: [] }],
      ["PUT", "/api/me/content-preferences", { hiddenTags: ["x"] }],
      ["PUT", "/api/me/inference/provider-keys/solo", { key: "sk-alice-own-provider-key" }],
      ["PUT", "/api/me/inference/preferences", { monthly_hard_limit_usd: 5 }],
    ];
    hub.secrets.add("sk-alice-own-provider-key");
    for (const [method, url, json] of writes) {
      const response = await hub.request(url, { method, token: tokens.write, json });
      expect(response.status, url).toBe(200);
    }
    const avatar = await hub.request("/api/me/avatar", {
      method: "PUT",
      token: tokens.write,
      headers: { "content-type": "text/plain" },
      body: AVATAR,
    });
    expect(avatar.status).toBe(200);
    // Alice's own route, and bob's on her namespace: he hears that her repositories went.
    for (const token of [tokens.write, tokens.bob]) {
      const hook = await hub.request("/api/me/webhooks", {
        method: "POST",
        token,
        json: { url: receiver.url, watched: [{ type: "user", name: "alice" }], domains: ["repo"] },
      });
      expect(hook.status).toBe(201);
      hub.secrets.add((await readJson<CreatedWebhook>(hook)).secret);
    }
    // Carol asked not to be recommended alice's work.
    const suppression = await hub.request("/api/me/recommendation-suppressions", {
      method: "POST",
      token: tokens.carol,
      json: { kind: "author", value: "alice" },
    });
    expect(suppression.status).toBe(201);
    await cli(["identity", "link", "alice", "github", "alice-gh", "--visible"]);
    await cli(["billing", "plan", "alice", "pro"]);
    await cli([
      "billing",
      "payment-method",
      "set",
      "alice",
      "--brand",
      "visa",
      "--last4",
      "4242",
      "--expires",
      "2035-01",
    ]);
    await cli(["credit", "add", "alice", "1"]);
    await cli(["credit", "add", "teamco", "1"]);
    // One request on her own account (byok, her key) and one billed to teamco, which keeps its accounting.
    const bills: Array<Record<string, string>> = [
      {},
      { "x-service-bill-to": "teamco", "x-service-inference-billing": "routed" },
    ];
    for (const headers of bills) {
      const response = await fetch(`${hub.routerUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${tokens.write}`, "content-type": "application/json", ...headers },
        body: JSON.stringify({ model: "acme/chat-1", messages: [{ role: "user", content: "hi" }] }),
      });
      expect(response.status).toBe(200);
    }
    for (let i = 0; i < 40; i++) {
      const rows = await db.selectFrom("inference_usage").select("inference_id").execute();
      if (rows.length === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }, 180_000);

  afterAll(async () => {
    await db?.destroy();
    await hub?.stop();
    await provider.stop();
    await receiver.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("previews what would go, and the organization that blocks it", async () => {
    const response = await preview();
    expect(response.status).toBe(200);
    const body = await readJson<AccountDeletionPreview>(response);
    expect(body).toMatchObject({
      name: "alice",
      deletable: false,
      confirm: "alice",
      reauthenticationRequired: true,
      blockers: [{ code: "sole_admin", organization: "acme" }],
      repositories: [
        { type: "dataset", id: "alice/notes", private: true },
        { type: "model", id: "alice/model", private: false },
      ],
      organizations: [
        { name: "acme", role: "admin", outcome: "blocked", members: 2, repositories: [] },
        {
          name: "alice-lab",
          role: "admin",
          outcome: "deleted",
          members: 1,
          repositories: [{ type: "model", id: "alice-lab/tool", private: false }],
        },
        { name: "teamco", role: "write", outcome: "left", members: 2, repositories: [] },
      ],
      credentials: { tokens: 4, sessions: 1, sshKeys: 1, gpgKeys: 0 },
      webhooks: 1,
      inference: { usageRecords: 1, providerKeys: 1, creditBalanceUsd: 1, organizationUsageRecords: 1 },
    });
    expect(body.blockers[0]?.message).toContain("PUT /api/organizations/acme/members/{user}");
    const days = (Date.parse(body.usernameReservedUntil) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(89.9);
    const tables = body.records.map((r) => r.table);
    for (const table of [
      "access_tokens",
      "sessions",
      "account_keys",
      "memberships",
      "user_profiles",
      "user_hardware",
      "content_preferences",
      "social_identities",
      "billing_accounts",
      "payment_methods",
    ]) {
      expect(tables, table).toContain(table);
    }
    expect(body.records.find((r) => r.table === "memberships")?.rows).toBe(3);
    expect(tables).not.toContain("handle_reservations");

    // Any session or role token may look; fine-grained tokens may not.
    expect((await preview(tokens.read)).status).toBe(200);
    expect((await hub.request("/api/me/account-deletion", { headers: { cookie: session } })).status).toBe(
      200,
    );
    expect((await hub.request("/api/me/account-deletion")).status).toBe(401);
    const refused = await preview(tokens.fine);
    expect(refused.status).toBe(403);
    expect((await readJson<ApiError>(refused)).code).toBe("insufficient_scope");
  });

  it("needs a session or a write role token, recently reauthenticated", async () => {
    const anonymous = await hub.request("/api/me/account", { method: "DELETE", json: { confirm: "alice" } });
    expect(anonymous.status).toBe(401);
    const stale = await remove({ confirm: "alice" });
    expect(stale.status).toBe(401);
    expect((await readJson<ApiError>(stale)).code).toBe("reauthentication_required");
    for (const token of [tokens.read, tokens.fine]) {
      await hub.reauthenticate(token ?? "", alice.password);
      const refused = await remove({ confirm: "alice" }, token);
      expect(refused.status).toBe(403);
      expect((await readJson<ApiError>(refused)).code).toBe("insufficient_scope");
    }
    await hub.reauthenticate(tokens.bounded ?? "", alice.password);
    const bounded = await remove({ confirm: "alice" }, tokens.bounded);
    expect(bounded.status).toBe(403);
    expect((await readJson<ApiError>(bounded)).code).toBe("outside_token_bounds");
    await hub.reauthenticate(tokens.write ?? "", alice.password);
    expect((await readJson<AccountDeletionPreview>(await preview())).reauthenticationRequired).toBe(false);
  });

  it("asks for the username as confirmation, naming the field", async () => {
    const cases: Array<[unknown, string]> = [
      [{}, "confirmation_required"],
      [{ confirm: "" }, "confirmation_required"],
      [{ confirm: 42 }, "confirmation_required"],
      [{ confirm: null }, "confirmation_required"],
      [{ confirm: "x".repeat(101) }, "confirmation_required"],
      [[], "confirmation_required"],
      ["alice", "confirmation_required"],
      [{ confirm: "bob" }, "confirmation_mismatch"],
      [{ confirm: "ALICE" }, "confirmation_mismatch"],
      [{ confirm: " alice" }, "confirmation_mismatch"],
    ];
    for (const [body, code] of cases) {
      const response = await remove(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      const error = await readJson<ApiError>(response);
      expect(error.code, JSON.stringify(body)).toBe(code);
      expect(error.field).toBe("confirm");
      expect(error.error).toContain('{"confirm": "alice"}');
    }
    const text = await hub.request("/api/me/account", {
      method: "DELETE",
      token: tokens.write,
      body: "confirm=alice",
      headers: { "content-type": "text/plain" },
    });
    expect(text.status).toBe(415);
    expect((await hub.request("/api/whoami", { token: tokens.write })).status).toBe(200);
  });

  it("refuses with 409 while it is the only admin of an organization with other members", async () => {
    const blocked = await remove({ confirm: "alice" });
    expect(blocked.status).toBe(409);
    const error = await readJson<ApiError>(blocked);
    expect(error.code).toBe("account_deletion_blocked");
    expect(error.error).toContain("acme");
    expect((await hub.request("/api/whoami", { token: tokens.write })).status).toBe(200);
    // Handing the organization over lifts the blocker: alice only leaves it.
    const handOver = await hub.request("/api/organizations/acme/members/carol", {
      method: "PUT",
      token: tokens.write,
      json: { role: "admin" },
    });
    expect(handOver.status).toBe(204);
    const now = await readJson<AccountDeletionPreview>(await preview());
    expect(now).toMatchObject({ deletable: true, blockers: [] });
    expect(now.organizations.find((o) => o.name === "acme")?.outcome).toBe("left");
  });

  it("deletes the account and leaves nothing of it reachable", async () => {
    const repoIds = (await db.selectFrom("repositories").select(["id", "owner_id"]).execute()).filter(
      (r) => r.owner_id === aliceId || r.owner_id === soloOrgId,
    );
    expect(repoIds).toHaveLength(3);
    for (const { id } of repoIds) expect(existsSync(repoDir(id))).toBe(true);
    expect(existsSync(objectFile(lfs.own))).toBe(true);
    expect(existsSync(objectFile(lfs.shared))).toBe(true);
    expect(existsSync(avatarFile())).toBe(true);
    // Before: the account's id is all over the schema.
    const before = await columnsHolding([aliceId, soloOrgId]);
    for (const column of [
      "users.id",
      "access_tokens.user_id",
      "sessions.user_id",
      "account_keys.user_id",
      "repositories.owner_id",
      "webhooks.owner_id",
      "webhook_watches.target_id",
      "inference_usage.user_id",
      "inference_owners.owner_id",
      "credit_grants.owner_id",
      "recommendation_suppressions.value",
      "payment_methods.user_id",
      "organizations.id",
    ]) {
      expect(before, column).toContain(column);
    }

    const response = await remove({ confirm: "alice", reason: "moving on" });
    expect(response.status, await response.clone().text()).toBe(200);
    const body = await readJson<AccountDeletion>(response);
    expect(body).toMatchObject({
      deleted: true,
      name: "alice",
      repositories: ["dataset/alice/notes", "model/alice/model", "model/alice-lab/tool"].sort(),
      organizationsDeleted: ["alice-lab"],
      organizationsLeft: ["acme", "teamco"],
    });

    // No row anywhere holds the account's id (or the deleted organization's), in any table, present or future.
    expect(await columnsHolding([aliceId, soloOrgId])).toEqual([]);
    // Every foreign key to accounts cascades, or lets go: reservations, and what the account wrote or did in
    // others' discussions (they show it as "deleted"), which outlives it.
    const lettingGo = new Set([
      "discussions.author_id",
      "discussion_events.author_id",
      "notifications.actor_id",
    ]);
    for (const reference of await foreignKeysTo(db, dialect, "users")) {
      const name = `${reference.table}.${reference.column}`;
      const rule = reference.table === "handle_reservations" || lettingGo.has(name) ? "set null" : "cascade";
      expect(reference.onDelete, name).toBe(rule);
    }

    // Every credential stopped at once.
    for (const token of [tokens.write, tokens.read, tokens.fine, tokens.bounded]) {
      const whoami = await hub.request("/api/whoami", { token });
      expect(whoami.status).toBe(401);
      expect((await readJson<ApiError>(whoami)).code).toBe("invalid_token");
    }
    const signedIn = await hub.request("/api/whoami", { headers: { cookie: session } });
    expect(signedIn.status).toBe(401);
    expect((await readJson<ApiError>(signedIn)).code).toBe("invalid_session");
    const sshTry = await ssh(["ls-remote", `${hub.sshUrl}/bob/mirror.git`]);
    expect(sshTry.code).not.toBe(0);
    expect(sshTry.stderr).toMatch(/Permission denied|publickey/);
    const router = await fetch(`${hub.routerUrl}/v1/models`, {
      headers: { authorization: `Bearer ${tokens.write}` },
    });
    expect(router.status).toBe(401);

    // Repositories, profile and organization are gone from every surface.
    for (const remote of [
      `${hub.gitUrl}/alice/model`,
      withToken(`${hub.gitUrl}/alice/model`, tokens.bob ?? ""),
    ]) {
      const clone = await git(["clone", "-q", remote, path.join(work, `gone-${Math.random()}`)], work);
      expect(clone.code).not.toBe(0);
    }
    for (const repo of ["alice/model", "datasets/alice/notes", "alice-lab/tool"]) {
      const refs = await fetch(`${hub.gitUrl}/${repo}.git/info/refs?service=git-upload-pack`, {
        headers: { authorization: `Bearer ${tokens.bob}` },
      });
      expect(refs.status, repo).toBe(404);
    }
    for (const url of [
      "/api/models/alice/model",
      "/api/datasets/alice/notes",
      "/api/models/alice-lab/tool",
    ]) {
      expect((await hub.request(url, { token: tokens.bob })).status, url).toBe(404);
    }
    expect((await hub.request("/api/users/alice/overview")).status).toBe(404);
    expect((await hub.request("/api/users/alice/avatar")).status).toBe(404);
    expect((await hub.request("/api/organizations/alice-lab", { token: tokens.bob })).status).toBe(404);
    for (const kind of ["models", "datasets"]) {
      const all = (await (await hub.request(`/api/${kind}`, { token: tokens.bob })).json()) as Array<{
        id: string;
      }>;
      expect(
        all.filter((r) => r.id.startsWith("alice")),
        kind,
      ).toEqual([]);
      const authored = (await (await hub.request(`/api/${kind}?author=alice`)).json()) as unknown[];
      expect(authored).toEqual([]);
    }
    expect(
      ((await (await hub.request("/api/models")).json()) as Array<{ id: string }>).map((r) => r.id),
    ).toEqual(expect.arrayContaining(["bob/mirror", "teamco/shared"]));
    const members = await readJson<OrgMember[]>(
      await hub.request("/api/organizations/acme/members", { token: tokens.carol }),
    );
    expect(members.map((m) => [m.user, m.role])).toEqual([["carol", "admin"]]);

    // Disk: git directories, the LFS object only alice had, and the avatar are gone; bob's object stays.
    for (const { id } of repoIds) expect(existsSync(repoDir(id)), id).toBe(false);
    expect(existsSync(objectFile(lfs.own))).toBe(false);
    expect(existsSync(objectFile(lfs.shared))).toBe(true);
    const mirror = path.join(work, "mirror-after");
    expect(
      (await withLfs(["clone", "-q", withToken(`${hub.gitUrl}/bob/mirror`, tokens.bob ?? ""), mirror])).code,
    ).toBe(0);
    expect(readFileSync(path.join(mirror, "weights.safetensors")).equals(lfs.shared)).toBe(true);
    expect(existsSync(avatarFile())).toBe(false);

    // teamco keeps its accounting of the request alice billed to it.
    const overview = await readJson<InferenceOverview>(
      await hub.request("/api/organizations/teamco/inference/overview", { token: tokens.bob }),
    );
    expect(overview.totals.requests).toBe(1);
    expect(overview.balance_usd).toBeLessThan(1);

    // Bob's route that watched alice heard her public repository go; the watch is gone with her.
    const deletions = () =>
      receiver.received
        .map((d) => d.payload as { event: { action: string }; repo: { name: string } })
        .filter((p) => p.event.action === "delete")
        .map((p) => p.repo.name);
    for (let i = 0; i < 100 && deletions().length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(deletions()).toEqual(["alice/model"]);
  });

  it("keeps the handles reserved against impersonation", async () => {
    const user = await hub.cli(
      ["user", "create", "alice", "--email", "impostor@example.com", "--password-stdin"],
      "another password\n",
    );
    expect(user.code).toBe(1);
    expect(user.stderr).toMatch(/reserved/);
    const org = await hub.cli(["org", "create", "alice-lab", "--owner", "bob"]);
    expect(org.code).toBe(1);
    expect(org.stderr).toMatch(/reserved/);
    // The email address is free again.
    const again = await hub.cli(
      ["user", "create", "alice2", "--email", "alice@example.com", "--password-stdin"],
      "a third password\n",
    );
    expect(again.code, again.stderr).toBe(0);
  });

  it("documents both operations in the OpenAPI document", async () => {
    const doc = (await (await hub.request("/api/openapi.json")).json()) as {
      paths: Record<
        string,
        Record<string, { operationId: string; requestBody?: unknown; responses: object }>
      >;
    };
    const get = doc.paths["/api/me/account-deletion"]?.get;
    expect(get?.operationId).toBe("account_deletion_preview");
    expect(JSON.stringify(get?.responses)).toContain("blockers");
    const del = doc.paths["/api/me/account"]?.delete;
    expect(del?.operationId).toBe("account_deletion_execute");
    expect(JSON.stringify(del?.requestBody)).toContain("confirm");
    expect(JSON.stringify(del?.responses)).toContain("organizationsDeleted");
    expect(Object.keys(del?.responses ?? {})).toEqual(
      expect.arrayContaining(["200", "400", "401", "403", "409"]),
    );
  });
});
