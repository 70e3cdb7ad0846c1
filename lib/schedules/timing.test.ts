import { describe, it, expect } from "vitest";
import fc from "fast-check";
import {
  countSlotsBetween,
  firstSlotAtOrAfter,
  lastSlotBefore,
  nextSlot,
  nextSlots,
  slotsBetween,
  typicalGapSeconds,
  type Timing,
} from "./timing";

const HOUR = 3_600_000;
const iso = (d: Date | null) => d?.toISOString() ?? null;

/** Every slot in [from, to), one nextSlot call at a time. */
function enumerate(timing: Timing, from: number, to: number): number[] {
  const out: number[] = [];
  for (let s = nextSlot(timing, new Date(from - 1)); s && s.getTime() < to; s = nextSlot(timing, s)) out.push(s.getTime());
  return out;
}

describe("slot-from-slot scheduling", () => {
  it("1,000 hours of an hourly schedule never drift", () => {
    const hourly: Timing = { cron: "0 * * * *", timezone: "Europe/London" };
    let slot = new Date("2026-03-01T00:00:00Z");
    for (let i = 1; i <= 1000; i++) {
      // A run that took 17 minutes finishes late; the next slot still comes from the slot.
      const finishedAt = new Date(slot.getTime() + 17 * 60_000 + 123);
      expect(finishedAt.getTime()).toBeGreaterThan(slot.getTime());
      const next = nextSlot(hourly, slot)!;
      expect(next.getTime() - slot.getTime()).toBe(HOUR); // also across the 29 March shift
      expect(next.getTime() % HOUR).toBe(0);
      slot = next;
    }
    expect(slot.toISOString()).toBe(new Date(Date.parse("2026-03-01T00:00:00Z") + 1000 * HOUR).toISOString());
  });

  it("intervals are aligned to the Unix epoch, whatever the zone", () => {
    const every5m: Timing = { everySeconds: 300, timezone: "Asia/Kolkata" };
    expect(iso(nextSlot(every5m, new Date("2026-05-05T10:02:31.500Z")))).toBe("2026-05-05T10:05:00.000Z");
    expect(iso(nextSlot(every5m, new Date("2026-05-05T10:05:00.000Z")))).toBe("2026-05-05T10:10:00.000Z");
    expect(iso(firstSlotAtOrAfter(every5m, new Date("2026-05-05T10:05:00.000Z")))).toBe("2026-05-05T10:05:00.000Z");
    const every7s: Timing = { everySeconds: 7 };
    let slot = nextSlot(every7s, new Date("2026-01-01T00:00:00Z"))!;
    for (let i = 0; i < 1000; i++) {
      expect(slot.getTime() % 7000).toBe(0);
      slot = nextSlot(every7s, slot)!;
    }
    expect(iso(nextSlot({ everySeconds: 86_400 }, new Date(0)))).toBe("1970-01-02T00:00:00.000Z");
  });

  it("rejects non-integer or non-positive intervals", () => {
    expect(() => nextSlot({ everySeconds: 0 }, new Date())).toThrow(RangeError);
    expect(() => nextSlot({ everySeconds: 1.5 }, new Date())).toThrow(RangeError);
  });

  it("nextSlots previews the next n slots", () => {
    const slots = nextSlots({ cron: "30 2 * * *", timezone: "America/New_York" }, new Date("2026-03-07T00:00:00Z"), 3);
    expect(slots.map((d) => d.toISOString())).toEqual([
      "2026-03-07T07:30:00.000Z",
      "2026-03-08T07:00:00.000Z",
      "2026-03-09T06:30:00.000Z",
    ]);
    expect(nextSlots({ cron: "0 0 30 2 *", timezone: "UTC" }, new Date(), 3)).toEqual([]);
  });
});

describe("slotsBetween", () => {
  it("respects the half-open range and the limit", () => {
    const t: Timing = { cron: "*/15 * * * *", timezone: "UTC" };
    const from = new Date("2026-01-01T00:00:00Z");
    const to = new Date("2026-01-01T01:00:00Z");
    expect(slotsBetween(t, from, to, 100).map((d) => d.toISOString().slice(11, 16))).toEqual(["00:00", "00:15", "00:30", "00:45"]);
    expect(slotsBetween(t, from, to, 2)).toHaveLength(2);
    expect(slotsBetween(t, from, to, 0)).toEqual([]);
    expect(slotsBetween({ everySeconds: 60 }, from, new Date(from.getTime() + 10 * 60_000), 1000)).toHaveLength(10);
  });
});

