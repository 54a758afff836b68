#!/usr/bin/env node
// The `hubd` command: a committed launcher, so npm links it at install time even before
// the TypeScript is built (npm links a workspace's bin only if its file exists then).
import { existsSync } from "node:fs";

const built = new URL("../dist/bin/hubd.js", import.meta.url);
if (!existsSync(built)) {
  process.stderr.write("hubd: the server is not built yet; run `npm run build` in the checkout first.\n");
  process.exit(1);
}
await import(built.href);
