import type { ParseArgsConfig } from "node:util";
import type { CliContext } from "./context.js";

export type OptionValues = Record<string, string | boolean | undefined>;

/** One `hub` command: its words (`token list`), usage, options, and a thin `run` over the SDK. */
export interface Command {
  name: string;
  summary: string;
  /** Arguments after the command words, as shown in the usage line. */
  args?: string;
  options?: NonNullable<ParseArgsConfig["options"]>;
  /** How many positional arguments it takes. */
  positionals?: { min: number; max?: number };
  /** Runs the command; resolves with its exit code (0 when nothing is returned). Throws on errors. */
  run(ctx: CliContext, values: OptionValues, positionals: string[]): Promise<number | void>;
}

/** `hub <name> <args>`, the usage line of a command. */
export function usageOf(command: Command): string {
  const options = Object.entries(command.options ?? {})
    .map(([name, option]) =>
      option.type === "boolean" ? `[--${name}]` : `[--${name} ${name.toUpperCase().replace(/-/g, "_")}]`,
    )
    .join(" ");
  return ["hub", command.name, command.args ?? "", options, "[--json]"].filter(Boolean).join(" ");
}

/** Reads a string option. */
export function stringOption(values: OptionValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}
