import type { ClientConfig } from "../config.js";
import type { Connection } from "../connection.js";
import { AuthenticationError, HubError } from "../errors.js";
import { reauthenticate } from "../tokens.js";
import { ProgressBars } from "./progress.js";

/** The streams and environment a command runs with. */
export interface CliIo {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}

/** What every command receives: the effective configuration, the output streams and shared helpers. */
export class CliContext {
  private stdinLines: AsyncIterator<string> | undefined;
  /** `--password-stdin`: read the password from stdin even on a terminal. */
  passwordFromStdin = false;

  constructor(
    readonly config: ClientConfig,
    readonly io: CliIo,
    /** `--json`: machine-readable output on stdout and nothing decorative anywhere. */
    readonly json: boolean,
  ) {}

  /** The SDK connection for the configured hub and token. */
  connection(options: { requireToken?: boolean } = {}): Connection {
    if (options.requireToken !== false && !this.config.token) {
      throw new HubError(401, "You are not logged in: run `hub login`, or set SERVICE_TOKEN.", {
        code: "not_logged_in",
      });
    }
    return {
      endpoint: this.config.endpoint,
      ...(this.config.token ? { token: this.config.token } : {}),
      userAgent: "hub-cli/1.0",
    };
  }

  /** Writes a line (or lines) to stdout. */
  out(text: string): void {
    this.io.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
  }

  /** Writes a status line to stderr, unless the output is JSON. */
  note(text: string): void {
    if (!this.json) this.io.stderr.write(`${text}\n`);
  }

  /** Prints a value as JSON on stdout. */
  printJson(value: unknown): void {
    this.io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** Progress bars on stderr, only on a terminal, after a second, and never with --json. */
  progress(): ProgressBars {
    return new ProgressBars(this.io.stderr, { enabled: !this.json });
  }

  /**
   * Reads a line from stdin: a password typed on a terminal (not echoed), or the
   * next line of piped input, so scripts can pass it with `--password-stdin` or a pipe.
   */
  async readSecret(prompt: string): Promise<string> {
    const { stdin, stderr } = this.io;
    if (!stdin.isTTY || this.passwordFromStdin) {
      const line = await this.nextStdinLine();
      if (line === undefined) {
        throw new HubError(0, `${prompt.replace(/:\s*$/, "")} is needed, but standard input is empty.`, {
          code: "input_needed",
        });
      }
      return line;
    }
    stderr.write(prompt);
    return new Promise((resolve, reject) => {
      let typed = "";
      stdin.setRawMode(true);
      stdin.resume();
      stdin.setEncoding("utf8");
      const finish = (error?: Error) => {
        stdin.setRawMode(false);
        stdin.pause();
        stdin.off("data", onData);
        stderr.write("\n");
        if (error) reject(error);
        else resolve(typed);
      };
      const onData = (chunk: string) => {
        for (const char of chunk) {
          if (char === "\r" || char === "\n" || char === "\u0004") return finish();
          if (char === "\u0003") return finish(new HubError(0, "Cancelled.", { code: "cancelled" }));
          if (char === "\u007f" || char === "\b") typed = typed.slice(0, -1);
          else typed += char;
        }
      };
      stdin.on("data", onData);
    });
  }

  /** The next line of piped stdin, or undefined at its end. */
  async nextStdinLine(): Promise<string | undefined> {
    this.stdinLines ??= readLines(this.io.stdin);
    const { done, value } = await this.stdinLines.next();
    return done ? undefined : value;
  }

  /**
   * Runs an operation that may need recent reauthentication (listing and
   * creating tokens): when the hub asks for it, reads the password (and the
   * two-factor code, when the account has it on), proves them with
   * `POST /api/auth/reauthenticate`, and runs the operation again.
   */
  async withReauthentication<T>(connection: Connection, operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (err) {
      if (!(err instanceof AuthenticationError) || err.code !== "reauthentication_required") throw err;
      this.note("The hub needs your password again for this.");
      const password = await this.readSecret("Password: ");
      try {
        await reauthenticate({ connection, password });
      } catch (refused) {
        if (!(refused instanceof AuthenticationError) || refused.code !== "mfa_required") throw refused;
        const otp = await this.readSecret("Two-factor code (or a recovery code): ");
        await reauthenticate({ connection, password, otp });
      }
      return operation();
    }
  }
}

async function* readLines(stream: NodeJS.ReadableStream): AsyncGenerator<string> {
  let buffered = "";
  for await (const chunk of stream as AsyncIterable<Buffer | string>) {
    buffered += typeof chunk === "string" ? chunk : chunk.toString("utf8");
    let newline: number;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      yield buffered.slice(0, newline).replace(/\r$/, "");
      buffered = buffered.slice(newline + 1);
    }
  }
  if (buffered.length > 0) yield buffered;
}
