import { describe, it, expect } from "vitest";
import { jitterOffsetMs } from "./jitter";

const base = Date.parse("2026-01-01T00:00:00Z");
const hourly = (i: number) => new Date(base + i * 3_600_000);

describe("jitterOffsetMs", () => {
  it("is deterministic", () => {
    const slot = new Date("2026-03-08T07:00:00Z");
    expect(jitterOffsetMs("sched-1", slot, 60)).toBe(jitterOffsetMs("sched-1", new Date(slot.getTime()), 60));
    expect(jitterOffsetMs(42, slot, 60)).toBe(jitterOffsetMs(42n, slot, 60));
    expect(jitterOffsetMs(42, slot, 60)).toBe(jitterOffsetMs("42", slot, 60));
  });

  it("is 0 without a window", () => {
    expect(jitterOffsetMs("a", hourly(0), 0)).toBe(0);
    expect(jitterOffsetMs("a", hourly(0), 0.0004)).toBe(0);
    expect(() => jitterOffsetMs("a", hourly(0), -1)).toThrow(RangeError);
  });

  it("stays inside [0, window) and is a whole number of milliseconds", () => {
    for (const seconds of [0.001, 1, 30, 3600]) {
      for (let i = 0; i < 2000; i++) {
        const j = jitterOffsetMs(`s${i % 7}`, hourly(i), seconds);
        expect(Number.isInteger(j)).toBe(true);
        expect(j).toBeGreaterThanOrEqual(0);
        expect(j).toBeLessThan(seconds * 1000);
      }
    }
  });

  it("spreads one schedule's slots roughly uniformly", () => {
    const buckets = new Array(10).fill(0);
    for (let i = 0; i < 10_000; i++) buckets[Math.floor(jitterOffsetMs("sched-1", hourly(i), 60) / 6000)]++;
    for (const n of buckets) expect(Math.abs(n - 1000)).toBeLessThan(200);
  });

  it("spreads many schedules on the same slot roughly uniformly", () => {
    const buckets = new Array(10).fill(0);
    for (let id = 1; id <= 10_000; id++) buckets[Math.floor(jitterOffsetMs(id, hourly(0), 60) / 6000)]++;
    for (const n of buckets) expect(Math.abs(n - 1000)).toBeLessThan(200);
  });

  it("differs between schedules and slots", () => {
    const seen = new Set<number>();
    for (let i = 0; i < 100; i++) seen.add(jitterOffsetMs("x", hourly(i), 3600));
    expect(seen.size).toBeGreaterThan(95);
  });
});
