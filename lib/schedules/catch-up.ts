/**
 * Catch-up planning: what the tick writes for one schedule, as a pure function of (schedule, its
 * stored high-water slot, the database's now). No clock is read here: `now` is sk_now() as the
 * tick's transaction saw it (promise: one clock decides).
 *
 * Every slot from `nextSlotAt` up to now + horizon gets exactly one outcome, decided by the one
 * catch-up rule (`slotFate` in ./missed.ts, which the lateness pass uses too): an ordinary run
 * (origin `schedule`), a `catch_up` run, or a skipped row (`missed`, `coalesced` into the newest
 * due slot, `too_late`).
 *
 * Skipped slots are written COMPACTLY: one row per contiguous run of slots with the same reason
 * (scheduled_for = first slot, skipped_until = last slot, skipped_count = how many), so a
 * 1-second schedule after a week's outage writes a handful of rows, not 600,000. Long stretches
 * are never enumerated: the slots the rule surely skips whatever their jitter come as one range
 * (bounds from lastSlotBefore, count from countSlotsBetween); only the last few are judged singly.
 *
 * Worked example (15-minute job, outage 10:02–10:52, tick at 10:52, grace 30 s, no jitter):
 * slots 10:15, 10:30, 10:45 are missed. skip → one row [10:15..10:45] missed ×3, 0 runs;
 * latest → one row [10:15..10:30] coalesced ×2 into 10:45, plus a catch_up run at 10:45;
 * all → three catch_up runs. 11:00 (inside the horizon) is a normal run in every case.
 * Every 4 s, down 10:00:01–10:00:45: latest → one row [10:00:04..10:00:40] coalesced ×10 into
 * 10:00:44, which is on time (a normal run); skip → the same range as missed.
 */
import type { CatchUpPolicy } from "../db/schema";
import { jitterOffsetMs } from "./jitter";
import { slotFate, type SlotFate } from "./missed";
import { countSlotsBetween, lastSlotBefore, nextSlot, type Timing } from "./timing";

/** What the planner needs to know about a schedule. */
export type SlotSchedule = {
  id: number;
  cron: string | null;
  everySeconds: number | null;
  timezone: string;
  catchUp: CatchUpPolicy;
  maxLatenessSeconds: number | null;
  jitterSeconds: number;
  nextSlotAt: Date;
};

export type SkipReasonPlanned = "missed" | "coalesced" | "too_late";
export type PlannedRun = { scheduledFor: Date; dueAt: Date; origin: "schedule" | "catch_up" };
export type PlannedSkip = {
  scheduledFor: Date;
  skippedUntil: Date;
  skippedCount: number;
  reason: SkipReasonPlanned;
  coalescedInto: Date | null;
};
export type SlotPlan = { runs: PlannedRun[]; skips: PlannedSkip[]; nextSlotAt: Date };

export type PlanOptions = {
  /** sk_now() as the tick saw it. */
  now: Date;
  horizonSeconds: number;
  graceSeconds: number;
  /** Bound on slots looked at one by one (a compact range counts as one), so one schedule cannot stall the tick. */
  maxSlots: number;
};

/** next_slot_at for a cron expression that never fires again (e.g. a past one-off date). */
export const NEVER = new Date("9999-12-31T00:00:00.000Z");

/** Above this many slots in one skipped range of a cron schedule, skipped_count is capped (intervals are exact). */
export const SKIPPED_COUNT_CAP = 100_000;

/** The schedule's timing in the shape lib/schedules/timing.ts takes. */
export function timingOf(s: Pick<SlotSchedule, "cron" | "everySeconds" | "timezone">): Timing {
  return s.cron !== null ? { cron: s.cron, timezone: s.timezone } : { everySeconds: s.everySeconds as number };
}

/** A slot's due time: the slot plus its deterministic jitter. */
export function dueAtMs(s: Pick<SlotSchedule, "id" | "jitterSeconds">, slot: Date): number {
  return slot.getTime() + jitterOffsetMs(s.id, slot, s.jitterSeconds);
}

/**
 * The newest slot at or after `from` that is due at `now` (slot + jitter <= now), or null. One
 * look back from the last slot <= now, then at most `maxSteps` steps back past slots whose jitter
 * puts them after now; past that, the last slot surely due (<= now - jitter window) stands in.
 */
export function newestDueSlot(s: Pick<SlotSchedule, "id" | "cron" | "everySeconds" | "timezone" | "jitterSeconds">, from: Date, now: Date, maxSteps = 1000): Date | null {
  const timing = timingOf(s);
  let slot = lastSlotBefore(timing, new Date(now.getTime() + 1), from);
  for (let i = 0; slot && i < maxSteps; i++) {
    if (dueAtMs(s, slot) <= now.getTime()) return slot;
    slot = lastSlotBefore(timing, slot, from);
  }
  return slot && lastSlotBefore(timing, new Date(now.getTime() - s.jitterSeconds * 1000 + 1), from);
}

