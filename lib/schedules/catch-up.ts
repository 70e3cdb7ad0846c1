/**
 * Catch-up planning: what the tick writes for one schedule, as a pure function of (schedule, its
 * stored high-water slot, the database's now). No clock is read here: `now` is sk_now() as the
 * tick's transaction saw it (promise: one clock decides).
 *
 * Every slot from `nextSlotAt` up to now + horizon gets exactly one outcome:
 * - its due time (slot + jitter) is older than now - maxLateness → skipped, reason `too_late`
 *   (any policy);
 * - else older than now - grace → it was MISSED: policy `skip` → skipped `missed`; `latest` →
 *   the newest missed slot runs (origin `catch_up`), the older ones are skipped `coalesced` into
 *   it; `all` → every missed slot runs (origin `catch_up`);
 * - else → a normal pending run (origin `schedule`).
 *
 * Skipped slots are written COMPACTLY: one row per contiguous run of slots with the same reason
 * (scheduled_for = first slot, skipped_until = last slot, skipped_count = how many), so a
 * 1-second schedule after a week's outage writes a handful of rows, not 600,000. Long stretches
 * are never enumerated: their bounds come from lastSlotBefore and countSlotsBetween.
 *
 * Worked example (15-minute job, outage 10:02–10:52, tick at 10:52, grace 30 s, no jitter):
 * slots 10:15, 10:30, 10:45 are missed. skip → one row [10:15..10:45] missed ×3, 0 runs;
 * latest → one row [10:15..10:30] coalesced ×2 into 10:45, plus a catch_up run at 10:45;
 * all → three catch_up runs. 11:00 (inside the horizon) is a normal run in every case.
 */
import type { CatchUpPolicy } from "../db/schema";
import { jitterOffsetMs } from "./jitter";
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

type Range = { first: Date; last: Date; count: number };

/** Plan the rows the tick writes for one schedule and its new high-water mark. */
export function planSlots(s: SlotSchedule, o: PlanOptions): SlotPlan {
  const timing = timingOf(s);
  const jitterMs = s.jitterSeconds * 1000;
  const nowMs = o.now.getTime();
  const horizonEnd = nowMs + o.horizonSeconds * 1000;
  const missedBefore = nowMs - o.graceSeconds * 1000;
  const tooLateBefore = s.maxLatenessSeconds === null ? Number.NEGATIVE_INFINITY : nowMs - s.maxLatenessSeconds * 1000;
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
    runs.push({ scheduledFor: slot, dueAt: new Date(slot.getTime() + jitterOffsetMs(s.id, slot, s.jitterSeconds)), origin });
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
  // Slots whose due time (slot + at most the jitter window) is surely past max lateness: one range.
  const tooLate = rangeBefore(cur, tooLateBefore - jitterMs);
  if (tooLate) {
    addSkip("too_late", tooLate);
    cur = nextSlot(timing, tooLate.last);
  }

  // Missed slots not yet written: a compact range (skip/latest only) plus ones looked at singly.
  let missedRange: Range | null = null;
  let missedSingles: Date[] = [];
  if (cur && s.catchUp !== "all") {
    missedRange = rangeBefore(cur, missedBefore - jitterMs);
    if (missedRange) cur = nextSlot(timing, missedRange.last);
  }
  const flushMissed = () => {
    if (!missedRange && missedSingles.length === 0) return;
    const first = missedRange?.first ?? missedSingles[0];
    const total = (missedRange?.count ?? 0) + missedSingles.length;
    const newest = missedSingles.length ? missedSingles[missedSingles.length - 1] : (missedRange as Range).last;
    if (s.catchUp === "skip") {
      addSkip("missed", { first, last: newest, count: total });
    } else if (total > 1) {
      // latest: everything before the newest missed slot is coalesced into it.
      const secondNewest = missedSingles.length >= 2 ? missedSingles[missedSingles.length - 2]
        : missedSingles.length === 1 ? (missedRange as Range).last
        : (lastSlotBefore(timing, newest, first) as Date);
      addSkip("coalesced", { first, last: secondNewest, count: total - 1 }, newest);
      addRun(newest, "catch_up");
    } else {
      addRun(newest, "catch_up");
    }
    missedRange = null;
    missedSingles = [];
  };

  for (let looked = 0; cur && cur.getTime() <= horizonEnd && looked < o.maxSlots; looked++) {
    const due = cur.getTime() + jitterOffsetMs(s.id, cur, s.jitterSeconds);
    if (due < tooLateBefore) {
      flushMissed();
      addSkip("too_late", { first: cur, last: cur, count: 1 });
    } else if (due < missedBefore) {
      if (s.catchUp === "all") addRun(cur, "catch_up");
      else missedSingles.push(cur);
    } else {
      flushMissed();
      addRun(cur, "schedule");
    }
    cur = nextSlot(timing, cur);
  }
  flushMissed();
  return { runs, skips, nextSlotAt: cur ?? NEVER };
}
