import { describe, it, expect } from "vitest";
import { seededRandom } from "../testing/random";
import { backoffCeilingSeconds, backoffSeconds, type RetryPolicy } from "./backoff";

const policy: RetryPolicy = { maxAttempts: 7, baseSeconds: 30, capSeconds: 900 };

describe("backoffCeilingSeconds", () => {
  it("doubles from the base up to the cap (the worked example)", () => {
    const ceilings = [1, 2, 3, 4, 5, 6].map((n) => backoffCeilingSeconds(policy, n));
    expect(ceilings).toEqual([30, 60, 120, 240, 480, 900]);
    expect(ceilings.reduce((a, b) => a + b, 0)).toBe(1830);
    expect(backoffCeilingSeconds(policy, 7)).toBe(900);
  });
  it("does not overflow for large attempt numbers", () => {
    expect(backoffCeilingSeconds(policy, 64)).toBe(900);
    expect(backoffCeilingSeconds(policy, 1000)).toBe(900);
    expect(backoffCeilingSeconds(policy, 1_000_000)).toBe(900);
  });
  it("rejects attempts below 1", () => {
    expect(() => backoffCeilingSeconds(policy, 0)).toThrow(RangeError);
    expect(() => backoffCeilingSeconds(policy, 1.5)).toThrow(RangeError);
  });
});

describe("backoffSeconds", () => {
  it("draws uniformly inside [0, ceiling] with a mean near half the ceiling", () => {
    const random = seededRandom(42).next;
    for (let attempt = 1; attempt <= 8; attempt++) {
      const ceiling = backoffCeilingSeconds(policy, attempt);
      let sum = 0;
      let min = Infinity;
      let max = -Infinity;
      for (let i = 0; i < 10_000; i++) {
        const d = backoffSeconds(policy, attempt, random);
        sum += d;
        min = Math.min(min, d);
        max = Math.max(max, d);
      }
      expect(min).toBeGreaterThanOrEqual(0);
      expect(max).toBeLessThanOrEqual(ceiling);
      expect(max - min).toBeGreaterThan(ceiling * 0.99); // actually uses the whole range
      const mean = sum / 10_000;
      expect(Math.abs(mean - ceiling / 2)).toBeLessThan(ceiling * 0.02);
    }
  });
  it("uses the edges of the random source", () => {
    expect(backoffSeconds(policy, 3, () => 0)).toBe(0);
    expect(backoffSeconds(policy, 3, () => 0.999999999)).toBe(120);
    expect(backoffSeconds(policy, 1000, () => 0.5)).toBe(450);
    const d = backoffSeconds(policy, 2); // Math.random by default
    expect(d >= 0 && d <= 60).toBe(true);
  });
});
