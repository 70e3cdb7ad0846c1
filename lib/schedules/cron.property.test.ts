import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { nextCronSlotByBruteForce } from "../testing/cron-oracle";
import { nextCronSlot } from "./cron";

// The oracle (lib/testing/cron-oracle.ts) walks real time minute by minute and knows nothing of
// cron.ts or zoned-time.ts.
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const HORIZON = 3 * DAY;

const expression = fc
  .tuple(
    fc.constantFrom("0", "15", "30", "45", "*/5", "*/15", "0-10", "*"),
    fc.constantFrom("*", "*/2", "*/3", "0", "1", "2", "3", "23", "1-3", "0,12"),
    // Mostly unrestricted days, so most cases fire within the horizon.
    fc.constantFrom("*", "*", "*", "*", "1", "15"),
    fc.constant("*"),
    fc.constantFrom("*", "*", "*", "1-5", "0"),
  )
  .map((parts) => parts.join(" "));

// 2026 transitions (standard <-> daylight).
const TRANSITIONS: Record<string, string[]> = {
  "America/New_York": ["2026-03-08T07:00:00Z", "2026-11-01T06:00:00Z"],
  "Europe/London": ["2026-03-29T01:00:00Z", "2026-10-25T01:00:00Z"],
  "Australia/Lord_Howe": ["2026-04-04T15:00:00Z", "2026-10-03T15:30:00Z"], // 30-minute shift
  "America/Santiago": ["2026-04-05T03:00:00Z", "2026-09-06T04:00:00Z"], // at local midnight
};

/** Instants near a transition: any millisecond, whole minutes, or right at the edge. */
function nearTransitions(tz: string): fc.Arbitrary<number> {
  return fc.constantFrom(...TRANSITIONS[tz].map(Date.parse)).chain((tr) =>
    fc.oneof(
      fc.integer({ min: tr - 3 * DAY, max: tr + 3 * DAY }),
      fc.integer({ min: -72 * 60, max: 72 * 60 }).map((m) => tr + m * MINUTE),
      fc.integer({ min: -3, max: 3 }).map((m) => tr + m * MINUTE - 1),
    ),
  );
}

const YEAR_START = Date.parse("2026-01-01T00:00:00Z");
const acrossYear = fc.oneof(
  fc.integer({ min: YEAR_START, max: YEAR_START + 365 * DAY }),
  fc.integer({ min: 0, max: 365 * 1440 }).map((m) => YEAR_START + m * MINUTE),
);

function check(expr: string, tz: string, after: number, stats: { compared: number }): void {
  const expected = nextCronSlotByBruteForce(expr, tz, after, HORIZON);
  if (expected === undefined) return; // nothing within the horizon: nothing to compare
  stats.compared++;
  const actual = nextCronSlot({ cron: expr, timezone: tz }, new Date(after));
  expect(
    actual?.toISOString(),
    `${JSON.stringify(expr)} in ${tz} after ${new Date(after).toISOString()}`,
  ).toBe(new Date(expected).toISOString());
}

describe("nextCronSlot agrees with a brute-force oracle", () => {
  for (const tz of Object.keys(TRANSITIONS)) {
    it(`around the 2026 transitions of ${tz}`, () => {
      const stats = { compared: 0 };
      fc.assert(
        fc.property(expression, nearTransitions(tz), (expr, after) => check(expr, tz, after, stats)),
        { numRuns: 1000 },
      );
      expect(stats.compared).toBeGreaterThan(500);
    }, 60_000);
  }

  it("across 2026 in every zone and UTC", () => {
    const stats = { compared: 0 };
    const zone = fc.constantFrom("UTC", ...Object.keys(TRANSITIONS));
    fc.assert(
      fc.property(expression, zone, acrossYear, (expr, tz, after) => check(expr, tz, after, stats)),
      { numRuns: 600 },
    );
    expect(stats.compared).toBeGreaterThan(300);
  }, 60_000);
});
