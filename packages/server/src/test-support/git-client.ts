import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";

export interface GitResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real git client with no user or system configuration and no
 * prompts, so a missing credential fails instead of waiting for a terminal.
 */
export function git(args: string[], cwd: string, env: Record<string, string> = {}): Promise<GitResult> {
  return new Promise((resolve) => {
    const child = spawn(
      "git",
      ["-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "credential.helper=", ...args],
      {
        cwd,
        env: {
          PATH: process.env.PATH,
          HOME: cwd,
          GIT_CONFIG_NOSYSTEM: "1",
          GIT_CONFIG_GLOBAL: "/dev/null",
          GIT_TERMINAL_PROMPT: "0",
          ...env,
        },
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A clone URL carrying a token as the Basic password, the way git credential helpers send it. */
export function withToken(url: string, token: string): string {
  const parsed = new URL(url);
  parsed.username = "hub-user";
  parsed.password = token;
  return parsed.href;
}

/**
 * GIT_SSH_COMMAND for a test's key: only that key, no host key checks or known-hosts file (the test hub's
 * host key is new every run), errors only, and never a prompt.
 */
export function sshCommand(keyFile: string): string {
  return `ssh -i ${keyFile} -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o BatchMode=yes`;
}

/**
 * A global git configuration with git-lfs's filters (what `git lfs install`
 * writes), in a file of the test's own, so the tests never touch the user's.
 * Returns its path, for GIT_CONFIG_GLOBAL.
 */
export function lfsGitConfig(dir: string, locksVerify: boolean): string {
  const file = path.join(dir, ".gitconfig");
  writeFileSync(
    file,
    `[filter "lfs"]\n\tclean = git-lfs clean -- %f\n\tsmudge = git-lfs smudge -- %f\n\tprocess = git-lfs filter-process\n\trequired = true\n[lfs]\n\tlocksverify = ${locksVerify}\n`,
  );
  return file;
}
