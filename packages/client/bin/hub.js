#!/usr/bin/env node
// The `hub` command: a committed launcher, so npm links it at install time even before
// the TypeScript is built (npm links a workspace's bin only if its file exists then).
import { existsSync } from "node:fs";

const built = new URL("../dist/cli/hub.js", import.meta.url);
if (!existsSync(built)) {
  process.stderr.write("hub: the client is not built yet; run `npm run build` in the checkout first.\n");
  process.exit(1);
}
const { runCli } = await import(built.href);
await runCli();
