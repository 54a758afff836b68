import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHub, type TestHub } from "../src/test-support/hub-process.js";

const CHECKOUT = fileURLToPath(new URL("../../../", import.meta.url));
const DRIVER = fileURLToPath(new URL("./hf_coverage.py", import.meta.url));
const REQUIREMENTS = "packages/server/test-python/requirements.txt";
const DEFECTS = fileURLToPath(new URL("./known-defects.json", import.meta.url));
const TABLE = path.join(CHECKOUT, "docs", "client-coverage.md");
const PYTHON = process.env.HUB_TEST_PYTHON ?? path.join(CHECKOUT, ".venv", "bin", "python");
const UPDATE = process.env.HUB_UPDATE_COVERAGE === "1";
/** The client version requirements.txt pins; the driver refuses to run another. */
const CLIENT_VERSION =
  /^huggingface_hub==(\S+)$/m.exec(readFileSync(path.join(CHECKOUT, REQUIREMENTS), "utf8"))?.[1] ??
  "unpinned";

const OUTCOMES = ["works", "refused", "not-applicable", "wrong", "crash", "unchecked"] as const;
type Outcome = (typeof OUTCOMES)[number];

interface Row {
  method: string;
  variant: string;
  area: string;
  outcome: Outcome;
  detail: string;
}

/** `upload_file` or `upload_file(create_pr=True)`: how a row is named in the table and in known-defects.json. */
const label = (row: { method: string; variant: string }) =>
  row.variant ? `${row.method}(${row.variant})` : row.method;

