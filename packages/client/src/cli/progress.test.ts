import { describe, expect, it } from "vitest";
import { ProgressBars, formatBytes } from "./progress.js";

function target(isTTY: boolean) {
  const written: string[] = [];
  return { isTTY, columns: 120, written, write: (text: string) => written.push(text) > 0 };
}

describe("progress bars", () => {
  it("draw nothing off a terminal, or with --json", () => {
    for (const [tty, enabled] of [
      [false, true],
      [true, false],
    ] as const) {
      const out = target(tty);
      let now = 0;
      const bars = new ProgressBars(out, { enabled, now: () => (now += 5000) });
      bars.update({ phase: "upload", path: "a.bin", bytes: 10, total: 100 });
      bars.done();
      expect(out.written).toEqual([]);
    }
  });

  it("stay quiet for the first second, then redraw one line at most every 100 ms", () => {
    const out = target(true);
    let now = Date.now();
    const bars = new ProgressBars(out, { enabled: true, now: () => now });
    bars.update({ phase: "download", path: "w.bin", bytes: 1, total: 4 * 1024 * 1024 });
    expect(out.written).toEqual([]);
    now += 1500;
    bars.update({ phase: "download", path: "w.bin", bytes: 2 * 1024 * 1024, total: 4 * 1024 * 1024 });
    now += 50;
    bars.update({ phase: "download", path: "w.bin", bytes: 3 * 1024 * 1024, total: 4 * 1024 * 1024 });
    expect(out.written).toHaveLength(1);
    expect(out.written[0]).toMatch(/^\rdownloading w\.bin \[#{12} {12}\] {2}50% 2\.0 MiB\/4\.0 MiB/);
    now += 50;
    bars.update({ phase: "download", path: "w.bin", bytes: 4 * 1024 * 1024, total: 4 * 1024 * 1024 });
    expect(out.written.at(-1)).toMatch(/100% 4\.0 MiB\/4\.0 MiB/);
    bars.done();
    expect(out.written.at(-1)).toBe("\n");
  });

  it("formats sizes in binary units", () => {
    expect([0, 1023, 1536, 5 * 1024 ** 3].map(formatBytes)).toEqual(["0 B", "1023 B", "1.5 KiB", "5.0 GiB"]);
  });
});
