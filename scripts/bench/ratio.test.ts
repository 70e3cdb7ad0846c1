// The report's ratio arithmetic against figures worked out by hand.
import { describe, expect, it } from "vitest";
import { ceilingRatios, startsMeetTarget } from "./ratio";

describe("ceilingRatios", () => {
  it("divides each rate by the mean of the same rate before and after, to three places", () => {
    const r = ceilingRatios(
      { claimsPerSecond: 14_475, completionsPerSecond: 14_305 },
      { claimsPerSecond: 56_984, completionsPerSecond: 55_000 },
      { claimsPerSecond: 38_768, completionsPerSecond: 37_000 },
      { claimsPerSecond: 15_669, completionsPerSecond: 15_000 },
    );
    // 14,475 / ((56,984 + 38,768) / 2 = 47,876) = 0.30234…; 14,305 / 46,000 = 0.31097…
    // 14,475 / 56,984 = 0.25402…; / 38,768 = 0.37337…; / 15,669 = 0.92379…
    expect(r).toEqual({ startsPerSecond: 0.302, completionsPerSecond: 0.311, ofRawBefore: 0.254, ofRawAfter: 0.373, ofRawPlain: 0.924, ceilingHeld: true });
  });

  it("never mixes starts with completions", () => {
    // Ceiling completions a tenth of its starts: the completions ratio follows completions alone.
    const r = ceilingRatios(
      { claimsPerSecond: 1_000, completionsPerSecond: 1_000 },
      { claimsPerSecond: 10_000, completionsPerSecond: 1_000 },
      { claimsPerSecond: 10_000, completionsPerSecond: 1_000 },
      null,
    );
    expect(r).toMatchObject({ startsPerSecond: 0.1, completionsPerSecond: 1, ofRawPlain: null, ceilingHeld: true });
  });

  it("says the ceiling did not hold when the spike outran it (the 8.475 of a ceiling whose finishes ran a quadratic plan)", () => {
    // Ceiling completions 1,500 and 1,876 a second (a mean of 1,688): 14,305 / 1,688 = 8.4745…
    const r = ceilingRatios(
      { claimsPerSecond: 14_475, completionsPerSecond: 14_305 },
      { claimsPerSecond: 56_984, completionsPerSecond: 1_500 },
      { claimsPerSecond: 38_768, completionsPerSecond: 1_876 },
      null,
    );
    expect(r.completionsPerSecond).toBe(8.475);
    expect(r.ceilingHeld).toBe(false);
    // A spike level with its ceiling, or a little over on a drifting machine, still holds it.
    const level = { claimsPerSecond: 50_000, completionsPerSecond: 50_000 };
    expect(ceilingRatios({ claimsPerSecond: 54_000, completionsPerSecond: 54_000 }, level, level, null).ceilingHeld).toBe(true);
    expect(ceilingRatios({ claimsPerSecond: 56_000, completionsPerSecond: 50_000 }, level, level, null).ceilingHeld).toBe(false);
  });
});

describe("startsMeetTarget", () => {
  it("holds a spike to 0.9× the raw ceiling, the issue's target, and says nothing without a ceiling", () => {
    // 0.9 × 50,000 = 45,000: met at 45,000 starts/s, not at 44,999 nor at 0.85× (42,500).
    expect(startsMeetTarget(45_000, 50_000)).toBe(true);
    expect(startsMeetTarget(44_999, 50_000)).toBe(false);
    expect(startsMeetTarget(42_500, 50_000)).toBe(false);
    expect(startsMeetTarget(45_000, null)).toBeNull();
  });
});
