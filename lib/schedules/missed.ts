/**
 * The catch-up rule, stated once. The tick's planner (lib/schedules/catch-up.ts, for slots it
 * writes for the first time) and the lateness pass (lib/runs/lateness-pass.ts, for slots written
 * as pending before an outage and never attempted) both decide with `slotFate`; nothing else
 * decides whether a slot was missed. Pure: `nowMs` is sk_now() as the caller's statement read it
 * (promise: one clock decides).
 *
 * A never-attempted slot that is due (slot + jitter <= now) when Slotkeeper finds it unclaimed is
 * MISSED when
 * - a later slot of the same schedule is already due (its successor's due time <= now), or
 * - it is older than the catch-up grace (due < now - SLOTKEEPER_CATCH_UP_GRACE_SECONDS),
 * whichever comes first. So the effective grace is min(grace, the gap to the next slot): 30 s for
 * a 15-minute job, 4 s for a job every 4 s, and for cron the gap to its next slot, which may be
 * 23 or 25 hours across a DST change. Then, by policy:
 * - `skip`: missed slots do not run (skipped, reason `missed`);
 * - `latest`: missed slots are coalesced into the NEWEST DUE slot of the schedule, which runs
 *   (origin `catch_up` when it was itself missed), so an outage of any length ends in one run;
 * - `all`: every missed slot runs (origin `catch_up`).
 * Max lateness overrides all three: a due slot older than `maxLatenessSeconds` never runs
 * (`too_late`). Retries, manual and backfill runs are never judged: callers pass only slots.
 *
 * Worked examples (grace 30 s, no jitter):
 * - every 4 s, the product down 10:00:01–10:00:45, found at 10:00:45: 10:00:04 … 10:00:40 are
 *   missed (each one's successor is due); 10:00:44 is due, its successor 10:00:48 is not, and it
 *   is 1 s old: on time. skip → 10 missed, 10:00:44 runs; latest → 10 coalesced into 10:00:44,
 *   which runs; all → 11 runs.
 * - every 15 min, outage 10:02–10:52: 10:15 and 10:30 are missed (successor due), 10:45 is missed
 *   (7 min > 30 s). skip → 0 runs; latest → 10:45 runs (catch_up), 10:15–10:30 coalesced; all → 3.
 * - every 5 min, outage 10:02–10:42, max lateness 20 min, all: 10:05 … 10:40 are missed (8); the
 *   4 older than 10:22 are too late, the newest 4 run.
 */
import type { CatchUpPolicy } from "../db/schema";

/** What the rule needs to know about one due slot. */
export type JudgedSlot = {
  /** The slot's due time (slot + jitter), epoch ms. */
  dueMs: number;
  /** The due time of the schedule's next slot after it, epoch ms; null when it has none. */
  successorDueMs: number | null;
  /** Whether this is the newest due slot of its schedule (only `latest` asks). */
  newestDue: boolean;
};

/** The rule's other inputs: the clock, the grace and the schedule's policy. */
export type RuleContext = {
  /** sk_now(), epoch ms. */
  nowMs: number;
  /** SLOTKEEPER_CATCH_UP_GRACE_SECONDS in ms. */
  graceMs: number;
  policy: CatchUpPolicy;
  maxLatenessSeconds: number | null;
};

/**
 * What becomes of a slot: `run` (on time, or not due yet: an ordinary run), `catch_up` (missed but
 * runs), or skipped as `missed`, `coalesced` (into the newest due slot) or `too_late`.
 */
export type SlotFate = "run" | "catch_up" | "missed" | "coalesced" | "too_late";

/** True when a due slot's due time is older than max lateness. */
export function isTooLate(dueMs: number, nowMs: number, maxLatenessSeconds: number | null): boolean {
  return maxLatenessSeconds !== null && dueMs < nowMs - maxLatenessSeconds * 1000;
}

/** True when a due slot first found unclaimed at `nowMs` was missed (see the module comment). */
export function isMissed(slot: Pick<JudgedSlot, "dueMs" | "successorDueMs">, nowMs: number, graceMs: number): boolean {
  if (slot.dueMs > nowMs) return false;
  return (slot.successorDueMs !== null && slot.successorDueMs <= nowMs) || slot.dueMs < nowMs - graceMs;
}

/**
 * The fate of one never-attempted slot found unclaimed at `c.nowMs`.
 *
 * slotFate({ dueMs: t(10,15), successorDueMs: t(10,30), newestDue: false }, { nowMs: t(10,52), graceMs: 30_000, policy: "latest", maxLatenessSeconds: null }) === "coalesced"
 * slotFate({ dueMs: t(10,45), successorDueMs: t(11,0), newestDue: true }, same) === "catch_up"
 */
export function slotFate(slot: JudgedSlot, c: RuleContext): SlotFate {
  if (slot.dueMs > c.nowMs) return "run";
  if (isTooLate(slot.dueMs, c.nowMs, c.maxLatenessSeconds)) return "too_late";
  if (!isMissed(slot, c.nowMs, c.graceMs)) return "run";
  if (c.policy === "all") return "catch_up";
  if (c.policy === "skip") return "missed";
  return slot.newestDue ? "catch_up" : "coalesced";
}
