import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The built CLI, as users run it. */
export const HUB_CLI = fileURLToPath(new URL("../../dist/cli/hub.js", import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A fresh configuration root for one test's CLI runs. */
export function tempHome(prefix = "hub-cli-"): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * Runs `node packages/client/dist/cli/hub.js ARGS` with only the given
 * environment (plus PATH and HOME), so nothing from the machine leaks in.
 */
export function runCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  stdin = "",
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [HUB_CLI, ...args], {
      env: { PATH: process.env.PATH, HOME: env.HOME ?? os.tmpdir(), ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}
