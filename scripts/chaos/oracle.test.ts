import { describe, expect, it } from "vitest";
import { checkSlots, slotsOf, type OracleRun, type OracleSchedule } from "./oracle";
import { checkTimed, type TimedRun, type TimedSchedule } from "./timing-oracle";

const T0 = Date.UTC(2026, 0, 1, 10, 0, 0);
const run = (id: number, at: number, state = "done", extra: Partial<OracleRun> = {}): OracleRun => ({
  id, scheduleId: 1, scheduledFor: at, state, origin: "schedule", skipReason: null, lastError: null, skippedUntil: null, ...extra,
});
const every5: OracleSchedule = { id: 1, name: "e5", everySeconds: 5, createdWindow: [T0 + 100, T0 + 300], optionalWindows: [], finalState: "done" };

describe("chaos oracle", () => {
  it("aligns interval slots to the Unix epoch and reads cron with croner", () => {
    expect(slotsOf({ everySeconds: 15 }, T0 + 1, T0 + 46_000).map((t) => (t - T0) / 1000)).toEqual([15, 30, 45]);
    expect(slotsOf({ cron: "*/20 * * * * *" }, T0, T0 + 40_000).map((t) => (t - T0) / 1000)).toEqual([0, 20, 40]);
  });

  it("finds missing, duplicate and off-grid slots", () => {
    const runs = [run(1, T0 + 5000), run(2, T0 + 5000), run(3, T0 + 12_000), run(4, T0 + 15_000)];
    const r = checkSlots([every5], runs, T0 + 15_000);
    expect(r.expectedSlots).toBe(3);
    expect(r.missingSlots.map((m) => m.slot)).toEqual([new Date(T0 + 10_000).toISOString()]);
    expect(r.duplicateSlots).toHaveLength(1);
    expect(r.unexpectedSlots.map((u) => u.why)).toEqual(["not on the schedule's timing"]);
  });

  it("lets slots in an optional window be absent and skipped ranges cover their slots", () => {
    const s = { ...every5, optionalWindows: [[T0 + 9000, T0 + 21_000]] as [number, number][] };
    const runs = [run(1, T0 + 5000), run(2, T0 + 25_000), run(3, T0 + 10_000, "skipped", { skippedUntil: T0 + 15_000, skipReason: "paused" })];
    const r = checkSlots([s], runs, T0 + 25_000);
    expect(r.missingSlots).toEqual([]);
    expect(r.duplicateSlots).toEqual([]);
  });
});