const timings: Timing[] = [
  { everySeconds: 1 },
  { everySeconds: 60 },
  { everySeconds: 3600 },
  { everySeconds: 7 * 86_400 },
  { everySeconds: 97 },
  { cron: "*/5 * * * *", timezone: "UTC" },
  { cron: "0 * * * *", timezone: "America/New_York" },
  { cron: "30 1 * * *", timezone: "America/New_York" },
  { cron: "*/15 2 * * *", timezone: "Europe/London" },
  { cron: "0 9 * * 1-5", timezone: "Europe/London" },
  { cron: "15 10 * * * *", timezone: "Australia/Lord_Howe" },
  { cron: "0 0 1,15 * *", timezone: "America/Santiago" },
];

// Ranges of up to 3 days inside 2026, including the DST transitions.
const range = fc
  .tuple(
    fc.integer({ min: Date.parse("2026-01-01T00:00:00Z"), max: Date.parse("2026-12-28T00:00:00Z") }),
    fc.integer({ min: 0, max: 3 * 24 * HOUR }),
  )
  .map(([from, len]) => [from, from + len] as const);
const nearDst = fc
  .tuple(fc.constantFrom(Date.parse("2026-03-08T07:00:00Z"), Date.parse("2026-10-25T01:00:00Z")), fc.integer({ min: -12 * HOUR, max: 12 * HOUR }), fc.integer({ min: 0, max: 12 * HOUR }))
  .map(([tr, shift, len]) => [tr + shift, tr + shift + len] as const);

describe("agreement with brute-force enumeration", () => {
  it("lastSlotBefore and countSlotsBetween", () => {
    fc.assert(
      fc.property(fc.constantFrom(...timings), fc.oneof(range, nearDst), (timing, [from, to]) => {
        // everySeconds: 1 over days is 250k slots; brute-force a shorter tail of the range.
        const lo = "everySeconds" in timing && timing.everySeconds === 1 ? Math.max(from, to - 2 * HOUR) : from;
        const all = enumerate(timing, lo, to);
        const last = lastSlotBefore(timing, new Date(to), new Date(lo));
        expect(last?.getTime() ?? null).toBe(all.length ? all[all.length - 1] : null);
        expect(countSlotsBetween(timing, new Date(lo), new Date(to), 1_000_000)).toEqual({ count: all.length, exact: true });
        if (all.length > 3) {
          expect(countSlotsBetween(timing, new Date(lo), new Date(to), 3)).toEqual(
            "cron" in timing && timing.cron ? { count: 3, exact: false } : { count: all.length, exact: true },
          );
        }
        expect(slotsBetween(timing, new Date(lo), new Date(to), 5).map((d) => d.getTime())).toEqual(all.slice(0, 5));
      }),
      { numRuns: 300 },
    );
  }, 60_000);

  it("lastSlotBefore finds old slots without enumerating them", () => {
    const yearly: Timing = { cron: "0 0 1 1 *", timezone: "Europe/London" };
    const before = new Date("2026-06-01T00:00:00Z");
    expect(iso(lastSlotBefore(yearly, before, new Date("2000-01-01T00:00:00Z")))).toBe("2026-01-01T00:00:00.000Z");
    expect(lastSlotBefore(yearly, before, new Date("2026-01-01T00:00:01Z"))).toBeNull();
    const everySecond: Timing = { cron: "* * * * * *", timezone: "America/New_York" };
    expect(iso(lastSlotBefore(everySecond, new Date("2026-06-01T00:00:00.500Z"), new Date("2020-01-01T00:00:00Z")))).toBe(
      "2026-06-01T00:00:00.000Z",
    );
    expect(iso(lastSlotBefore({ everySeconds: 3600 }, new Date("2026-06-01T05:00:00Z"), new Date(0)))).toBe(
      "2026-06-01T04:00:00.000Z",
    );
    expect(lastSlotBefore({ cron: "0 0 30 2 *", timezone: "UTC" }, before, new Date(0))).toBeNull();
  });
});

describe("typicalGapSeconds", () => {
  it("is the interval, or the gap between consecutive cron slots", () => {
    expect(typicalGapSeconds({ everySeconds: 300 }, new Date())).toBe(300);
    expect(typicalGapSeconds({ cron: "*/10 * * * *", timezone: "UTC" }, new Date("2026-01-01T00:03:00Z"))).toBe(600);
    expect(typicalGapSeconds({ cron: "0 9 * * 1-5", timezone: "UTC" }, new Date("2026-01-02T09:00:00Z"))).toBe(3 * 86_400);
    expect(typicalGapSeconds({ cron: "0 0 30 2 *", timezone: "UTC" }, new Date())).toBe(Number.POSITIVE_INFINITY);
  });
});
