import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Health } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { git, lfsGitConfig, withToken } from "../test-support/git-client.js";
import { freePorts, readJson, startHub, type TestHub } from "../test-support/hub-process.js";
import { startMinio, type TestMinio } from "../test-support/minio.js";
import { documentedNginxBlock, holdPort, startNginx, type TestNginx } from "../test-support/nginx.js";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/**
 * The nginx configuration of docs/deployment.md, run as written (only the
 * addresses and ports replaced) in front of two hub processes on PostgreSQL,
 * Redis and MinIO: the API, the deep health check, a clone and a push over
 * HTTPS's plain-HTTP twin, and an LFS upload and download all go through it.
 */
describe("the deployment page's nginx configuration, in front of two hub processes", () => {
  let first: TestHub;
  let second: TestHub;
  let minio: TestMinio;
  let nginx: TestNginx | null = null;
  let work: string;
  let hubPort = 0;
  let routerPort = 0;
  let token: string;

  beforeAll(async () => {
    [hubPort = 0, routerPort = 0] = await freePorts(2);
    // Held until nginx starts: MinIO and two hubs start first, and another test's process must not take the
    // ports meanwhile (nginx would then fail to bind while the test talked to that process).
    const held = await Promise.all([hubPort, routerPort].map(holdPort));
    const publicUrl = `http://127.0.0.1:${hubPort}`;
    minio = await startMinio();
    first = await startHub({
      dialect: "postgres",
      env: {
        HUB_REDIS_URL: "redis://127.0.0.1:6379",
        HUB_REDIS_PREFIX: `hub-test-${randomBytes(4).toString("hex")}:`,
        HUB_PUBLIC_URL: publicUrl,
        HUB_GIT_PUBLIC_URL: publicUrl,
        HUB_ROUTER_PUBLIC_URL: `http://127.0.0.1:${routerPort}`,
        HUB_TRUST_PROXY: "1",
        // The rolling restart below keeps four clients busy for 15 seconds; its subject is not the rate limit.
        HUB_RATE_LIMIT: "100000",
        ...minio.env(await minio.createBucket()),
      },
    });
    second = await startHub({ sharing: first });

    work = mkdtempSync(path.join(os.tmpdir(), "hub-nginx-"));
    const host = (url: string) => new URL(url).host;
    const site = documentedNginxBlock(/^upstream hub \{/)
      .replace("server 10.0.0.11:8080", `server ${host(first.url)}`)
      .replace("server 10.0.0.12:8080", `server ${host(second.url)}`)
      .replace("server 10.0.0.11:8082", `server ${host(first.routerUrl)}`)
      .replace("server 10.0.0.12:8082", `server ${host(second.routerUrl)}`)
      .replace("listen 80;", `listen 127.0.0.1:${hubPort};`)
      .replace("listen 81;", `listen 127.0.0.1:${routerPort};`);
    expect(site).not.toMatch(/10\.0\.0\.|listen 8[01];/);
    nginx = await startNginx(work, site, { port: hubPort, held });

    await first.createUser("alice");
    token = await first.createToken("alice");
    lfsGitConfig(work, false);
  });
  afterAll(async () => {
    await nginx?.stop();
    await second?.stop();
    await first?.stop();
    await minio?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const viaNginx = (pathname: string, init: RequestInit = {}) =>
    fetch(`http://127.0.0.1:${hubPort}${pathname}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) },
    });

  it("answers the API and the deep health check through both processes", async () => {
    for (let i = 0; i < 6; i++) {
      const response = await viaNginx("/api/whoami");
      expect(response.status).toBe(200);
      expect(((await response.json()) as { name: string }).name).toBe("alice");
    }
    const health = await viaNginx("/api/health?deep=1");
    expect(health.status).toBe(200);
    const body = await readJson<Health>(health);
    expect(body.checks?.redis?.ok).toBe(true);
    expect(body.checks?.objectStore.ok).toBe(true);
    const models = await fetch(`http://127.0.0.1:${routerPort}/v1/models`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(models.status).toBe(200);
    expect(((await models.json()) as { object: string }).object).toBe("list");
  });

  it("keeps answering through a rolling restart: each process drains on SIGTERM and comes back", async () => {
    // Four clients read and write through nginx all along, each request on its own.
    let restarting = true;
    const statuses: number[] = [];
    const failures: string[] = [];
    const client = async (n: number) => {
      for (let i = 0; restarting; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        const request =
          i % 3 === 2
            ? viaNginx("/api/repos", {
                method: "POST",
                headers: { "content-type": "application/json" },
                body: JSON.stringify({ repo_id: `alice/rolling-${n}-${i}` }),
              })
            : viaNginx("/api/whoami");
        await request.then(
          async (response) => {
            statuses.push(response.status);
            if (response.status >= 300)
              failures.push(`${n}/${i}: ${response.status} ${await response.text()}`);
          },
          (error: Error) => failures.push(`${n}/${i}: ${error.message}`),
        );
      }
    };
    const clients = Promise.all([0, 1, 2, 3].map(client));
    // The page's procedure: SIGTERM one process, wait for it to exit, start it again (on the same ports, as a
    // restarted service would be), wait for its deep health check, and until nginx sends it requests again (its
    // access log shows them; nginx skips a refused process for fail_timeout, counted in whole seconds). Then
    // the next.
    for (const hub of [first, second]) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await hub.signal("SIGTERM")).toBe(0);
      const restarted = hub.logs.length;
      await hub.start();
      expect((await hub.request("/api/health?deep=1")).status).toBe(200);
      const servedAgain = () =>
        hub.logs.slice(restarted).some((line) => line.includes('"path":"/api/whoami"'));
      for (let waited = 0; !servedAgain(); waited += 100) {
        expect(waited, "nginx did not send to the restarted process within 15 s").toBeLessThan(15_000);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    restarting = false;
    await clients;
    expect(failures).toEqual([]);
    expect(statuses.length).toBeGreaterThan(40);
    // Both answer again.
    for (const hub of [first, second]) expect((await hub.request("/api/whoami", { token })).status).toBe(200);
  });

  it("clones, pushes and downloads LFS objects through it with the real git and git-lfs", async () => {
    const created = await viaNginx("/api/repos", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ repo_id: "alice/behind-nginx" }),
    });
    expect(created.status).toBe(201);
    const gitLfs = (args: string[], cwd: string) =>
      git(args, cwd, { GIT_CONFIG_GLOBAL: path.join(work, ".gitconfig"), HOME: work });
    const remote = withToken(`http://127.0.0.1:${hubPort}/alice/behind-nginx`, token);

    const clone = await gitLfs(["clone", remote, "pusher"], work);
    expect(clone.code, clone.stderr).toBe(0);
    const dir = path.join(work, "pusher");
    const weights = randomBytes(3 * 1024 * 1024);
    writeFileSync(path.join(dir, "model.safetensors"), weights);
    writeFileSync(path.join(dir, "README.md"), "# Behind nginx\n");
    await gitLfs(["add", "."], dir);
    await gitLfs(["commit", "-m", "Weights"], dir);
    const push = await gitLfs(["push", "origin", "main"], dir);
    expect(push.code, push.stderr).toBe(0);

    const again = await gitLfs(["clone", remote, "reader"], work);
    expect(again.code, again.stderr).toBe(0);
    const fetched = readFileSync(path.join(work, "reader", "model.safetensors"));
    expect(sha256(fetched)).toBe(sha256(weights));
    const pointer = (await gitLfs(["cat-file", "-p", "HEAD:model.safetensors"], path.join(work, "reader")))
      .stdout;
    expect(pointer).toContain(`oid sha256:${sha256(weights)}`);

    // resolve through nginx redirects to the store, as on one process.
    const resolved = await viaNginx("/alice/behind-nginx/resolve/main/model.safetensors", {
      redirect: "manual",
    });
    expect(resolved.status).toBe(302);
    expect(resolved.headers.get("location")).toContain(new URL(minio.endpoint).host);
  });
});