/** Known defects: calls that answer wrongly or crash the client today, each with why. */
function readDefects(): Record<string, string> {
  return JSON.parse(readFileSync(DEFECTS, "utf8")) as Record<string, string>;
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

/** The rows docs/client-coverage.md lists as working. */
function documentedWorking(table: string): string[] {
  return [...table.matchAll(/^\| `([^`]+)` \| [^|]* \| [^|]* \| works \|/gm)].map((match) => match[1] ?? "");
}

/** docs/client-coverage.md from a run: counts per area and outcome, the known defects, then every method. */
function renderTable(rows: Row[], defects: Record<string, string>): string {
  const areas = [...new Set(rows.map((row) => row.area))].sort();
  const count = (area: string, outcome: string) =>
    rows.filter((row) => row.area === area && row.outcome === outcome).length;
  const escape = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");
  // Ids the hub makes up (a collection's slug, a job's id) would change from run to run.
  const stable = (text: string) => text.replace(/[0-9a-f]{12,}/g, "{id}");
  const note = (row: Row) =>
    row.outcome === "wrong" || row.outcome === "crash"
      ? `known defect: ${defects[label(row)] ?? ""}`
      : row.outcome === "works"
        ? ""
        : stable(row.detail);
  const sorted = [...rows].sort(
    (a, b) =>
      a.area.localeCompare(b.area) || a.method.localeCompare(b.method) || a.variant.localeCompare(b.variant),
  );
  const defective = sorted.filter((row) => row.outcome === "wrong" || row.outcome === "crash");
  return [
    "# The Python client against this hub",
    "",
    `Every public method of \`huggingface_hub\` ${CLIENT_VERSION}'s \`HfApi\` (the newest release, pinned with its dependencies in`,
    "`packages/server/test-python/requirements.txt`), run against a fresh hub by",
    "`packages/server/test-python/hf-python-client.test.ts` with `HF_HUB_DISABLE_XET=1`. The driver,",
    "`hf_coverage.py`, finds the methods by introspection and runs each through a scenario: its setup, the call,",
    "and a check of the answer against what the hub holds. A few methods run again as variants, with a parameter",
    "the hub must honour or refuse by name (`create_pr`, a listing filter, `expand`, ...).",
    "",
    "`HF_HUB_DISABLE_XET=1` keeps this run on the Git LFS path, which older clients and `git` use, so every method",
    "is checked there. Uploads and downloads through Xet, the default of this client with `hf_xet` installed, are",
    "tested with this release and with 1.19.0 (the last before 1.20, which negotiates Xet in the LFS batch), with",
    "Xet on and off, by `packages/server/src/areas/repositories/xet/xet-clients.test.ts` (see [Xet](xet.md)).",
    "",
    "The client's methods change between releases: 2.x removed `upload_large_folder`, `duplicate_space` (now",
    '`duplicate_repo(repo_type="space")`, a variant below) and the Space storage calls, and added the rows the',
    "hub refuses with `route_not_found` until it serves them.",
    "",
    "- **works**: the call returned and its result was checked.",
    "- **refused**: the hub answered 4xx or 501 in its error schema (the note says which code, on which request)",
    "  and changed nothing.",
    "- **not-applicable**: the method cannot apply to a self-hosted hub; the note says why.",
    "- **wrong**: the call returned but its check failed, or a refused call changed something anyway.",
    "- **crash**: the client failed on the hub's answer (a 5xx, a missing field, a malformed body).",
    "- **unchecked**: the hub answered a method no scenario checks yet.",
    "",
    "The test fails on any `unchecked` row, on any `wrong` or `crash` row not listed in",
    "`packages/server/test-python/known-defects.json`, when a listed defect is gone, when a method this page lists",
    "as working stops working, and when a run differs from this page.",
    "",
    "## Regenerating",
    "",
    "```sh",
    ".ci/run   # or: python3 -m venv .venv && .venv/bin/pip install -r packages/server/test-python/requirements.txt",
    "npx tsc -b packages/api packages/server packages/client",
    "HUB_UPDATE_COVERAGE=1 npx vitest run packages/server/test-python/",
    "```",
    "",
    "`HUB_UPDATE_COVERAGE=1` rewrites this page and drops fixed defects from `known-defects.json`; a new defect is",
    "added to that file by hand, with why. `HUB_TEST_PYTHON` points the test at another interpreter.",
    "",
    "## Counts",
    "",
    `| Area | ${OUTCOMES.join(" | ")} |`,
    `| --- |${OUTCOMES.map(() => " ---: |").join("")}`,
    ...areas.map((area) => `| ${area} | ${OUTCOMES.map((o) => count(area, o)).join(" | ")} |`),
    `| **all** | ${OUTCOMES.map((o) => rows.filter((row) => row.outcome === o).length).join(" | ")} |`,
    "",
    "## Known defects",
    "",
    ...(defective.length === 0
      ? ["None."]
      : defective.map((row) => `- \`${label(row)}\` (${row.outcome}): ${escape(defects[label(row)] ?? "")}`)),
    "",
    "## Methods",
    "",
    "| Method | Variant | Area | Outcome | Note |",
    "| --- | --- | --- | --- | --- |",
    ...sorted.map(
      (row) =>
        `| \`${label(row)}\` | ${row.variant ? `\`${row.variant}\`` : ""} | ${row.area} | ${row.outcome} | ${escape(note(row))} |`,
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
        `No Python with the pinned huggingface_hub at ${PYTHON}: run .ci/run, or ` +
          `python3 -m venv .venv && .venv/bin/pip install -r ${REQUIREMENTS} (or set HUB_TEST_PYTHON)`,
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
      HF_HUB_DISABLE_XET: "1",
      HF_HUB_DISABLE_TELEMETRY: "1",
      HF_HUB_DISABLE_PROGRESS_BARS: "1",
      HF_HUB_DISABLE_IMPLICIT_TOKEN: "1",
      HUB_COVERAGE_ALICE: alice,
      HUB_COVERAGE_BOB: bob,
      HUB_COVERAGE_ORG: "acme",
      HUB_COVERAGE_CLIENT_VERSION: CLIENT_VERSION,
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

  it("runs every public method once, and its variants", () => {
    const methods = rows.filter((row) => row.variant === "");
    expect(methods.length).toBeGreaterThan(150);
    expect(new Set(methods.map((row) => row.method)).size).toBe(methods.length);
    expect(new Set(rows.map(label)).size).toBe(rows.length);
    for (const row of rows) expect(methods.map((m) => m.method)).toContain(row.method);
  });

  it("checks every answer it gets", () => {
    expect(
      rows.filter((row) => row.outcome === "unchecked").map((row) => `${label(row)}: ${row.detail}`),
    ).toEqual([]);
  });

  it("answers wrongly or crashes the client only where known-defects.json says so", () => {
    const defects = readDefects();
    const found = rows.filter((row) => row.outcome === "wrong" || row.outcome === "crash");
    const unknown = found.filter((row) => !(label(row) in defects));
    expect(
      unknown.map((row) => `${label(row)} (${row.outcome}): ${row.detail}`),
      "a new wrong answer or client crash: fix it, or list it in known-defects.json with why",
    ).toEqual([]);
    const fixed = Object.keys(defects).filter((name) => !found.some((row) => label(row) === name));
    if (UPDATE && fixed.length > 0) {
      const kept = Object.fromEntries(Object.entries(defects).filter(([name]) => !fixed.includes(name)));
      writeFileSync(DEFECTS, `${JSON.stringify(kept, null, 2)}\n`);
    } else {
      expect(fixed, "fixed: drop these from known-defects.json (HUB_UPDATE_COVERAGE=1 does)").toEqual([]);
    }
  });

  it("keeps working every method docs/client-coverage.md lists as working", () => {
    const table = readFileSync(TABLE, "utf8");
    const documented = documentedWorking(table);
    expect(String(documented.length), "the page's rows and its count of works agree").toBe(
      /^\| \*\*all\*\* \| (\d+) \|/m.exec(table)?.[1],
    );
    const working = new Set(rows.filter((row) => row.outcome === "works").map(label));
    const broken = documented.filter((name) => !working.has(name));
    expect(
      broken.map((name) => `${name}: ${rows.find((row) => label(row) === name)?.detail ?? "not run"}`),
    ).toEqual([]);
  });

  it("is what docs/client-coverage.md shows", () => {
    const table = renderTable(rows, readDefects());
    if (UPDATE) writeFileSync(TABLE, table);
    expect(readFileSync(TABLE, "utf8")).toBe(table);
  });
});
