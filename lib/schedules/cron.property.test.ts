import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { Cron } from "croner";
import { nextCronSlot } from "./cron";

/*
 * Brute-force oracle for the DST rule, deliberately naive and independent of cron.ts and
 * zoned-time.ts: walk real time minute by minute, read each minute's local wall time from
 * Intl, and decide whether it fires. croner is used only to ask "does this wall time match?".
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const HORIZON = 3 * DAY;
const LEAD_IN = 6 * HOUR; // so "seen before" is right when `after` falls inside a repeated hour

const formatters = new Map<string, Intl.DateTimeFormat>();
const wallMemo = new Map<string, Map<number, number>>();

/** Local wall time of instant t in tz, as milliseconds of a UTC date with the same fields. */
function wallTime(tz: string, t: number): number {
  let memo = wallMemo.get(tz);
  if (!memo || memo.size > 1_000_000) wallMemo.set(tz, (memo = new Map()));
  const hit = memo.get(t);
  if (hit !== undefined) return hit;
  let fmt = formatters.get(tz);
  if (!fmt) {
    fmt = new Intl.DateTimeFormat("en-GB", {
      timeZone: tz,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
    });
    formatters.set(tz, fmt);
  }
  // "dd/mm/yyyy, hh:mm" (format() is several times faster than formatToParts())
  const m = /^(\d\d)\/(\d\d)\/(\d{4}), (\d\d):(\d\d)$/.exec(fmt.format(t));
  if (!m) throw new Error(`unexpected Intl output for ${tz}`);
  const wall = Date.UTC(+m[3], +m[2] - 1, +m[1], +m[4], +m[5]);
  memo.set(t, wall);
  return wall;
}

const matchers = new Map<string, { cron: Cron; memo: Map<number, boolean> }>();
function matches(expr: string, wall: number): boolean {
  let m = matchers.get(expr);
  if (!m) {
    m = { cron: new Cron(expr, { utcOffset: 0, legacyMode: true }), memo: new Map() };
    matchers.set(expr, m);
  }
  let hit = m.memo.get(wall);
  if (hit === undefined) {
    hit = m.cron.match(new Date(wall));
    m.memo.set(wall, hit);
  }
  return hit;
}

/** First firing strictly after `after`, or undefined if none within the horizon. */
function oracle(expr: string, tz: string, after: number): number | undefined {
  const hourField = expr.split(" ")[1];
  const wallClock = hourField.includes("*") || hourField.includes("/");
  const seen = new Set<number>();
  let prevWall: number | undefined;
  const start = Math.floor((after - LEAD_IN) / MINUTE) * MINUTE;
  for (let t = start; t <= after + HORIZON; t += MINUTE) {
    const wall = wallTime(tz, t);
    let fire: boolean;
    if (wallClock) {
      fire = matches(expr, wall);
    } else {
      fire = !seen.has(wall) && matches(expr, wall);
      // Clock jumped forward: skipped wall minutes that match fire now.
      if (prevWall !== undefined) {
        for (let s = prevWall + MINUTE; s < wall && !fire; s += MINUTE) fire = matches(expr, s);
      }
    }
    seen.add(wall);
    prevWall = wall;
    if (fire && t > after) return t;
  }
  return undefined;
}

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
  const expected = oracle(expr, tz, after);
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
