import { describe, expect, it } from "vitest";
import { slotFate, type RuleContext } from "./missed";

const t = (hms: string) => Date.parse(`2024-03-01T${hms}Z`);
const rule = (o: Partial<RuleContext> = {}): RuleContext => ({ nowMs: t("10:00:45"), graceMs: 30_000, policy: "skip", maxLatenessSeconds: null, ...o });

describe("slotFate, the one catch-up rule", () => {
  it("a slot whose successor is due is missed, however young; one whose successor is not due is on time within the grace", () => {
    // Every 4 s, found at 10:00:45: 10:00:40's successor (10:00:44) is due; 10:00:44's (10:00:48) is not.
    expect(slotFate({ dueMs: t("10:00:40"), successorDueMs: t("10:00:44"), newestDue: false }, rule())).toBe("missed");
    expect(slotFate({ dueMs: t("10:00:44"), successorDueMs: t("10:00:48"), newestDue: true }, rule())).toBe("run");
    // A successor due at exactly now counts as due.
    expect(slotFate({ dueMs: t("10:00:41"), successorDueMs: t("10:00:45"), newestDue: false }, rule())).toBe("missed");
  });

  it("older than the grace is missed; exactly the grace is not", () => {
    expect(slotFate({ dueMs: t("10:00:15"), successorDueMs: t("10:15:00"), newestDue: true }, rule())).toBe("run");
    expect(slotFate({ dueMs: t("10:00:14.999"), successorDueMs: t("10:15:00"), newestDue: true }, rule())).toBe("missed");
  });

  it("latest runs the newest due slot (catch_up when it was missed) and coalesces the rest; all runs each; max lateness wins", () => {
    const old = { dueMs: t("10:00:00"), successorDueMs: t("10:00:04"), newestDue: false };
    const newestMissed = { dueMs: t("10:00:05"), successorDueMs: t("10:15:05"), newestDue: true };
    expect(slotFate(old, rule({ policy: "latest" }))).toBe("coalesced");
    expect(slotFate(newestMissed, rule({ policy: "latest" }))).toBe("catch_up");
    expect(slotFate(old, rule({ policy: "all" }))).toBe("catch_up");
    expect(slotFate(old, rule({ policy: "all", maxLatenessSeconds: 44 }))).toBe("too_late");
    expect(slotFate(old, rule({ policy: "all", maxLatenessSeconds: 45 }))).toBe("catch_up");
  });

  it("a slot not due yet is an ordinary run, whatever its successor (jitter can put the successor first)", () => {
    expect(slotFate({ dueMs: t("10:00:50"), successorDueMs: t("10:00:44"), newestDue: false }, rule({ policy: "latest" }))).toBe("run");
  });
});
