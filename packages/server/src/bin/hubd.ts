#!/usr/bin/env node
import { runAdmin } from "./admin.js";

/** The `hubd` program: one command (bin/admin.ts) on this process's arguments, input and output. */
const code = await runAdmin(process.argv.slice(2), {
  env: process.env,
  stdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  },
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
// A failed command exits at once (a half-open store must not hold it); `serve` runs on until a signal.
if (code !== 0) process.exit(code);
