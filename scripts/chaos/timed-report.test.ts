// What the clock steps excuse in the fault suite's lateness checks, worked by hand.
import { describe, expect, it } from "vitest";
import { timedAllowances } from "./timed-report";

const T = Date.parse("2026-12-04T22:16:45.709Z");
// +20 s at T (the database read T before, T + 20 s after), −20 s ten seconds later.
const steps = [
  { at: T, stepMs: 20_000, dbBefore: T, dbAfter: T + 20_000 },
  { at: T + 10_000, stepMs: -20_000, dbBefore: T + 30_000, dbAfter: T + 10_000 },
];
const allow = timedAllowances({ silent: [], silentEvents: [], longTransactions: [], clockSteps: steps, silentMs: 0, hogScheduleIds: [], queryTimeoutMs: 4000 }, 4000, 0);

describe("realLag: start lateness in real time across a forward clock step", () => {
  it.each([
    // Due 709 ms before the step, started 648 ms after it: the database reads 21,357 ms, it waited 1,357.
    { name: "due before the step, started after it", dueAt: T - 709, lag: 21_357, real: 1_357 },
    { name: "due and started before the step", dueAt: T - 3_000, lag: 2_000, real: 2_000 },
    { name: "due and started after the step", dueAt: T + 20_500, lag: 800, real: 800 },
    { name: "due before the step, started 30 s late after it: still late", dueAt: T - 10_000, lag: 50_000, real: 30_000 },
    { name: "no step: as read", dueAt: T + 60_000, lag: 7_000, real: 7_000 },
  ])("$name", ({ dueAt, lag, real }) => {
    expect(allow.realLag(dueAt, lag)).toBe(real);
  });
});
