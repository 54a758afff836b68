import { describe, expect, it } from "vitest";
import { timeOrderedUuid } from "./time-ordered-id.js";

describe("time-ordered UUIDs", () => {
  it("are version 7 UUIDs whose first 48 bits are the time in milliseconds", () => {
    const at = Date.UTC(2026, 10, 27, 3, 4, 5, 678);
    const id = timeOrderedUuid(at);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(id.replace(/-/g, "").slice(0, 12), 16)).toBe(at);
  });

  it("sort in the order of their times, and differ within one millisecond", () => {
    const start = Date.now();
    const ids = Array.from({ length: 3000 }, (_, i) => timeOrderedUuid(start + Math.floor(i / 10)));
    const byTime = ids.filter((_, i) => i % 10 === 0);
    expect([...byTime].sort()).toEqual(byTime);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