describe("chaos oracle: timing edits", () => {
  const s = (sec: number) => T0 + sec * 1000;
  const base: TimedSchedule = {
    id: 7, name: "t", createdWindow: [s(0.1), s(0.3)],
    initial: { everySeconds: 5, catchUp: "all", maxLatenessSeconds: null, enabled: true },
    edits: [], finalState: "done",
  };
  const opts = { cutAt: s(40), boundaryMs: 2000, unsure: [] as [number, number][], slackMs: 500 };
  const r = (sec: number, extra: Partial<TimedRun> = {}): TimedRun => ({
    scheduleId: 7, scheduledFor: s(sec), state: "done", origin: "schedule", skipReason: null, skippedUntil: null, firstStartedAt: s(sec) + 100, ...extra,
  });
  const secs = (list: { slot: string }[]) => list.map((x) => (Date.parse(x.slot) - T0) / 1000);

  // Interval 5 s until an edit acknowledged at 20.2–20.4 s switches to a cron every 3 s.
  const retimed: TimedSchedule = { ...base, edits: [{ window: [s(20.2), s(20.4)], acked: true, change: { cron: "*/3 * * * * *" } }] };
  const right = [5, 10, 15, 21, 24, 27, 30, 33, 36, 39].map((x) => r(x));

  it("follows an acknowledged cron ↔ interval edit: the old timing before it, the new one after", () => {
    const got = checkTimed([retimed], right, opts);
    expect(got.missing).toEqual([]);
    expect(got.unexpected).toEqual([]);
    expect(got.expectedSlots).toBe(10);
  });

  it("fails a wrong expected set: slots that kept the old timing after the edit, and a new slot left out", () => {
    const kept = [5, 10, 15, 20, 25, 30, 35, 40].map((x) => r(x));
    const got = checkTimed([retimed], kept, opts);
    expect(secs(got.unexpected)).toEqual([25, 35, 40]);
    expect(secs(got.missing)).toEqual([21, 24, 27, 33, 36, 39]);
    const dropped = checkTimed([retimed], right.filter((x) => x.scheduledFor !== s(27)), opts);
    expect(secs(dropped.missing)).toEqual([27]);
    // And the oracle itself is not the product's: an oracle that ignored the edit would pass `kept`.
    expect(checkTimed([base], kept, opts).unexpected).toEqual([]);
  });

  // Paused at 10.1–10.2 s, resumed at 30.1–30.2 s: 15 and 20 had their successor due before the resume.
  const pausedWith = (catchUp: "skip" | "latest" | "all", maxLatenessSeconds: number | null = null): TimedSchedule => ({
    ...base,
    initial: { ...base.initial, catchUp, maxLatenessSeconds },
    edits: [
      { window: [s(10.1), s(10.2)], acked: true, change: { enabled: false } },
      { window: [s(30.1), s(30.2)], acked: true, change: { enabled: true } },
    ],
  });
  const around = [5, 10, 25, 30, 35, 40].map((x) => r(x));

  it("holds a pause to its catch-up policy: skip records the missed slots, latest coalesces them, all runs them", () => {
    const skipped = (reason: string) => [...around, r(15, { state: "skipped", skipReason: reason, skippedUntil: s(20), firstStartedAt: null })];
    expect(checkTimed([pausedWith("skip")], skipped("missed"), opts).policyViolations).toEqual([]);
    expect(checkTimed([pausedWith("latest")], skipped("coalesced"), opts).policyViolations).toEqual([]);
    const ranAll = [...around, r(15, { origin: "catch_up" }), r(20, { origin: "catch_up" })];
    const all = checkTimed([pausedWith("all")], ranAll, opts);
    expect(all.policyViolations).toEqual([]);
    expect(all.fatesJudged).toBe(2);
    expect(all.missing).toEqual([]);
  });

  it("fails a wrong expected set for each policy", () => {
    const ranAll = [...around, r(15, { origin: "catch_up" }), r(20, { origin: "catch_up" })];
    expect(checkTimed([pausedWith("skip")], ranAll, opts).policyViolations.map((v) => v.expected)).toEqual(["missed", "missed"]);
    expect(checkTimed([pausedWith("latest")], ranAll, opts).policyViolations.map((v) => v.expected)).toEqual(["coalesced", "coalesced"]);
    const skipped = [...around, r(15, { state: "skipped", skipReason: "missed", skippedUntil: s(20), firstStartedAt: null })];
    expect(checkTimed([pausedWith("all")], skipped, opts).policyViolations.map((v) => v.expected)).toEqual(["ran", "ran"]);
    // Missing altogether is missing, whatever the policy.
    expect(secs(checkTimed([pausedWith("skip")], around, opts).missing)).toEqual([15, 20]);
  });

  it("holds max lateness: slots older than it at the resume are too late, and no first attempt starts later than it", () => {
    const tooLate = [...around, r(15, { state: "skipped", skipReason: "too_late", skippedUntil: s(20), firstStartedAt: null })];
    const ok = checkTimed([pausedWith("all", 6)], tooLate, opts);
    expect(ok.policyViolations).toEqual([]);
    expect(ok.tooLateStarts).toEqual([]);
    const ranAll = [...around, r(15, { origin: "catch_up", firstStartedAt: s(30.5) }), r(20, { origin: "catch_up", firstStartedAt: s(30.5) })];
    const bad = checkTimed([pausedWith("all", 6)], ranAll, opts);
    expect(bad.policyViolations.map((v) => v.expected)).toEqual(["too_late", "too_late"]);
    expect(secs(bad.tooLateStarts)).toEqual([15, 20]);
    // A max lateness edit applies from its acknowledgement: a run late by 7 s before it is fine.
    const edited: TimedSchedule = { ...base, edits: [{ window: [s(20.2), s(20.4)], acked: true, change: { maxLatenessSeconds: 6 } }] };
    const late = [5, 10, 15, 20, 25, 30, 35, 40].map((x) => r(x, { firstStartedAt: s(x + 7) }));
    expect(secs(checkTimed([edited], late, opts).tooLateStarts)).toEqual([25, 30, 35, 40]);
  });

  it("judges a slot still waiting when catchUp is edited by either policy, and no other", () => {
    // skip until an edit acknowledged at 20.2–20.4 s switches to latest: the slot of 15 s, waiting
    // past its successor when the edit committed, is coalesced by the claim under the new policy.
    const edited: TimedSchedule = { ...base, initial: { ...base.initial, catchUp: "skip" }, edits: [{ window: [s(20.2), s(20.4)], acked: true, change: { catchUp: "latest" } }] };
    const rows = (reason: string) => [5, 10, 20, 25, 30, 35, 40].map((x) => r(x)).concat(r(15, { state: "skipped", skipReason: reason, firstStartedAt: null }));
    expect(checkTimed([edited], rows("coalesced"), opts).wrongFinalState).toEqual([]);
    expect(checkTimed([edited], rows("missed"), opts).wrongFinalState).toEqual([]);
    // Neither policy ever gives too_late (no max lateness), and without the edit coalesced is wrong.
    expect(secs(checkTimed([edited], rows("too_late"), opts).wrongFinalState)).toEqual([15]);
    expect(secs(checkTimed([{ ...edited, edits: [] }], rows("coalesced"), opts).wrongFinalState)).toEqual([15]);
  });

  it("accepts a slot of schedule time lived twice on the timing of either pass, and no other", () => {
    // The 30-minute run's case: the clock stepped +20 s, then back, so database times 16–40 s were
    // lived twice. In the first pass an edit at 30.4 s switched to every 2 s and the slot of 38 s
    // ran; in the second, an edit at 18 s switched to a cron every 3 s, which has no slot at 38 s.
    const stepped: TimedSchedule = {
      ...base,
      edits: [
        { window: [s(30.4), s(30.5)], acked: true, change: { everySeconds: 2 } },
        { window: [s(18), s(18.1)], acked: true, change: { cron: "*/3 * * * * *" } },
      ],
    };
    const unsure = { ...opts, unsure: [[s(16), s(40)]] as [number, number][] };
    expect(checkTimed([stepped], [r(5), r(10), r(15), r(38)], unsure).unexpected).toEqual([]);
    // Off every timing the schedule had there: unexpected, and so is the same slot outside a step.
    expect(secs(checkTimed([stepped], [r(5), r(10), r(15), r(37)], unsure).unexpected)).toEqual([37]);
    expect(secs(checkTimed([stepped], [r(5), r(10), r(15), r(38)], opts).unexpected)).toEqual([38]);
  });

  // Every 2 s until an edit acknowledged at 23.6–23.8 s switches to every 3 s (slack 1 s: the old
  // grid reaches 24.8 s, the new one starts at 24 s, a slot of both).
  const twoToThree: TimedSchedule = { ...base, initial: { ...base.initial, everySeconds: 2 }, edits: [{ window: [s(23.6), s(23.8)], acked: true, change: { everySeconds: 3 } }] };
  const beforeEdit = [2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22].map((x) => r(x));
  const wide = { ...opts, slackMs: 1000 };

  it("counts a row inside a skipped range as a second row for its slot", () => {
    const range = r(10, { state: "skipped", skipReason: "missed", skippedUntil: s(14), firstStartedAt: null });
    const rows = [...beforeEdit.filter((x) => x.scheduledFor < s(10) || x.scheduledFor > s(14)), range, r(24), r(27), r(30)];
    expect(checkTimed([twoToThree], rows, wide).duplicate).toEqual([]);
    expect(secs(checkTimed([twoToThree], [...rows, r(12)], wide).duplicate)).toEqual([12]);
  });

  it("expands a range on the grid it was written on when two grids meet at an edit", () => {
    // The new timing's range 24..33 s (24, 27, 30, 33) starts on both grids; on the old one it
    // would read 24, 26, …, 32 and hide the second row at 27.
    const range = r(24, { state: "skipped", skipReason: "missed", skippedUntil: s(33), firstStartedAt: null });
    const got = checkTimed([twoToThree], [...beforeEdit, range, r(27), r(36), r(39)], wide);
    expect(secs(got.duplicate)).toEqual([27]);
  });

  it("stops judging a schedule after a change that was never acknowledged", () => {
    const unknown: TimedSchedule = { ...base, edits: [{ window: [s(20.2), s(26)], acked: false, change: { everySeconds: 3 } }] };
    const got = checkTimed([unknown], [5, 10, 15, 21, 24, 27].map((x) => r(x)), opts);
    expect(got.unknownFrom).toHaveLength(1);
    expect(got.missing).toEqual([]);
    expect(got.unexpected).toEqual([]);
  });
});