type Range = { first: Date; last: Date; count: number };

/** Plan the rows the tick writes for one schedule and its new high-water mark. */
export function planSlots(s: SlotSchedule, o: PlanOptions): SlotPlan {
  const timing = timingOf(s);
  const jitterMs = s.jitterSeconds * 1000;
  const nowMs = o.now.getTime();
  const horizonEnd = nowMs + o.horizonSeconds * 1000;
  const rule = { nowMs, graceMs: o.graceSeconds * 1000, policy: s.catchUp, maxLatenessSeconds: s.maxLatenessSeconds };
  const runs: PlannedRun[] = [];
  const skips: PlannedSkip[] = [];
  let lastEmitted: "run" | "skip" | null = null;

  const addSkip = (reason: SkipReasonPlanned, r: Range, into: Date | null = null) => {
    const prev = skips[skips.length - 1];
    if (lastEmitted === "skip" && prev.reason === reason && prev.coalescedInto?.getTime() === into?.getTime()) {
      prev.skippedUntil = r.last;
      prev.skippedCount += r.count;
    } else {
      skips.push({ scheduledFor: r.first, skippedUntil: r.last, skippedCount: r.count, reason, coalescedInto: into });
    }
    lastEmitted = "skip";
  };
  const addRun = (slot: Date, origin: PlannedRun["origin"]) => {
    runs.push({ scheduledFor: slot, dueAt: new Date(dueAtMs(s, slot)), origin });
    lastEmitted = "run";
  };
  /** All slots in [cur, bound) as one range, without enumerating them. */
  const rangeBefore = (cur: Date, bound: number): Range | null => {
    if (cur.getTime() >= bound) return null;
    const last = lastSlotBefore(timing, new Date(bound), cur);
    if (!last) return null;
    const { count } = countSlotsBetween(timing, cur, new Date(last.getTime() + 1), SKIPPED_COUNT_CAP);
    return { first: cur, last, count };
  };

  let cur: Date | null = s.nextSlotAt;
  // `latest` coalesces into the newest due slot: which one it is, known before any is written.
  const newest = s.catchUp === "latest" && cur.getTime() <= nowMs ? newestDueSlot(s, cur, o.now) : null;

  let looked = 0;
  /** Judge `cur` alone, by the rule, with its own jitter and its successor's; returns the successor. */
  const judgeOne = (slot: Date): Date | null => {
    const successor = nextSlot(timing, slot);
    const fate: SlotFate = slotFate(
      { dueMs: dueAtMs(s, slot), successorDueMs: successor ? dueAtMs(s, successor) : null, newestDue: newest !== null && slot.getTime() === newest.getTime() },
      rule,
    );
    if (fate === "run") addRun(slot, "schedule");
    else if (fate === "catch_up") addRun(slot, "catch_up");
    else addSkip(fate, { first: slot, last: slot, count: 1 }, fate === "coalesced" ? newest : null);
    looked++;
    return successor;
  };

  if (s.maxLatenessSeconds !== null) {
    const tooLateBefore = nowMs - s.maxLatenessSeconds * 1000;
    // Slots whose due time (slot + at most the jitter window) is surely past max lateness: one range.
    const tooLate = rangeBefore(cur, tooLateBefore - jitterMs);
    if (tooLate) {
      addSkip("too_late", tooLate);
      cur = nextSlot(timing, tooLate.last);
    }
    // Then the few whose jitter decides (within one jitter window of the limit), one by one.
    while (cur && cur.getTime() < tooLateBefore && looked < o.maxSlots) cur = judgeOne(cur);
  }

  // Slots the rule surely skips, whatever their jitter, as one range (not under `all`, where
  // missed slots run): every slot before the last slot <= now - jitter window has a successor
  // that is due; for `skip`, so is every slot older than grace + jitter window. The newest due
  // slot is never in the range: it is at or after that last slot.
  if (cur && s.catchUp !== "all" && looked < o.maxSlots) {
    const lastSurelyDue = lastSlotBefore(timing, new Date(nowMs - jitterMs + 1), cur);
    let bound = lastSurelyDue ? lastSurelyDue.getTime() : Number.NEGATIVE_INFINITY;
    if (s.catchUp === "skip") bound = Math.max(bound, nowMs - rule.graceMs - jitterMs);
    const missed = rangeBefore(cur, bound);
    if (missed) {
      addSkip(s.catchUp === "skip" ? "missed" : "coalesced", missed, s.catchUp === "skip" ? null : newest);
      cur = nextSlot(timing, missed.last);
    }
  }

  // The rest one by one, up to the horizon.
  while (cur && cur.getTime() <= horizonEnd && looked < o.maxSlots) cur = judgeOne(cur);
  return { runs, skips, nextSlotAt: cur ?? NEVER };
}
