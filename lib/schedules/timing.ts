/**
 * One interface over the two kinds of timing a schedule can have.
 *
 * - Cron: slots are the instants defined in ./cron.ts (wall time in an IANA zone, Vixie DST rule).
 * - Interval: slot k is at k * everySeconds seconds after the Unix epoch, so every 300 s fires
 *   at :00, :05, ... in UTC whatever the zone, and never drifts.
 *
 * Slots are a fixed set of instants; every function here is a question about that set. Callers
 * must advance from the stored slot time (nextSlot(timing, slot)), never from when a run
 * finished, or the schedule would drift by the run's duration.
 */
import { nextCronSlot } from "./cron";
import { SCHEDULE_DEFAULTS } from "./defaults";

export type Timing =
  | { cron: string; timezone: string; everySeconds?: null }
  | { everySeconds: number; cron?: null; timezone?: string };

function periodMs(timing: Timing): number | null {
  const every = timing.everySeconds;
  if (every === undefined || every === null) return null;
  if (!Number.isInteger(every) || every < 1) throw new RangeError(`everySeconds must be an integer >= 1, got ${every}`);
  return every * 1000;
}

function cronSpec(timing: Timing): { cron: string; timezone: string } {
  if (typeof timing.cron !== "string") throw new TypeError("Timing needs either cron or everySeconds");
  return { cron: timing.cron, timezone: timing.timezone ?? SCHEDULE_DEFAULTS.timezone };
}

function ms(d: Date): number {
  const t = d.getTime();
  if (Number.isNaN(t)) throw new RangeError("Invalid date");
  return t;
}

/** The first slot strictly after `after`, or null if the cron expression never fires again. */
export function nextSlot(timing: Timing, after: Date): Date | null {
  const period = periodMs(timing);
  if (period === null) return nextCronSlot(cronSpec(timing), after);
  return new Date((Math.floor(ms(after) / period) + 1) * period);
}

export function firstSlotAtOrAfter(timing: Timing, at: Date): Date | null {
  return nextSlot(timing, new Date(ms(at) - 1));
}

/** Slots in [fromInclusive, toExclusive), ascending, at most `limit` of them. */
export function slotsBetween(timing: Timing, fromInclusive: Date, toExclusive: Date, limit: number): Date[] {
  const out: Date[] = [];
  const end = ms(toExclusive);
  let slot = firstSlotAtOrAfter(timing, fromInclusive);
  while (slot && slot.getTime() < end && out.length < limit) {
    out.push(slot);
    slot = nextSlot(timing, slot);
  }
  return out;
}

/** The next `n` slots after `after` (for previews). */
export function nextSlots(timing: Timing, after: Date, n: number): Date[] {
  const out: Date[] = [];
  let slot = nextSlot(timing, after);
  while (slot && out.length < n) {
    out.push(slot);
    slot = nextSlot(timing, slot);
  }
  return out;
}

/**
 * The latest slot in [notBefore, before), or null. Intervals: arithmetic. Cron: look back in
 * windows growing 8x until one holds a slot, then bisect inside it, so a schedule that was
 * paused for years costs a few dozen nextSlot calls, not one per missed slot.
 */
export function lastSlotBefore(timing: Timing, before: Date, notBefore: Date): Date | null {
  const end = ms(before);
  const floor = ms(notBefore);
  if (floor >= end) return null;
  const period = periodMs(timing);
  if (period !== null) {
    const slot = (Math.ceil(end / period) - 1) * period;
    return slot >= floor ? new Date(slot) : null;
  }
  for (let window = 60_000; ; window *= 8) {
    const lo = Math.max(floor, end - window);
    const first = firstSlotAtOrAfter(timing, new Date(lo));
    if (first && first.getTime() < end) return latestSlotFrom(timing, first.getTime(), end);
    if (lo === floor) return null;
  }
}

/** `best` is a slot < end; find the last slot < end. Bisects on "is there a slot in [mid, hi)". */
function latestSlotFrom(timing: Timing, best: number, end: number): Date {
  let hi = end; // no slot in [hi, end)
  for (;;) {
    const next = nextSlot(timing, new Date(best));
    if (!next || next.getTime() >= hi) return new Date(best);
    best = next.getTime();
    const mid = best + Math.floor((hi - best) / 2);
    const probe = firstSlotAtOrAfter(timing, new Date(mid));
    if (probe && probe.getTime() < hi) best = probe.getTime();
    else hi = mid;
  }
}

/**
 * Number of slots in [fromInclusive, toExclusive). Intervals: exact arithmetic (the count may
 * exceed `cap`). Cron: enumerates; when there are more than `cap`, returns { count: cap, exact: false }.
 */
export function countSlotsBetween(
  timing: Timing,
  fromInclusive: Date,
  toExclusive: Date,
  cap: number,
): { count: number; exact: boolean } {
  const from = ms(fromInclusive);
  const to = ms(toExclusive);
  if (to <= from) return { count: 0, exact: true };
  const period = periodMs(timing);
  if (period !== null) return { count: Math.ceil(to / period) - Math.ceil(from / period), exact: true };
  const found = slotsBetween(timing, fromInclusive, toExclusive, cap + 1).length;
  return found > cap ? { count: cap, exact: false } : { count: found, exact: true };
}

/**
 * Seconds between the first slot at or after `around` and the slot after it (used to call a
 * schedule late after two of its intervals). Falls back to the last gap before `around`;
 * Infinity when the expression never fires.
 */
export function typicalGapSeconds(timing: Timing, around: Date): number {
  const period = periodMs(timing);
  if (period !== null) return period / 1000;
  const first = firstSlotAtOrAfter(timing, around);
  const second = first && nextSlot(timing, first);
  if (first && second) return (second.getTime() - first.getTime()) / 1000;
  const last = lastSlotBefore(timing, around, new Date(ms(around) - 10 * 366 * 86_400_000));
  const prev = last && lastSlotBefore(timing, last, new Date(last.getTime() - 10 * 366 * 86_400_000));
  return last && prev ? (last.getTime() - prev.getTime()) / 1000 : Number.POSITIVE_INFINITY;
}
