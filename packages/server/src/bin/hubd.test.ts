import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { runHubd, startHub } from "../test-support/hub-process.js";

const HUBD = fileURLToPath(new URL("../../dist/bin/hubd.js", import.meta.url));

describe("hubd admin commands, with no server running", () => {
  let dataDir: string;
  const env = () => ({ PATH: process.env.PATH, HUB_DATA_DIR: dataDir });
  const hubd = (args: string[], stdin = "") => runHubd(args, env(), stdin);

  beforeAll(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "hubd-cli-"));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("creates a user from a password on standard input", async () => {
    const result = await hubd(
      ["user", "create", "root", "--email", "root@example.com", "--password-stdin", "--admin"],
      "correct horse\n",
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^created user root \([0-9a-f-]{36}\)\n$/);
  });

  it("refuses a taken handle, a taken email, a bad handle, a bad email and a short password with exit 1", async () => {
    const cases: Array<[string[], RegExp]> = [
      [
        ["user", "create", "root", "--email", "other@example.com", "--password-stdin"],
        /handle "root" is taken/,
      ],
      [
        ["user", "create", "other", "--email", "ROOT@example.com", "--password-stdin"],
        /already uses root@example.com/,
      ],
      [["user", "create", "Bad_Name", "--email", "b@example.com", "--password-stdin"], /not a valid handle/],
      [["user", "create", "api", "--email", "c@example.com", "--password-stdin"], /reserved/],
      [["user", "create", "dave", "--email", "not-an-email", "--password-stdin"], /not an email address/],
    ];
    for (const [args, message] of cases) {
      const result = await hubd(args, "long enough password\n");
      expect(result.code, args.join(" ")).toBe(1);
      expect(result.stderr).toMatch(message);
    }
    const short = await hubd(
      ["user", "create", "erin", "--email", "e@example.com", "--password-stdin"],
      "short\n",
    );
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/at least 8 characters/);
  });

  it("prints a new token's secret alone on the last line", async () => {
    const result = await hubd([
      "token",
      "create",
      "root",
      "--name",
      "bootstrap",
      "--role",
      "admin",
      "--expires-in",
      "30d",
    ]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines.at(-1)).toMatch(/^hf_[0-9A-Za-z]{34}$/);
    expect(lines.slice(0, -1).join("\n")).not.toContain(lines.at(-1));
  });

  it("makes organization-bounded fine-grained tokens and memberships", async () => {
    expect((await hubd(["org", "create", "acme", "--owner", "root", "--plan", "enterprise"])).code).toBe(0);
    const bad = await hubd(["org", "create", "beta", "--owner", "root", "--plan", "gold"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/Plan must be one of free, team, enterprise/);
    const token = await hubd([
      "token",
      "create",
      "root",
      "--name",
      "ci",
      "--scopes",
      "repo:read,repo:write",
      "--org",
      "acme",
      "--repos",
      "acme/a,acme/b",
    ]);
    expect(token.code, token.stderr).toBe(0);
    const badScope = await hubd(["token", "create", "root", "--name", "ci", "--scopes", "repo:everything"]);
    expect(badScope.code).toBe(1);
    expect(badScope.stderr).toMatch(/Unknown scope "repo:everything"/);
    const badRole = await hubd(["org", "add-member", "acme", "root", "--role", "owner"]);
    expect(badRole.code).toBe(1);
    expect(badRole.stderr).toMatch(/Role must be one of read, contributor, write, admin/);
    const unknownUser = await hubd(["token", "create", "ghost", "--name", "x", "--role", "read"]);
    expect(unknownUser.code).toBe(1);
    expect(unknownUser.stderr).toMatch(/No user is called "ghost"/);
  });

  it("exits 2 with the usage on bad arguments", async () => {
    const cases = [
      ["frobnicate"],
      ["token", "create", "root", "--role", "read"],
      ["token", "create", "root", "--name", "x", "--role", "read", "--expires-in", "soon"],
      ["token", "create", "root", "--name", "x", "--role", "superuser"],
      ["user", "create", "x", "--email", "x@example.com"],
      ["serve", "--only", "hub,ftp"],
      ["org", "add-member", "acme", "--role", "read"],
      ["user", "create", "x", "--bogus"],
    ];
    for (const args of cases) {
      const result = await hubd(args);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr).toMatch(/Usage: hubd/);
    }
    const help = await hubd(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/token create NAME/);
  });

  it("names the setting when the configuration is invalid", async () => {
    const result = await runHubd(["serve"], { ...env(), HUB_PORT: "eighty" });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/HUB_PORT must be a whole number/);
    const database = await runHubd(
      ["user", "create", "x", "--email", "x@example.com", "--password-stdin"],
      { ...env(), HUB_DATABASE_URL: "mysql://db" },
      "password123\n",
    );
    expect(database.code).toBe(1);
    expect(database.stderr).toMatch(/HUB_DATABASE_URL must start with postgres:\/\//);
  });
});

