import { describe, expect, it } from "vitest";
import { planSlots, type SlotSchedule } from "./catch-up";
import { idempotencyKey } from "../runs/idempotency";

const at = (hhmm: string) => new Date(`2024-03-01T${hhmm}:00Z`);
const hm = (d: Date | null) => d?.toISOString().slice(11, 16) ?? null;
const sched = (o: Partial<SlotSchedule>): SlotSchedule => ({
  id: 1, cron: "*/15 * * * *", everySeconds: null, timezone: "UTC", catchUp: "latest", maxLatenessSeconds: null, jitterSeconds: 0, nextSlotAt: at("10:15"), ...o,
});
const opts = { now: at("10:52"), horizonSeconds: 120, graceSeconds: 30, maxSlots: 1000 };

describe("planSlots (15-minute job, outage 10:02–10:52)", () => {
  it("skip: one missed range, no runs", () => {
    const p = planSlots(sched({ catchUp: "skip" }), opts);
    expect(p.runs).toEqual([]);
    expect(p.skips.map((s) => [hm(s.scheduledFor), hm(s.skippedUntil), s.skippedCount, s.reason])).toEqual([["10:15", "10:45", 3, "missed"]]);
    expect(hm(p.nextSlotAt)).toBe("11:00");
  });

  it("latest: 10:45 runs, 10:15–10:30 coalesced into it", () => {
    const p = planSlots(sched({ catchUp: "latest" }), opts);
    expect(p.runs.map((r) => [hm(r.scheduledFor), r.origin])).toEqual([["10:45", "catch_up"]]);
    expect(p.skips.map((s) => [hm(s.scheduledFor), hm(s.skippedUntil), s.skippedCount, hm(s.coalescedInto)])).toEqual([["10:15", "10:30", 2, "10:45"]]);
  });

  it("all: three catch-up runs", () => {
    const p = planSlots(sched({ catchUp: "all" }), opts);
    expect(p.runs.map((r) => hm(r.scheduledFor))).toEqual(["10:15", "10:30", "10:45"]);
    expect(p.skips).toEqual([]);
  });

  it("max lateness wins over every policy", () => {
    const p = planSlots(sched({ catchUp: "all", maxLatenessSeconds: 20 * 60 }), opts);
    expect(p.skips.map((s) => [hm(s.scheduledFor), hm(s.skippedUntil), s.reason])).toEqual([["10:15", "10:30", "too_late"]]);
    expect(p.runs.map((r) => hm(r.scheduledFor))).toEqual(["10:45"]);
  });

  it("a slot inside the grace is not missed; slots inside the horizon are normal runs", () => {
    const p = planSlots(sched({ nextSlotAt: at("11:00") }), { ...opts, now: at("11:00") });
    expect(p.runs.map((r) => [hm(r.scheduledFor), r.origin])).toEqual([["11:00", "schedule"]]);
  });
});

describe("idempotencyKey", () => {
  it("names the schedule id and the slot, or the run for manual runs", () => {
    expect(idempotencyKey(7, new Date("2024-03-01T10:45:00Z"), "schedule")).toBe("sk:7:2024-03-01T10:45:00.000Z");
    expect(idempotencyKey(7, new Date("2024-03-01T10:45:00Z"), "catch_up")).toBe("sk:7:2024-03-01T10:45:00.000Z");
    expect(idempotencyKey(7, new Date(), "manual", 912)).toBe("sk:7:manual:912");
  });
});
