import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ERROR_CODES, renderErrorCatalog } from "./error-codes.js";

const SRC = fileURLToPath(new URL(".", import.meta.url));
const DOCS = fileURLToPath(new URL("../../../docs/errors.md", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "test-support" ? [] : sources(file);
    return file.endsWith(".ts") && !file.endsWith(".test.ts") && !file.endsWith("error-codes.ts")
      ? [file]
      : [];
  });
}

describe("the error-code catalog", () => {
  it("names codes in snake_case with at least one status and a summary", () => {
    for (const [code, entry] of Object.entries(ERROR_CODES)) {
      expect(code).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
      expect(entry.statuses.length, code).toBeGreaterThan(0);
      for (const status of entry.statuses) expect(status >= 300 && status < 600, code).toBe(true);
      expect(entry.summary.length, code).toBeGreaterThan(10);
    }
  });

  it("holds no code the hub never raises", () => {
    const text = sources(SRC)
      .map((file) => readFileSync(file, "utf8"))
      .join("\n");
    const apiText = sources(fileURLToPath(new URL("../../api/src/", import.meta.url)))
      .map((file) => readFileSync(file, "utf8"))
      .join("\n");
    const unused = Object.keys(ERROR_CODES).filter(
      (code) => !text.includes(`"${code}"`) && !apiText.includes(`"${code}"`) && !text.includes(`${code}:`),
    );
    expect(unused).toEqual([]);
  });

  it("is what docs/errors.md shows", () => {
    const rendered = `${renderErrorCatalog().trimEnd()}\n`;
    if (process.env.HUB_UPDATE_ERROR_DOCS === "1") writeFileSync(DOCS, rendered);
    expect(readFileSync(DOCS, "utf8")).toBe(rendered);
  });
});
