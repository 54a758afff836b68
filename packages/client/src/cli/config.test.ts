import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePorts, startHub, type TestHub } from "../../../server/src/test-support/hub-process.js";
import { runCli, tempHome } from "../test-support/run-cli.js";

/** The configuration variables of spec Authentication 9, one test each, through the built CLI. */
describe("the hub CLI's configuration variables", () => {
  let hub: TestHub;
  let aliceToken: string;
  let bobToken: string;

  beforeAll(async () => {
    hub = await startHub();
    await hub.createUser("alice");
    await hub.createUser("bob");
    aliceToken = await hub.createToken("alice");
    bobToken = await hub.createToken("bob");
  });
  afterAll(() => hub?.stop());

  const loggedIn = async (env: Record<string, string>) => {
    const login = await runCli(["login", "--token-stdin", "--name", "mine"], env, `${aliceToken}\n`);
    expect(login.code, login.stderr).toBe(0);
    return env;
  };

  it("SERVICE_TOKEN overrides the selected saved token, and hub env names it without showing it", async () => {
    const env = await loggedIn({ SERVICE_ENDPOINT: hub.url, SERVICE_HOME: tempHome() });
    expect((await runCli(["whoami"], env)).stdout.split("\n")[0]).toBe("alice");
    const overridden = { ...env, SERVICE_TOKEN: bobToken };
    expect((await runCli(["whoami"], overridden)).stdout.split("\n")[0]).toBe("bob");
    const shown = await runCli(["env", "--json"], overridden);
    const settings = JSON.parse(shown.stdout) as { token_source: string; token_hint: string };
    expect(settings.token_source).toBe("SERVICE_TOKEN");
    expect(bobToken.startsWith(settings.token_hint.replace("…", ""))).toBe(true);
    for (const output of [shown.stdout, (await runCli(["env"], overridden)).stdout]) {
      expect(output).not.toContain(bobToken);
      expect(output).not.toContain(aliceToken);
    }
  });

  it("SERVICE_ENDPOINT overrides the saved token's hub", async () => {
    const env = await loggedIn({ SERVICE_ENDPOINT: hub.url, SERVICE_HOME: tempHome() });
    // Without the variable, the hub the token was saved for.
    const saved = await runCli(["whoami"], { SERVICE_HOME: env.SERVICE_HOME });
    expect(saved.code, saved.stderr).toBe(0);
    const [deadPort] = await freePorts(1);
    const elsewhere = await runCli(["whoami"], { ...env, SERVICE_ENDPOINT: `http://127.0.0.1:${deadPort}` });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr.trim()).toMatch(
      new RegExp(`^error: Could not reach the hub at http://127.0.0.1:${deadPort}: .*\\(econnrefused\\)$`),
    );
    const shown = JSON.parse(
      (await runCli(["env", "--json"], { ...env, SERVICE_ENDPOINT: `http://127.0.0.1:${deadPort}/` })).stdout,
    ) as {
      endpoint: string;
      endpoint_source: string;
    };
    expect(shown).toMatchObject({
      endpoint: `http://127.0.0.1:${deadPort}`,
      endpoint_source: "SERVICE_ENDPOINT",
    });
  });

  it("SERVICE_HOME moves the configuration and cache root, which defaults under the home folder", async () => {
    const home = tempHome();
    const moved = await loggedIn({ SERVICE_ENDPOINT: hub.url, SERVICE_HOME: path.join(home, "elsewhere") });
    const file = path.join(home, "elsewhere", "tokens.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const settings = JSON.parse((await runCli(["env", "--json"], moved)).stdout) as Record<string, string>;
    expect(settings).toMatchObject({
      home: path.join(home, "elsewhere"),
      home_source: "SERVICE_HOME",
      cache_dir: path.join(home, "elsewhere", "hub"),
      token_file: file,
    });
    // Another root knows nothing of that token.
    const other = await runCli(["whoami"], { SERVICE_ENDPOINT: hub.url, SERVICE_HOME: tempHome() });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain("(not_logged_in)");
    // Without the variable: ~/.cache/hub.
    await loggedIn({ SERVICE_ENDPOINT: hub.url, HOME: home });
    expect(statSync(path.join(home, ".cache", "hub", "tokens.json")).mode & 0o777).toBe(0o600);
    expect(existsSync(path.join(home, "elsewhere", "hub"))).toBe(false);
  });

  it("SERVICE_DEBUG=1 prints the traceback and request id; normal runs print one line", async () => {
    const env = await loggedIn({ SERVICE_ENDPOINT: hub.url, SERVICE_HOME: tempHome() });
    const plain = await runCli(["repo", "info", "alice/missing"], env);
    expect(plain.code).toBe(1);
    expect(plain.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^error: .* \(repo_not_found\)$/),
    ]);
    const debug = await runCli(["repo", "info", "alice/missing"], { ...env, SERVICE_DEBUG: "1" });
    expect(debug.code).toBe(1);
    const lines = debug.stderr.trim().split("\n");
    expect(lines[0]).toBe(plain.stderr.trim());
    expect(debug.stderr).toMatch(/^status: 404$/m);
    expect(debug.stderr).toMatch(/^request id: [0-9a-f-]{36}$/m);
    expect(debug.stderr).toMatch(/^NotFoundError: /m);
    expect(debug.stderr).toMatch(/^\s+at .*connection\.js/m);
    // The request id is the one the hub logged.
    const requestId = /^request id: (.+)$/m.exec(debug.stderr)?.[1] ?? "";
    expect(hub.logs.some((line) => line.includes(requestId))).toBe(true);
  });
});
