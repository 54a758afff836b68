#!/usr/bin/env node
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadConfig } from "../config.js";
import { HubError } from "../errors.js";
import { usageOf, type Command, type OptionValues } from "./command.js";
import { env, login, logout, whoamiCommand } from "./commands/account.js";
import { chat, models } from "./commands/inference.js";
import { keysAdd, keysList, keysRemove } from "./commands/keys.js";
import { repoCreate, repoDelete, repoInfoCommand, repoList } from "./commands/repo.js";
import { tokenCreate, tokenList, tokenRevoke, tokenUse } from "./commands/token.js";
import { download, upload } from "./commands/transfer.js";
import { CliContext, type CliIo } from "./context.js";
import { UsageError } from "./usage-error.js";

/** Every command of the `hub` CLI. */
export const COMMANDS: Command[] = [
  login,
  logout,
  whoamiCommand,
  tokenList,
  tokenCreate,
  tokenRevoke,
  tokenUse,
  repoCreate,
  repoDelete,
  repoInfoCommand,
  repoList,
  upload,
  download,
  keysList,
  keysAdd,
  keysRemove,
  models,
  chat,
  env,
];

function help(): string {
  const width = Math.max(...COMMANDS.map((command) => command.name.length));
  return [
    "usage: hub <command> [options]",
    "",
    ...COMMANDS.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    "",
    "Every command takes --json (machine-readable output) and --help.",
    "Environment: SERVICE_ENDPOINT, SERVICE_TOKEN, SERVICE_HOME, SERVICE_DEBUG=1.",
    "Exit codes: 0 ok, 1 error, 2 usage.",
  ].join("\n");
}

/** The command the arguments name: the longest run of leading words matching a command. */
function findCommand(argv: string[]): { command: Command; rest: string[] } | undefined {
  for (const words of [2, 1]) {
    const name = argv.slice(0, words).join(" ");
    const command = COMMANDS.find((candidate) => candidate.name === name);
    if (command) return { command, rest: argv.slice(words) };
  }
  return undefined;
}

/** One line for an error; with debug, its stack, ids and causes too. */
export function describeError(err: unknown, debug: boolean): string {
  const line =
    err instanceof HubError
      ? `error: ${err.message} (${err.code})`
      : `error: ${err instanceof Error ? err.message : String(err)}`;
  if (!debug) return line;
  const lines = [line];
  if (err instanceof HubError) {
    if (err.status) lines.push(`status: ${err.status}`);
    if (err.requestId) lines.push(`request id: ${err.requestId}`);
    if (err.inferenceId) lines.push(`inference id: ${err.inferenceId}`);
    if (err.url) lines.push(`url: ${err.url}`);
  }
  let current: unknown = err;
  while (current instanceof Error) {
    lines.push(current.stack ?? String(current));
    current = current.cause;
    if (current !== undefined) lines.push("caused by:");
  }
  if (current !== undefined && current !== err) lines.push(String(current));
  return lines.join("\n");
}

/** Runs the CLI with the given arguments and streams; returns the exit code. */
export async function main(
  argv: string[],
  io: CliIo,
  environment: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const debug = environment.SERVICE_DEBUG === "1" || environment.SERVICE_DEBUG === "true";
  if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h" || argv[0] === "help") {
    (argv.length === 0 ? io.stderr : io.stdout).write(`${help()}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  if (argv[0] === "--version") {
    io.stdout.write("hub 1.0.0\n");
    return 0;
  }
  const found = findCommand(argv);
  if (!found) {
    io.stderr.write(`error: unknown command "${argv.slice(0, 2).join(" ")}"\n\n${help()}\n`);
    return 2;
  }
  const { command, rest } = found;
  try {
    let parsed: { values: OptionValues; positionals: string[] };
    try {
      parsed = parseArgs({
        args: rest,
        options: { ...command.options, json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
        allowPositionals: true,
        strict: true,
      }) as { values: OptionValues; positionals: string[] };
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
    if (parsed.values.help) {
      io.stdout.write(`usage: ${usageOf(command)}\n\n${command.summary}\n`);
      return 0;
    }
    const { min = 0, max = min } = command.positionals ?? { min: 0, max: 0 };
    const limit = command.positionals && command.positionals.max === undefined ? Infinity : max;
    if (parsed.positionals.length < min) throw new UsageError("Missing arguments.");
    if (parsed.positionals.length > limit)
      throw new UsageError(`Unexpected argument "${parsed.positionals[limit]}".`);
    const ctx = new CliContext(await loadConfig(environment), io, parsed.values.json === true);
    ctx.passwordFromStdin = parsed.values["password-stdin"] === true;
    const code = await command.run(ctx, parsed.values, parsed.positionals);
    return code ?? 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`error: ${err.message}\nusage: ${usageOf(command)}\n`);
      return 2;
    }
    io.stderr.write(`${describeError(err, debug)}\n`);
    return 1;
  }
}

/** Runs the `hub` command with this process's arguments and streams, setting its exit code. */
export async function runCli(): Promise<void> {
  // A closed pipe (hub models | head) is not an error.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(0);
  });
  const code = await main(process.argv.slice(2), {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
  });
  process.exitCode = code;
}

const invokedDirectly = (() => {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
})();

if (invokedDirectly) await runCli();
