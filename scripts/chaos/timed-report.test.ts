// When a slot came due in real time across the suite's clock steps, worked by hand.
import { describe, expect, it } from "vitest";
import { nothingDueMs } from "./silent";
import { firstReachedAt } from "./timed-report";

const T = Date.parse("2026-12-04T22:16:45.709Z");
// +20 s at T (the database read T before, T + 20 s after), −20 s ten seconds later (it read
// T + 30 s before, T + 10 s after): from then on the two clocks agree again.
const steps = [
  { at: T, stepMs: 20_000, dbBefore: T, dbAfter: T + 20_000 },
  { at: T + 10_000, stepMs: -20_000, dbBefore: T + 30_000, dbAfter: T + 10_000 },
];

describe("firstReachedAt: the real instant the database clock first read a time", () => {
  it.each([
    { name: "no step: the same instant", steps: [], db: T + 5_000, real: T + 5_000 },
    { name: "before the forward step", steps, db: T - 709, real: T - 709 },
    // Every instant the step skips comes due at the step.
    { name: "in the skipped interval", steps, db: T + 12_000, real: T },
    { name: "the skipped interval's end", steps, db: T + 19_999, real: T },
    // While the step lasts the database reads 20 s ahead.
    { name: "read while the step lasted", steps, db: T + 25_000, real: T + 5_000 },
    // The step back re-lives (T + 10 s, T + 30 s]: those instants came due the first time round.
    { name: "re-lived after the step back", steps, db: T + 22_000, real: T + 2_000 },
    { name: "read for the first time after the step back", steps, db: T + 31_000, real: T + 31_000 },
    // A step back alone: the re-lived instants came due before it.
    { name: "a step back alone", steps: [{ at: T, stepMs: -20_000, dbBefore: T, dbAfter: T - 20_000 }], db: T - 5_000, real: T - 5_000 },
    { name: "after a step back alone", steps: [{ at: T, stepMs: -20_000, dbBefore: T, dbAfter: T - 20_000 }], db: T + 1_000, real: T + 21_000 },
  ])("$name", ({ steps: s, db, real }) => {
    expect(firstReachedAt(s, db)).toBe(real);
  });
});

describe("nothingDueMs: the part of a window in which a clock step back left nothing new due", () => {
  // The window of the 30-minute run's silenced worker: silence from S, judged for 12 s; the
  // database clock stepped back by 20 s 0.7 s after S, so until S + 20.7 s nothing new came due.
  const S = Date.parse("2026-12-05T08:38:59.100Z");
  const back = { at: S + 700, stepMs: -20_000, dbBefore: S + 20_700, dbAfter: S + 700 };
  it.each([
    { name: "no step", steps: [], ms: 0 },
    { name: "a forward step leaves work due", steps: [{ at: S + 700, stepMs: 20_000, dbBefore: S + 700, dbAfter: S + 20_700 }], ms: 0 },
    { name: "a step back inside the window: from it to the window's end", steps: [back], ms: 11_300 },
    { name: "a step back 15 s before: its last 5 s", steps: [{ ...back, at: S - 15_000 }], ms: 5_000 },
    { name: "a step back after the window", steps: [{ ...back, at: S + 12_001 }], ms: 0 },
  ])("$name", ({ steps, ms }) => {
    expect(nothingDueMs(steps, S, S + 12_000)).toBe(ms);
  });
});
