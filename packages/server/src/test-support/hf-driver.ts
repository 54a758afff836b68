import { spawn } from "node:child_process";

/**
 * Runs a Python driver script of the tests with one JSON request as its argument, in an environment of only
 * PATH and `env`; resolves with the JSON object on its last line of output, rejects with its stderr's tail.
 */
export function runPythonDriver<T = Record<string, unknown>>(
  interpreter: string,
  driver: string,
  request: Record<string, unknown>,
  env: Record<string, string>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const child = spawn(interpreter, [driver, JSON.stringify(request)], {
      env: { PATH: process.env.PATH, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.once("close", (code) => {
      if (code !== 0) return reject(new Error(`python exited with ${code}:\n${stderr.slice(-4000)}`));
      resolve(JSON.parse(stdout.trim().split("\n").pop() ?? "{}") as T);
    });
  });
}

/** A hub's JSON log lines from index `from` on (lines that are not JSON are skipped). */
export function logLinesSince<T>(logs: readonly string[], from: number): T[] {
  return logs.slice(from).flatMap((line) => {
    try {
      return [JSON.parse(line) as T];
    } catch {
      return [];
    }
  });
}
