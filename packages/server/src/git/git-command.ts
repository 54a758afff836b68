import { spawn } from "node:child_process";

/**
 * The environment every git process runs in: no system or user configuration,
 * no prompts, and none of the caller's GIT_* variables, so nothing outside the
 * hub can change what git does with a repository.
 */
export function gitEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    LANG: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    ...extra,
  };
}

export class GitCommandError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args[0] ?? ""} failed (exit ${exitCode}): ${stderr.trim()}`);
  }
}

/**
 * Runs git with an argument array (never a shell) in `cwd` and returns its
 * standard output. Callers build the arguments themselves; user input only ever
 * travels after `--end-of-options` or on standard input.
 */
export function runGit(
  args: readonly string[],
  options: { cwd: string; input?: string | Buffer; env?: Record<string, string> },
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, { cwd: options.cwd, env: gitEnvironment(options.env), stdio: "pipe" });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.once("error", reject);
    child.once("close", (code) => {
      if (code === 0) resolve(Buffer.concat(out));
      else reject(new GitCommandError(args, code, Buffer.concat(err).toString("utf8")));
    });
    // git may exit before reading its input; its exit status is what counts, not the broken pipe.
    child.stdin.on("error", () => {});
    child.stdin.end(options.input ?? "");
  });
}