describe("hubd serve lifecycle", () => {
  it("chooses free ports for port 0 and hands out URLs that carry them", async () => {
    const hub = await startHub({ env: { HUB_PORT: "0", HUB_GIT_PORT: "0" } });
    try {
      expect(new URL(hub.url).port).not.toBe("0");
      await hub.createUser("alice");
      const token = await hub.createToken("alice");
      const created = await hub.request("/api/repos", {
        method: "POST",
        token,
        json: { repo_id: "alice/ports" },
      });
      const summary = (await created.json()) as { url: string; git_url: string };
      expect(summary.url).toBe(`${hub.url}/alice/ports`);
      expect(summary.git_url).toBe(`${hub.gitUrl}/alice/ports.git`);
      const batch = await fetch(`${hub.gitUrl}/alice/ports.git/info/lfs/objects/batch`, {
        method: "POST",
        headers: { "content-type": "application/vnd.git-lfs+json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ operation: "upload", objects: [{ oid: "a".repeat(64), size: 1 }] }),
      });
      const answer = (await batch.json()) as { objects: Array<{ actions: { upload: { href: string } } }> };
      expect(answer.objects[0]?.actions.upload.href.startsWith(`${hub.gitUrl}/lfs/objects/`)).toBe(true);
    } finally {
      await hub.stop();
    }
  });

  it("on SIGTERM finishes the request in flight, then exits 0", async () => {
    const hub = await startHub();
    const { port } = new URL(hub.url);
    const socket = net.connect(Number(port), "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    const body = JSON.stringify({ username: "nobody", password: "wrong-password" });
    socket.write(
      `POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    socket.write(body.slice(0, 10));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const exited = hub.signal("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 200));
    let response = "";
    socket.on("data", (chunk) => (response += chunk.toString()));
    const closed = new Promise((resolve) => socket.once("close", resolve));
    socket.write(body.slice(10));
    await closed;
    expect(response).toMatch(/^HTTP\/1\.1 401/);
    expect(response).toContain('"code":"invalid_credentials"');
    expect(await exited).toBe(0);
    expect(hub.logs.join("\n")).toContain('"msg":"stopped"');
    await expect(fetch(`${hub.url}/api/health`)).rejects.toThrow();
    await hub.stop();
  });

  it("exits on SIGTERM after the reader of its log went away", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "hubd-no-reader-"));
    const child = spawn(process.execPath, [HUBD, "serve", "--only", "hub"], {
      env: { PATH: process.env.PATH, HUB_DATA_DIR: dataDir, HUB_PORT: "0" },
      stdio: ["ignore", "pipe", "ignore"],
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    let output = "";
    for await (const chunk of child.stdout) {
      output += (chunk as Buffer).toString();
      if (output.includes('"msg":"listening"')) break;
    }
    // The log's reader closes its end (a collector that died): the shutdown's lines meet a closed pipe.
    child.stdout.destroy();
    child.kill("SIGTERM");
    const code = await Promise.race([exited, sleep(15_000).then(() => "still running")]);
    if (code === "still running") child.kill("SIGKILL");
    expect(code).toBe(0);
    rmSync(dataDir, { recursive: true, force: true });
  });
});
