import { describe, expect, it } from "vitest";
import { describeSkip } from "./run-labels";

const base = { state: "skipped" as const, scheduledFor: "2030-01-01T10:15:00Z", skippedUntil: null, skippedCount: null, coalescedInto: null };
const hhmm = (iso: string) => new Date(iso).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });

describe("describeSkip", () => {
  it("says why a slot or a range of slots did not run", () => {
    expect(describeSkip({ ...base, skipReason: "coalesced", skippedUntil: "2030-01-01T10:30:00Z", skippedCount: 2, coalescedInto: "2030-01-01T10:45:00Z" })).toBe(
      `2 slots ${hhmm("2030-01-01T10:15:00Z")}–${hhmm("2030-01-01T10:30:00Z")} coalesced into ${hhmm("2030-01-01T10:45:00Z")}`,
    );
    expect(describeSkip({ ...base, skipReason: "missed" }, "skip")).toBe("missed (catch-up: skip)");
    expect(describeSkip({ ...base, skipReason: "too_late" })).toBe("too late (past max lateness)");
    expect(describeSkip({ ...base, skipReason: "overlap" })).toBe("overlap (previous run still going)");
  });
  it("is null for runs that were not skipped", () => {
    expect(describeSkip({ ...base, state: "done", skipReason: null })).toBeNull();
  });
});
