import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHub, type TestHub } from "../hub-process.js";

const CHECKOUT = fileURLToPath(new URL("../../../../../", import.meta.url));
const DRIVER = fileURLToPath(new URL("./hf_coverage.py", import.meta.url));
const TABLE = path.join(CHECKOUT, "docs", "client-coverage.md");
const PYTHON = process.env.HUB_TEST_PYTHON ?? path.join(CHECKOUT, ".venv", "bin", "python");

interface Row {
  method: string;
  area: string;
  outcome: "works" | "refused" | "wrong" | "crash" | "unchecked" | "not-applicable";
  detail: string;
}

function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** docs/client-coverage.md from a run: counts per area and outcome, then every method. */
function renderTable(rows: Row[]): string {
  const outcomes = ["works", "refused", "not-applicable", "wrong", "crash", "unchecked"] as const;
  const areas = [...new Set(rows.map((row) => row.area))].sort();
  const count = (area: string, outcome: string) =>
    rows.filter((row) => row.area === area && row.outcome === outcome).length;
  const escape = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");
  return [
    "# The Python client against this hub",
    "",
    "Every public method of `huggingface_hub` 1.28.0's `HfApi` (pinned in",
    "`packages/server/src/test-support/python/requirements.txt`), run against a fresh hub by",
    "`hf-python-client.test.ts` with `HF_HUB_DISABLE_XET=1`. **works**: the call returned and its result was",
    "checked; **refused**: the hub answered 4xx in its error schema and did nothing; **not-applicable**: the",
    "method drives a cloud vendor's or huggingface.co's own service. A silent wrong answer or a client crash",
    "fails the test.",
    "",
    "This page is generated: `HUB_UPDATE_COVERAGE=1 npx vitest run packages/server/src/test-support/python/`",
    "rewrites it, and the test fails when a run differs from it.",
    "",
    `| Area | ${outcomes.join(" | ")} |`,
    `| --- |${outcomes.map(() => " ---: |").join("")}`,
    ...areas.map((area) => `| ${area} | ${outcomes.map((o) => count(area, o)).join(" | ")} |`),
    `| **all** | ${outcomes.map((o) => rows.filter((row) => row.outcome === o).length).join(" | ")} |`,
    "",
    "| Method | Area | Outcome | Detail |",
    "| --- | --- | --- | --- |",
    ...[...rows]
      .sort((a, b) => a.area.localeCompare(b.area) || a.method.localeCompare(b.method))
      .map(
        (row) =>
          `| \`${row.method}\` | ${row.area} | ${row.outcome} | ${escape(row.outcome === "refused" || row.outcome === "not-applicable" ? row.detail : "")} |`,
      ),
    "",
  ].join("\n");
}

describe("every method of the official Python client", () => {
  let hub: TestHub;
  let home: string;
  let rows: Row[] = [];

  beforeAll(async () => {
    if (!existsSync(PYTHON)) {
      throw new Error(
        `No Python with huggingface_hub at ${PYTHON}: run .ci/run, or python3 -m venv .venv && .venv/bin/pip install -r packages/server/src/test-support/python/requirements.txt`,
      );
    }
    hub = await startHub();
    home = mkdtempSync(path.join(os.tmpdir(), "hf-home-"));
    await hub.createUser("alice");
    await hub.createUser("bob");
    expect((await hub.cli(["org", "create", "acme", "--owner", "alice"])).code).toBe(0);
    const alice = await hub.createToken("alice");
    const bob = await hub.createToken("bob");
    const result = await run(PYTHON, [DRIVER], {
      PATH: process.env.PATH,
      HOME: home,
      HF_HOME: path.join(home, "hf"),
      HF_ENDPOINT: hub.url,
      HF_TOKEN: alice,
      HF_HUB_DISABLE_XET: "1",
      HF_HUB_DISABLE_TELEMETRY: "1",
      HF_HUB_DISABLE_PROGRESS_BARS: "1",
      HUB_COVERAGE_ALICE: alice,
      HUB_COVERAGE_BOB: bob,
      HUB_COVERAGE_ORG: "acme",
    });
    expect(result.code, result.stderr.slice(-3000)).toBe(0);
    rows = result.stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Row);
  }, 300_000);
  afterAll(async () => {
    await hub?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it("runs every public method", () => {
    expect(rows.length).toBeGreaterThan(150);
    expect(new Set(rows.map((row) => row.method)).size).toBe(rows.length);
  });

  it("never answers a method wrongly or makes the client crash", () => {
    const bad = rows.filter((row) => ["wrong", "crash", "unchecked"].includes(row.outcome));
    expect(bad.map((row) => `${row.method} (${row.outcome}): ${row.detail}`)).toEqual([]);
  });

  it("is what docs/client-coverage.md shows", () => {
    const table = renderTable(rows);
    if (process.env.HUB_UPDATE_COVERAGE === "1") writeFileSync(TABLE, table);
    expect(readFileSync(TABLE, "utf8")).toBe(table);
  });
});
