// planSlots with jitter, against a brute-force oracle: enumerate every slot of an interval schedule
// (k × every after the epoch), give each its due time (slot + jitterOffsetMs, the definition of a
// slot's due time), and decide each one by the catch-up rule restated here. The planner's compact
// ranges and its "surely missed whatever the jitter" shortcuts must agree with that slot by slot.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CatchUpPolicy } from "../db/schema";
import { planSlots } from "./catch-up";
import { jitterOffsetMs } from "./jitter";

const GRACE_S = 30;
const HORIZON_S = 120;
const T0 = Date.parse("2024-03-01T10:00:00Z");

type Fate = string;

function oracle(o: { id: number; every: number; jitter: number; policy: CatchUpPolicy; maxLateness: number | null; first: number; now: number }): Map<number, Fate> {
  const p = o.every * 1000;
  const due = (s: number) => s + jitterOffsetMs(o.id, new Date(s), o.jitter);
  const slots: number[] = [];
  for (let s = o.first; s <= o.now + HORIZON_S * 1000; s += p) slots.push(s);
  const dueNow = slots.filter((s) => due(s) <= o.now);
  const newest = dueNow.length ? Math.max(...dueNow) : null;
  const out = new Map<number, Fate>();
  for (const s of slots) {
    const d = due(s);
    if (d > o.now) {
      out.set(s, "run/schedule");
      continue;
    }
    const missed = due(s + p) <= o.now || d < o.now - GRACE_S * 1000;
    if (o.maxLateness !== null && d < o.now - o.maxLateness * 1000) out.set(s, "too_late");
    else if (!missed) out.set(s, "run/schedule");
    else if (o.policy === "all") out.set(s, "run/catch_up");
    else if (o.policy === "skip") out.set(s, "missed");
    else if (s === newest) out.set(s, "run/catch_up");
    else out.set(s, `coalesced→${newest}`);
  }
  return out;
}

describe("planSlots with jitter agrees with the rule applied slot by slot", () => {
  it("for intervals of 1-600 s, jitter up to twice the interval, outages up to 2,000 slots, every policy", () => {
    fc.assert(
      fc.property(
        fc.record({
          id: fc.integer({ min: 1, max: 1_000_000 }),
          every: fc.constantFrom(1, 2, 4, 10, 60, 300, 600),
          jitterShare: fc.constantFrom(0, 0.3, 1, 2),
          policy: fc.constantFrom<CatchUpPolicy>("skip", "latest", "all"),
          maxLateness: fc.option(fc.integer({ min: 1, max: 7200 }), { nil: null }),
          outageSlots: fc.integer({ min: 0, max: 2_000 }),
          offsetMs: fc.integer({ min: 0, max: 999 }),
        }),
        (c) => {
          const jitter = Math.floor(c.every * c.jitterShare);
          const first = Math.ceil(T0 / (c.every * 1000)) * c.every * 1000;
          const now = T0 + c.outageSlots * c.every * 1000 + c.offsetMs;
          const plan = planSlots(
            { id: c.id, cron: null, everySeconds: c.every, timezone: "UTC", catchUp: c.policy, maxLatenessSeconds: c.maxLateness, jitterSeconds: jitter, nextSlotAt: new Date(first) },
            { now: new Date(now), horizonSeconds: HORIZON_S, graceSeconds: GRACE_S, maxSlots: 100_000 },
          );
          const seen = new Map<number, Fate>();
          for (const r of plan.runs) seen.set(r.scheduledFor.getTime(), `run/${r.origin}`);
          for (const k of plan.skips) {
            const fate = k.reason === "coalesced" ? `coalesced→${k.coalescedInto?.getTime()}` : k.reason;
            let n = 0;
            for (let s = k.scheduledFor.getTime(); s <= k.skippedUntil.getTime(); s += c.every * 1000, n++) {
              expect(seen.has(s), `slot ${s} planned once`).toBe(false);
              seen.set(s, fate);
            }
            expect(k.skippedCount).toBe(n);
          }
          const want = oracle({ id: c.id, every: c.every, jitter, policy: c.policy, maxLateness: c.maxLateness, first, now });
          const sorted = (m: Map<number, Fate>) => [...m].sort((a, b) => a[0] - b[0]);
          expect(sorted(seen)).toEqual(sorted(want));
        },
      ),
      { numRuns: 200 },
    );
  }, 120_000);
});
