import { spawn } from "node:child_process";
import { statSync } from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import type { TokenMetadata } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../../../server/src/test-support/browser.js";
import { startHub, type TestHub } from "../../../server/src/test-support/hub-process.js";
import { HUB_CLI, runCli, tempHome, type CliRun } from "../test-support/run-cli.js";

/** `hub login` through the browser device flow, approved or denied by a real headless Chromium. */
describe("hub login with the device flow", () => {
  let hub: TestHub;
  let browser: Browser;
  let alice: { handle: string; password: string };

  beforeAll(async () => {
    hub = await startHub({ env: { HUB_DEVICE_POLL_INTERVAL_SECONDS: "1" } });
    alice = await hub.createUser("alice");
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await hub?.stop();
  });

  /** Starts `hub login ARGS`; resolves with the URL it asks the person to open, and its eventual result. */
  function startLogin(args: string[], env: Record<string, string>) {
    const child = spawn(process.execPath, [HUB_CLI, "login", ...args], {
      env: { PATH: process.env.PATH, HOME: env.SERVICE_HOME, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    const done = new Promise<CliRun>((resolve) =>
      child.once("exit", (code) => resolve({ code, stdout, stderr })),
    );
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    const url = new Promise<string>((resolve, reject) => {
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8");
        const found = /\(or open (\S+)\)/.exec(stderr)?.[1];
        if (found) resolve(found);
      });
      void done.then(() => reject(new Error(`hub login ended first: ${stderr}`)));
    });
    return { url, done };
  }

  async function signInAndDecide(url: string, decide: (page: Page) => Promise<void>) {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(url);
      await page.getByLabel("User name or email").fill("alice");
      await page.getByLabel("Password").fill(alice.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await decide(page);
    } finally {
      await context.close();
    }
  }

  it("prints a code, waits for approval in the browser, and saves the token it gets", async () => {
    const env = { SERVICE_ENDPOINT: hub.url, SERVICE_HOME: tempHome() };
    const login = startLogin(["--name", "laptop"], env);
    const url = await login.url;
    expect(url).toMatch(new RegExp(`^${hub.url}/device\\?user_code=[A-Z]{4}-[A-Z]{4}$`));
    await signInAndDecide(url, async (page) => {
      await page.getByRole("button", { name: "Approve" }).click();
      await page.getByRole("heading", { name: "Device connected" }).waitFor();
    });
    const result = await login.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('as alice; token saved as "laptop"');
    expect(statSync(path.join(env.SERVICE_HOME, "tokens.json")).mode & 0o777).toBe(0o600);

    const who = await runCli(["whoami", "--json"], env);
    expect(JSON.parse(who.stdout)).toMatchObject({ name: "alice", auth: { accessToken: { role: "write" } } });
    // The device token is an ordinary token of the account, listed (after the password) and revocable.
    const tokens = JSON.parse(
      (await runCli(["token", "list", "--json"], env, `${alice.password}\n`)).stdout,
    ) as TokenMetadata[];
    expect(tokens.map((t) => t.name)).toEqual([expect.stringMatching(/^hub-cli device login/)]);
  });

  it("asks for fine-grained scopes, of which the person may leave some unchecked", async () => {
    const env = { SERVICE_ENDPOINT: hub.url, SERVICE_HOME: tempHome() };
    const login = startLogin(["--scopes", "repo:read,repo:write,inference:run", "--json"], env);
    await signInAndDecide(await login.url, async (page) => {
      await page.locator('input[name=scope][value="repo:write"]').uncheck();
      await page.getByRole("button", { name: "Approve" }).click();
      await page.getByRole("heading", { name: "Device connected" }).waitFor();
    });
    const result = await login.done;
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ name: "alice" });
    const who = JSON.parse((await runCli(["whoami", "--json"], env)).stdout) as {
      auth: { accessToken: { kind: string; scopes: string[] } };
    };
    expect(who.auth.accessToken).toMatchObject({
      kind: "fine-grained",
      scopes: ["repo:read", "inference:run"],
    });
  });

  it("ends with one clear line and exit 1 when the person denies it", async () => {
    const env = { SERVICE_ENDPOINT: hub.url, SERVICE_HOME: tempHome() };
    const login = startLogin([], env);
    await signInAndDecide(await login.url, async (page) => {
      await page.getByRole("button", { name: "Deny" }).click();
      await page.getByRole("heading", { name: "Sign-in denied" }).waitFor();
    });
    const result = await login.done;
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split("\n").pop()).toBe(
      "error: The login was denied in the browser. (access_denied)",
    );
    const who = await runCli(["whoami"], env);
    expect(who.stderr).toContain("(not_logged_in)");
  });

  it("ends with one clear line and exit 1 when nobody approves in time", async () => {
    const hurried = await startHub({
      env: { HUB_DEVICE_POLL_INTERVAL_SECONDS: "1", HUB_DEVICE_CODE_TTL_SECONDS: "2" },
    });
    try {
      const result = await runCli(["login"], { SERVICE_ENDPOINT: hurried.url, SERVICE_HOME: tempHome() });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("enter the code");
      expect(result.stderr.trim().split("\n").pop()).toBe(
        "error: The login code expired before it was approved; run hub login again. (expired_token)",
      );
    } finally {
      await hurried.stop();
    }
  });

  it("refuses scopes the hub does not know, before anything is opened", async () => {
    const result = await runCli(["login", "--scopes", "repo:fly"], {
      SERVICE_ENDPOINT: hub.url,
      SERVICE_HOME: tempHome(),
    });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toMatch(/^error: .+ \(invalid_scope\)$/);
  });
});
