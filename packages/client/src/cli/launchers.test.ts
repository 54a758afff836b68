import { execFile } from "node:child_process";
import { lstatSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const checkout = fileURLToPath(new URL("../../../../", import.meta.url));
const binDir = `${checkout}node_modules/.bin`;

/** `npx hub` and `npx hubd` run what npm linked at install time, before anything was built. */
describe("the hub and hubd commands in the checkout", () => {
  it.each([
    ["hub", /usage: hub <command>/],
    ["hubd", /Usage: hubd <command>/],
  ])("npm links %s to a committed launcher that runs the built command", async (name, usage) => {
    expect(lstatSync(`${binDir}/${name}`).isSymbolicLink()).toBe(true);
    const { stdout } = await run(`${binDir}/${name}`, ["--help"], { cwd: checkout });
    expect(stdout).toMatch(usage);
  });

  it("npx finds both, as a user types them", async () => {
    const hub = await run("npx", ["--no-install", "hub", "--help"], { cwd: checkout });
    expect(hub.stdout).toMatch(/usage: hub <command>/);
    const hubd = await run("npx", ["--no-install", "hubd", "--help"], { cwd: checkout });
    expect(hubd.stdout).toMatch(/Usage: hubd <command>/);
  });
});
