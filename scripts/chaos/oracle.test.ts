import { describe, expect, it } from "vitest";
import { checkSlots, slotsOf, type OracleRun, type OracleSchedule } from "./oracle";

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
