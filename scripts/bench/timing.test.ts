// The measuring scripts' summary of samples, against figures worked out by hand.
import { describe, expect, it } from "vitest";
import { medianMax, timeRounds } from "./timing";

describe("medianMax", () => {
  it("takes the middle sample (the upper middle of an even count) and the largest, to 0.1 ms", () => {
    expect(medianMax([3, 1, 2])).toEqual({ medianMs: 2, maxMs: 3 });
    expect(medianMax([4, 1, 3, 2])).toEqual({ medianMs: 3, maxMs: 4 });
    expect(medianMax([38.46, 66.34, 12.04])).toEqual({ medianMs: 38.5, maxMs: 66.3 });
    expect(() => medianMax([])).toThrow();
  });
});

describe("timeRounds", () => {
  it("calls once per round, in order, and gives one sample each", async () => {
    const seen: number[] = [];
    const ms = await timeRounds(4, async (i) => void seen.push(i));
    expect(seen).toEqual([0, 1, 2, 3]);
    expect(ms).toHaveLength(4);
    expect(ms.every((x) => x >= 0)).toBe(true);
  });
});
